"""Values that reach a phone's shell: each checked against its kind, then quoted — the one way a command
line for Android's ``sh`` (mksh) is built from anything a caller, a flow or a phone said.

Build every command that carries a value with ``command``, each value passed through the check of its
kind::

    device.shell(command("pm", "clear", package_name(value)))
    device.shell(command("pm", "grant", package_name(app), permission_name(name)))

``command`` quotes every word (single quotes, as ``adb exec-out`` does; words of safe characters stay as
they are), so ``;``, ``$(…)``, backticks, ``|``, ``&`` and newlines inside a value are that value's
characters, never the shell's syntax. The kind checks refuse what no such value can be (a package name
with a space, a relative path, an option in place of a name) before anything is sent, and say what it
must be. ``ShellValueError`` (a ``ValueError``) carries ``problem`` and ``remedy`` for the caller's own
error: ``for_tool`` makes it a tool's ``invalid_argument`` naming the field, ``for_device`` a
``DeviceError`` (a Device's own last check); the flow runner makes it a failed step. NUL can never be
carried (ADB ends the service name at it), so ``quote`` refuses it.

Fixed words of our own (``"logcat"``, ``"-d"``) need no check; a number is written in decimal. A new
command with a value of a new kind adds that kind's check here, beside the others. Pure.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable

from .. import errors

# Android's rule (PackageParser.validateName): dot-separated segments, each a letter then letters,
# digits or underscores. System packages may have one segment ("android").
PACKAGE_PATTERN = r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)*$"
# android.permission.CAMERA, com.example.permission.C2D_MESSAGE, or CAMERA alone.
PERMISSION_PATTERN = r"^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z0-9_]+)*$"
MAX_NAME = 255
MAX_PATH = 1024

_PACKAGE = re.compile(PACKAGE_PATTERN)
_PERMISSION = re.compile(PERMISSION_PATTERN)


class ShellValueError(ValueError):
    """A value that is not of the kind its place in a command needs: what is wrong, and what to give."""

    def __init__(self, problem: str, remedy: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.remedy = remedy


def package_name(value: str) -> str:
    """An Android package name (``com.example.app``), stripped; ShellValueError otherwise."""
    name = str(value).strip()
    if len(name) > MAX_NAME or not _PACKAGE.fullmatch(name):
        raise ShellValueError(
            f"is not an Android package name ({_shown(value)})",
            "Give one such as com.example.app: letters, digits and underscores in dot-separated parts, "
            "each starting with a letter (list_apps lists them).",
        )
    return name


def permission_name(value: str) -> str:
    """An Android permission's name (``android.permission.CAMERA``, or ``CAMERA``); ShellValueError
    otherwise."""
    name = str(value).strip()
    if len(name) > MAX_NAME or not _PERMISSION.fullmatch(name):
        raise ShellValueError(
            f"is not a permission name ({_shown(value)})",
            "Give one such as android.permission.CAMERA (or CAMERA alone).",
        )
    return name


def device_path(value: str) -> str:
    """An absolute path on the phone (no NUL, no line break); ShellValueError otherwise."""
    path = str(value).strip()
    if not path.startswith("/") or len(path) > MAX_PATH or any(ch in path for ch in "\x00\r\n"):
        raise ShellValueError(
            f"must be an absolute path on the phone ({_shown(value)})",
            "Give a path such as /sdcard/file.txt.",
        )
    return path


def text_value(value: str) -> str:
    """Any text a shell word can carry (typed, put on the clipboard): everything but NUL."""
    if "\x00" in value:
        raise ShellValueError("contains a NUL character, which no shell command can carry", "Remove it.")
    return value


def quote(value: str | int) -> str:
    """One word for Android's sh: a number as it is, text single-quoted unless it is all safe
    characters. NUL cannot be carried (ValueError)."""
    if isinstance(value, bool):
        raise TypeError("a shell word is text or a number, not a boolean")
    if isinstance(value, int):
        return str(value)
    return shlex.quote(text_value(value))


def command(*words: str | int) -> str:
    """A command line of these words, each quoted (``command("pm", "clear", name)``)."""
    return " ".join(quote(word) for word in words)


def for_tool(check: Callable[[str], str], value: str, tool: str, field: str) -> str:
    """``check(value)``, or the tool's ``invalid_argument`` naming ``field`` when it refuses."""
    try:
        return check(value)
    except ShellValueError as exc:
        raise errors.invalid_argument(tool, field, exc.problem, exc.remedy) from None


def for_device(check: Callable[[str], str], value: str, what: str) -> str:
    """``check(value)``, or a DeviceError saying ``what`` is wrong (a Device's own last check)."""
    try:
        return check(value)
    except ShellValueError as exc:
        raise errors.DeviceError(f"{what} {exc.problem}", remedy=exc.remedy, retryable=False) from None


def _shown(value: object) -> str:
    text = repr(str(value))
    return text if len(text) <= 80 else text[:77] + "…'"


__all__ = [
    "MAX_NAME",
    "MAX_PATH",
    "PACKAGE_PATTERN",
    "PERMISSION_PATTERN",
    "ShellValueError",
    "command",
    "device_path",
    "for_device",
    "for_tool",
    "package_name",
    "permission_name",
    "quote",
    "text_value",
]
