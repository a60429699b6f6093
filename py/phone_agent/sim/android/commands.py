"""Android's own command-line tools, answering in Android's own formats.

Each handler takes the phone, the arguments after the command name, stdin and
the file store, and returns a CommandResult. The phone holds its lock while a
handler runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from .contract import CommandResult, FileStore
from .props import DENSITY, SCREEN_HEIGHT, SCREEN_WIDTH

if TYPE_CHECKING:
    from .phone import VirtualPhone

Handler = Callable[["VirtualPhone", list[str], bytes, FileStore], CommandResult]


def ok(text: str = "") -> CommandResult:
    return CommandResult(stdout=text.encode())


def fail(text: str, code: int = 1, stdout: str = "") -> CommandResult:
    return CommandResult(stdout=stdout.encode(), stderr=text.encode(), exit_code=code)


def getprop(phone: VirtualPhone, args: list[str], stdin: bytes, fs: FileStore) -> CommandResult:
    if not args:
        return ok("".join(f"[{k}]: [{v}]\n" for k, v in sorted(phone.props.items())))
    default = args[1] if len(args) > 1 else ""
    return ok(phone.props.get(args[0], default) + "\n")


def wm(phone: VirtualPhone, args: list[str], stdin: bytes, fs: FileStore) -> CommandResult:
    if args[:1] == ["size"] and len(args) == 1:
        return ok(f"Physical size: {SCREEN_WIDTH}x{SCREEN_HEIGHT}\n")
    if args[:1] == ["density"] and len(args) == 1:
        return ok(f"Physical density: {DENSITY}\n")
    if args[:1] in (["size"], ["density"]) and args[1:] == ["reset"]:
        return ok()
    if args[:1] in (["size"], ["density"]):
        return fail("Error: the simulated phone does not support display overrides\n", 255)
    sub = args[0] if args else ""
    return fail(f"Unknown command: {sub}\n" if sub else WM_USAGE, 255)


WM_USAGE = """Window manager (window) commands:
  help
      Print this help text.
  size [reset|WxH|WdpxHdp] [-d DISPLAY_ID]
    Return or override display size.
  density [reset|DENSITY] [-d DISPLAY_ID]
    Return or override display density.
"""

HANDLERS: dict[str, Handler] = {
    "getprop": getprop,
    "wm": wm,
}
