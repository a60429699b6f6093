"""Android's own command-line tools, answering in Android's own formats.

Each handler takes the phone, the arguments after the command name, stdin and
the file store, and returns a ShellResult; the phone holds its lock while a
handler runs. Errors follow Android: Java shell commands exit 255 with the
exception on stderr, `cmd` with an unknown service exits 20, `monkey` without a
launchable package exits 252.
"""

from __future__ import annotations

from .activity import am, monkey
from .base import Handler
from .capture import screencap, uiautomator
from .devloop import log_command, logcat, pidof, pkill
from .dumpsys import dumpsys
from .input import input_
from .packages import cmd, pm
from .process import kill, ps
from .system import getprop, ime, settings, svc, wm
from .system_services import appops, content

HANDLERS: dict[str, Handler] = {
    "am": am,
    "appops": appops,
    "cmd": cmd,
    "content": content,
    "dumpsys": dumpsys,
    "getprop": getprop,
    "ime": ime,
    "input": input_,
    "kill": kill,
    "log": log_command,
    "logcat": logcat,
    "monkey": monkey,
    "pidof": pidof,
    "pkill": pkill,
    "pm": pm,
    "ps": ps,
    "screencap": screencap,
    "settings": settings,
    "svc": svc,
    "uiautomator": uiautomator,
    "wm": wm,
}
