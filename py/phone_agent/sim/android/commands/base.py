"""What every Android command handler shares: results, Java-style errors, argument access.

Java shell commands (`input`, `am`, `pm`, `cmd …`) report exceptions on stderr
and exit 255, as Android's ShellCommand does.
"""

from __future__ import annotations

from collections.abc import Callable

from ....device.shell_result import ShellResult
from ..contract import AndroidPhone, FileStore

Handler = Callable[[AndroidPhone, list[str], bytes, FileStore], ShellResult]


class ShellCommandError(Exception):
    """An exception a Java shell command would throw (reported like ShellCommand.exec)."""

    def __init__(self, command: str, java_class: str, message: str) -> None:
        super().__init__(message)
        self.command, self.java_class = command, java_class


def ok(text: str = "") -> ShellResult:
    return ShellResult(stdout=text.encode())


def fail(text: str, code: int = 1, stdout: str = "") -> ShellResult:
    return ShellResult(stdout=stdout.encode(), stderr=text.encode(), exit_code=code)


def java_exception(error: ShellCommandError) -> ShellResult:
    return fail(
        f"\nException occurred while executing '{error.command}':\n"
        f"{error.java_class}: {error}\n"
        "\tat com.android.modules.utils.BasicShellCommandHandler.exec(BasicShellCommandHandler.java:97)\n",
        255,
    )


class Args:
    """Sequential access to arguments, like Android's ShellCommand."""

    def __init__(self, command: str, args: list[str]) -> None:
        self.command, self.args, self.pos = command, args, 0
        self.last = command

    def next(self) -> str | None:
        if self.pos >= len(self.args):
            return None
        self.last = self.args[self.pos]
        self.pos += 1
        return self.last

    def required(self) -> str:
        prev = self.last
        value = self.next()
        if value is None:
            raise ShellCommandError(
                self.command, "java.lang.IllegalArgumentException", f'Argument expected after "{prev}"'
            )
        return value

    def rest(self) -> list[str]:
        rest, self.pos = self.args[self.pos :], len(self.args)
        return rest


def write_reason(fs: FileStore, path: str, data: bytes) -> str | None:
    """Write a file; an errno-style reason when it fails."""
    try:
        fs.write_file(path, data)
    except FileNotFoundError:
        return "No such file or directory"
    except IsADirectoryError:
        return "Is a directory"
    except PermissionError:
        return "Permission denied"
    return None
