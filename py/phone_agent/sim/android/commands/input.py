"""`input`: touches, text and key events, with Android's argument errors."""

from __future__ import annotations

import time

from ....device.shell_result import ShellResult
from .. import keys
from ..contract import AndroidPhone, FileStore
from .base import Args, ShellCommandError, java_exception, ok

INPUT_SOURCES = (
    "keyboard dpad gamepad touchscreen mouse stylus trackball touchpad touchnavigation joystick".split()
)
INPUT_USAGE = (
    "Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]\n\n"
    "The sources are: \n" + "".join(f"      {s}\n" for s in INPUT_SOURCES) + "\n-d: specify the display ID.\n"
    "      (Default: -1 for key event, 0 for motion event if not specified.)\n"
    "The commands and default sources are:\n"
    "      text <string> (Default: touchscreen)\n"
    "      keyevent [--longpress|--doubletap] <key code number or name> ... (Default: keyboard)\n"
    "      tap <x> <y> (Default: touchscreen)\n"
    "      swipe <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)\n"
    "      draganddrop <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)\n"
    "      press (Default: trackball)\n"
    "      roll <dx> <dy> (Default: trackball)\n"
    "      motionevent <DOWN|UP|MOVE|CANCEL> <x> <y> (Default: touchscreen)\n"
    "      keycombination <key code 1> <key code 2> ... (Default: keyboard)\n"
)


def _float(a: Args, sub: str) -> float:
    value = a.required()
    try:
        result = float(value)
    except ValueError:
        raise ShellCommandError(
            a.command, "java.lang.IllegalArgumentException", f"Error: Invalid arguments for command: {sub}"
        ) from None
    return result


def press_key(phone: AndroidPhone, code: int) -> None:
    """What one key press does to the phone."""
    if code == keys.HOME:
        phone.home()
    elif code in (keys.BACK, keys.ESCAPE):
        phone.back()
    elif code == keys.APP_SWITCH:
        phone.toggle_recents()
    elif code in (keys.ENTER, keys.NUMPAD_ENTER):
        phone.enter()
    elif code == keys.DEL:
        phone.delete_back()
    elif code == keys.PASTE:
        if phone.clipboard:
            phone.type_text(phone.clipboard)
    elif code in keys.KEY_CHARS:
        phone.type_text(keys.KEY_CHARS[code])


def input_(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    a = Args(args[0] if args else "", args)
    sub = a.next()
    try:
        if sub in INPUT_SOURCES:
            sub = a.required()
        if sub == "-d":
            a.required()
            sub = a.required()
        a.command = sub or ""
        if sub is None or sub in ("help", "-h"):
            return ok(INPUT_USAGE)
        if sub == "text":
            text = a.required().replace("%s", " ")
            if not keys.typeable(text):
                raise ShellCommandError(
                    sub, "java.lang.NullPointerException", "Attempt to get length of null array"
                )
            phone.type_text(text)
        elif sub == "keyevent":
            first = a.required()
            if first in ("--longpress", "--doubletap"):
                first = a.required()
            for name in [first, *a.rest()]:
                press_key(phone, keys.keycode_from_string(name))
        elif sub == "tap":
            x, y = _float(a, sub), _float(a, sub)
            phone.tap(x, y)
        elif sub in ("swipe", "draganddrop"):
            x1, y1, x2, y2 = (_float(a, sub) for _ in range(4))
            duration_arg = a.next()
            try:
                duration = int(duration_arg) if duration_arg is not None else -1
            except ValueError:
                raise ShellCommandError(
                    sub, "java.lang.IllegalArgumentException", f"Error: Invalid arguments for command: {sub}"
                ) from None
            if sub == "swipe":
                phone.swipe(x1, y1, x2, y2, duration if duration >= 0 else 300)
        elif sub == "motionevent":
            action = a.required().upper()
            x, y = _float(a, sub), _float(a, sub)
            if action == "DOWN":
                phone.pointer_down = (x, y, time.monotonic())
            elif action == "UP" and phone.pointer_down is not None:
                x0, y0, t0 = phone.pointer_down
                phone.pointer_down = None
                phone.swipe(x0, y0, x, y, int((time.monotonic() - t0) * 1000))
            elif action == "CANCEL":
                phone.pointer_down = None
        elif sub == "roll":
            _float(a, sub), _float(a, sub)
        elif sub == "keycombination":
            a.required()
        elif sub == "press":
            pass
        else:
            return ok(f"Unknown command: {sub}\n")
    except ShellCommandError as error:
        return java_exception(error)
    return ok()
