"""What the shell's interpreter and its builtins share: the result of a command (``ShellResult``, the
one type for it, re-exported here), ``exit``, the session a builtin acts on, and the phone the Android
commands go to."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from phone_agent.device.shell_result import ShellResult
from phone_agent.sim.vfs import VirtualFileSystem

SH = "/system/bin/sh"


class ShellExit(Exception):
    """``exit N`` ends the shell."""

    def __init__(self, code: int) -> None:
        self.code = code


class LoopControl(Exception):
    """``break`` or ``continue`` (``kind``), ``levels`` loops out."""

    def __init__(self, kind: str, levels: int = 1) -> None:
        self.kind, self.levels = kind, levels


class AndroidCommands(Protocol):
    """What the shell needs of the virtual phone."""

    def command_names(self) -> frozenset[str]: ...
    def run(self, argv: list[str], stdin: bytes, fs: VirtualFileSystem) -> ShellResult: ...


class ShellSession(Protocol):
    """What a builtin reads and changes of the shell that runs it (the interpreter's ``Shell``)."""

    fs: VirtualFileSystem
    phone: AndroidCommands | None
    cwd: str
    status: int
    env: dict[str, str]

    def run(self, line: str) -> ShellResult: ...
    def path(self, path: str) -> str: ...
    def stdin(self, given: bytes | None) -> bytes: ...
    def execute(self, argv: list[str], stdin: bytes | None) -> ShellResult: ...
    def subshell(self, read_stdin: Callable[[], bytes] | None = None) -> ShellSession: ...


Builtin = Callable[[ShellSession, list[str], bytes | None], ShellResult]


# What toybox and sh print for the failed file operations the virtual file system raises.
_REASONS: tuple[tuple[type[OSError], str], ...] = (
    (FileNotFoundError, "No such file or directory"),
    (IsADirectoryError, "Is a directory"),
    (NotADirectoryError, "Not a directory"),
    (FileExistsError, "File exists"),
)


def reason(exc: OSError) -> str:
    """The text toybox and sh print for a failed file operation."""
    for kind, text in _REASONS:
        if isinstance(exc, kind):
            return text
    return exc.strerror or str(exc)
