"""The shell's interpreter: one session (working directory, ``$?``, variables, stdin) running command
lines: lists, pipes, redirections, variable and pathname expansion, then a builtin, an Android command
of the phone, or Android's "not found".

Synchronous by design: the server runs each command line in a worker thread, so a slow
``screencap`` never blocks another connection.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
from collections.abc import Callable

from phone_agent.sim.vfs import VirtualFileSystem

from ...device.shell_result import ShellResult
from .builtins import BUILTINS
from .lexer import (
    VAR_END,
    VAR_START,
    Operator,
    ShellSyntaxError,
    Word,
    glob_unescape,
    has_glob_magic,
    tokenize,
)
from .parser import SimpleCommand, parse_pipeline, pipelines
from .session import SH, AndroidCommands, ShellExit, reason

_VAR = re.compile(f"{VAR_START}([^{VAR_END}]*){VAR_END}")


class WorkingDirFiles:
    """The files an Android command sees: relative paths resolve against the shell's current
    directory (``cd /sdcard && screencap shot.png`` writes /sdcard/shot.png, as on a phone)."""

    def __init__(self, fs: VirtualFileSystem, cwd: str) -> None:
        self.fs = fs
        self.cwd = cwd

    def read_file(self, path: str) -> bytes:
        return self.fs.read_file(self.fs.normalize(path, self.cwd))

    def write_file(self, path: str, data: bytes) -> None:
        self.fs.write_file(self.fs.normalize(path, self.cwd), data)

    def mkdir(self, path: str, *, parents: bool = False) -> None:
        self.fs.mkdir(self.fs.normalize(path, self.cwd), parents=parents, mode=0o755)

    def remove(self, path: str) -> None:
        self.fs.remove(self.fs.normalize(path, self.cwd))


class _Output:
    """A command line's stdout, stderr or both merged, as the pieces written, joined once at the end: a
    single large write (``cat`` of a 32 MiB file) is passed on as it is, not copied."""

    __slots__ = ("_pieces",)

    def __init__(self) -> None:
        self._pieces: list[bytes] = []

    def __iadd__(self, data: bytes | bytearray) -> _Output:
        if data:
            self._pieces.append(bytes(data))
        return self

    def value(self) -> bytes:
        return b"".join(self._pieces)


class Shell:
    """One shell session: a working directory, ``$?``, the file system and the phone's commands."""

    def __init__(
        self,
        fs: VirtualFileSystem,
        phone: AndroidCommands | None = None,
        *,
        read_stdin: Callable[[], bytes] | None = None,
    ) -> None:
        self.fs = fs
        self.phone = phone
        self.cwd = "/"
        self.status = 0
        self.exited = False
        self.env = {"HOME": "/", "PATH": "/product/bin:/apex/com.android.runtime/bin:/system/bin"}
        self._read_stdin = read_stdin or (lambda: b"")
        self._stdin_used = False
        self._top: tuple[_Output, ...] = ()
        self._merged = _Output()

    # ----- running

    def run(self, line: str) -> ShellResult:
        """Run a command line; ``exit`` ends it early with that code."""
        out, err = _Output(), _Output()
        self._top = (out, err)
        self._merged = _Output()
        try:
            self._run_list(line, out, err)
        except ShellExit as stop:
            self.status = stop.code
            self.exited = True
        except ShellSyntaxError as exc:
            message = f"{SH}: syntax error: {exc}\n".encode()
            err += message
            self._merged += message
            self.status = 2
        return ShellResult(out.value(), err.value(), self.status, self._merged.value())

    def _run_list(self, line: str, out: _Output, err: _Output) -> None:
        # Pipelines joined by && or || run or are skipped by the status of the one before.
        skip = False
        for pipeline, after in pipelines(tokenize(line)):
            if pipeline and not skip:
                self.status = self._run_pipeline(pipeline, out, err)
            if after in ("&&", "||"):
                ok = self.status == 0
                skip = (after == "&&" and not ok) or (after == "||" and ok)
            else:
                skip = False

    def _run_pipeline(self, tokens: list[Word | Operator], out: _Output, err: _Output) -> int:
        commands = parse_pipeline(tokens, self._expand, self._glob)
        data: bytes | None = None  # None: the session's stdin
        code = 0
        for index, command in enumerate(commands):
            if index == len(commands) - 1:
                return self._run_simple(command, data, out, err)
            sink = _Output()
            code = self._run_simple(command, data, sink, err)
            data = sink.value()
        return code

    def _run_simple(self, command: SimpleCommand, stdin: bytes | None, out: _Output, err: _Output) -> int:
        targets: dict[int, object] = {1: out, 2: err}
        for redirect in command.redirects:
            if redirect.op == ">&":
                targets[redirect.fd] = targets.get(int(redirect.target), out)
            elif redirect.op == "<":
                try:
                    stdin = self.fs.read_file(self.path(redirect.target))
                except OSError as exc:
                    err += f"{SH}: {redirect.target}: {reason(exc)}\n".encode()
                    return 1
            else:
                path = self.path(redirect.target)
                if path == "/dev/null":
                    targets[redirect.fd] = None
                    continue
                try:
                    # Opened as sh opens it: created or emptied for ">", created or kept for ">>";
                    # a directory fails either way ("Is a directory").
                    self.fs.write_file(path, b"", append=redirect.op != ">")
                except OSError as exc:
                    err += f"{SH}: {redirect.target}: {reason(exc)}\n".encode()
                    return 1
                targets[redirect.fd] = path
        if not command.argv:
            return 0
        result = self.execute(command.argv, stdin)
        for fd, data in ((1, result.stdout), (2, result.stderr)):
            target = targets.get(fd, out)
            if not data or target is None:
                continue
            if isinstance(target, _Output):
                target += data
                if any(target is top for top in self._top):
                    self._merged += data
            else:
                self.fs.write_file(str(target), data, append=True)
        return result.exit_code

    # ----- what the builtins use (ShellSession)

    def stdin(self, given: bytes | None) -> bytes:
        """``given`` (a pipe's or a redirection's), else the session's stdin, which is read once."""
        if given is not None:
            return given
        if self._stdin_used:
            return b""
        self._stdin_used = True
        return self._read_stdin()

    def _stdin_sized(self, argv: list[str]) -> bytes:
        """``-S SIZE``'s bytes of the session's stdin (the host keeps it open after them)."""
        at = argv.index("-S") + 1
        if self._stdin_used or at >= len(argv) or not argv[at].isdigit():
            return b""
        self._stdin_used = True
        try:
            return self._read_stdin(int(argv[at]))  # type: ignore[call-arg]
        except TypeError:  # a reader that takes no size: all of it
            return self._read_stdin()

    def execute(self, argv: list[str], stdin: bytes | None) -> ShellResult:
        """Run one command: a builtin, else one of the phone's, else Android's "not found"."""
        name = argv[0]
        base = name.rsplit("/", 1)[-1] if name.startswith("/system/bin/") else name
        builtin = BUILTINS.get(base)
        if builtin is not None:
            return builtin(self, [base, *argv[1:]], stdin)
        if self.phone is not None and base in self.phone.command_names():
            if stdin is None and "install" in argv and "-S" in argv:  # a streamed install reads the APK
                stdin = self._stdin_sized(argv)
            return self.phone.run([base, *argv[1:]], stdin or b"", WorkingDirFiles(self.fs, self.cwd))
        return ShellResult(stderr=f"{SH}: {name}: inaccessible or not found\n".encode(), exit_code=127)

    def subshell(self, read_stdin: Callable[[], bytes] | None = None) -> Shell:
        """A new session on the same files and phone, in this one's working directory (``sh``)."""
        inner = Shell(self.fs, self.phone, read_stdin=read_stdin)
        inner.cwd = self.cwd
        return inner

    def path(self, path: str) -> str:
        """``path`` as an absolute, normalized path (relative to the working directory)."""
        return self.fs.normalize(path, self.cwd)

    # ----- expansion

    def _expand(self, text: str) -> str:
        return _VAR.sub(lambda m: str(self.status) if m[1] == "?" else self.env.get(m[1], ""), text)

    def _glob(self, pattern: str) -> list[str]:
        """Paths matching ``pattern`` (``*``, ``?``, ``[…]`` per component; dotfiles only if asked)."""
        paths = ["/" if pattern.startswith("/") else ""]
        for part in (p for p in pattern.split("/") if p):
            found = []
            for base in paths:
                if not has_glob_magic(part):
                    found.append(posixpath.join(base, glob_unescape(part)))
                    continue
                try:
                    entries = self.fs.list_dir(self.path(base or "."))
                except OSError:
                    continue
                for name, _ in entries:
                    if (part.startswith(".") or not name.startswith(".")) and fnmatch.fnmatchcase(name, part):
                        found.append(posixpath.join(base, name))
            paths = found
        return sorted(p for p in paths if p and self.fs.exists(self.path(p)))
