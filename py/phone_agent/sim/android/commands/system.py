"""`getprop`, `wm`, `ime`, `settings` and `svc`: properties, display, input methods and settings."""

from __future__ import annotations

from ....device.shell_result import ShellResult
from .. import apps
from ..contract import AndroidPhone, FileStore
from ..props import DENSITY, SCREEN_HEIGHT, SCREEN_WIDTH
from .base import fail, ok


def getprop(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    if not args:
        return ok("".join(f"[{k}]: [{v}]\n" for k, v in sorted(phone.props.items())))
    default = args[1] if len(args) > 1 else ""
    return ok(phone.props.get(args[0], default) + "\n")


WM_USAGE = """Window manager (window) commands:
  help
      Print this help text.
  size [reset|WxH|WdpxHdp] [-d DISPLAY_ID]
    Return or override display size.
  density [reset|DENSITY] [-d DISPLAY_ID]
    Return or override display density.
"""


def wm(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    sub, rest = (args[0], [a for a in args[1:] if a not in ("-d", "0")]) if args else ("", [])
    if sub == "size" and not rest:
        return ok(f"Physical size: {SCREEN_WIDTH}x{SCREEN_HEIGHT}\n")
    if sub == "density" and not rest:
        return ok(f"Physical density: {DENSITY}\n")
    if sub in ("size", "density") and rest == ["reset"]:
        return ok()
    if sub in ("size", "density"):
        return fail("Error: the simulated phone does not support display overrides\n", 255)
    if sub in ("", "help", "-h"):
        return ok(WM_USAGE)
    return fail(f"Unknown command: {sub}\n", 255)


IME_USAGE = (
    "ime <command>:\n  list [-a] [-s]\n  enable [--user <USER_ID>] <ID>\n"
    "  disable [--user <USER_ID>] <ID>\n  set [--user <USER_ID>] <ID>\n"
)


def ime(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    known = [apps.GBOARD_IME, apps.ADB_KEYBOARD_IME]
    enabled = [i for i in phone.settings["secure"]["enabled_input_methods"].split(":") if i]
    sub = args[0] if args else ""
    ids = [a for a in args[1:] if not a.startswith("-")]
    if sub == "list":
        shown = known if "-a" in args else enabled
        if "-s" in args:
            return ok("".join(f"{i}\n" for i in shown))
        return ok("".join(f"{i}:\n  mId={i} mSettingsActivityName=null\n" for i in shown))
    if sub in ("enable", "disable", "set") and ids:
        target = ids[-1]
        if target not in known:
            return fail(f"Unknown input method {target} cannot be {sub}d for user #0\n", 255)
        if sub == "set":
            phone.ime = target
            phone.version += 1
            return ok(f"Input method {target} selected for user #0\n")
        was = target in enabled
        if sub == "enable" and not was:
            enabled.append(target)
        if sub == "disable" and was:
            enabled.remove(target)
        phone.settings["secure"]["enabled_input_methods"] = ":".join(enabled)
        state = "enabled" if sub == "enable" else "disabled"
        return ok(f"Input method {target}: {'already ' if was == (sub == 'enable') else 'now '}{state}\n")
    if sub == "reset":
        phone.ime = apps.ADB_KEYBOARD_IME
        return ok(f"Reset current and enabled IMEs for user #0\n  Selected: {phone.ime}\n")
    return ok(IME_USAGE)


SETTINGS_USAGE = """Settings provider (settings) commands:
  get [--user <USER_ID> | current] NAMESPACE KEY
      Retrieve the current value of KEY.
  put [--user <USER_ID> | current] NAMESPACE KEY VALUE [TAG] [default]
      Change the contents of KEY to VALUE.
  delete [--user <USER_ID> | current] NAMESPACE KEY
      Delete the entry for KEY.
  list [--user <USER_ID> | current] NAMESPACE
      Print all defined keys.
      NAMESPACE is one of {system, secure, global}, case-insensitive
"""


def settings(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    words: list[str] = []
    i = 0
    while i < len(args):
        if args[i] == "--user":
            i += 2
            continue
        words.append(args[i])
        i += 1
    if not words or words[0] not in ("get", "put", "delete", "list", "reset"):
        return fail(SETTINGS_USAGE, 255) if words else ok(SETTINGS_USAGE)
    verb = words[0]
    if len(words) < 2 or words[1].lower() not in ("system", "secure", "global"):
        return fail(
            f"Invalid command: {verb}\n" if len(words) < 2 else f"Invalid namespace '{words[1]}'\n", 255
        )
    namespace = words[1].lower()
    if verb == "list":
        return ok("".join(f"{k}={v}\n" for k, v in sorted(phone.all_settings(namespace).items())))
    if len(words) < 3:
        return fail(f"Invalid command: {verb}\n", 255)
    key = words[2]
    if verb == "get":
        value = phone.get_setting(namespace, key)
        return ok(f"{'null' if value is None else value}\n")
    if verb == "put":
        if len(words) < 4:
            return fail(f"Invalid command: {verb}\n", 255)
        phone.put_setting(namespace, key, words[3])
        return ok()
    if verb == "delete":
        existed = phone.settings.get(namespace, {}).pop(key, None) is not None
        return ok(f"Deleted {int(existed)} rows\n")
    return ok()


def svc(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    if len(args) == 2 and args[0] in ("wifi", "bluetooth") and args[1] in ("enable", "disable"):
        (phone.set_wifi if args[0] == "wifi" else phone.set_bluetooth)(args[1] == "enable")
        return ok()
    if len(args) >= 1 and args[0] in ("data", "power", "usb", "nfc"):
        return ok()
    return ok(
        "Available commands:\n    help     Show information about the subcommands\n"
        "    power    Control the power manager\n    data     Control mobile data connectivity\n"
        "    wifi     Control the Wi-Fi manager\n    usb      Control Usb state\n"
        "    nfc      Control NFC functions\n    bluetooth Control Bluetooth service\n"
    )
