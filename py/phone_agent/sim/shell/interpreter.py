"""The shell's interpreter: one session (working directory, ``$?``, variables, stdin) running command
lines as Android's mksh does: lists, pipes, ``time``, ``for``/``while``/``until``/``if``/``{ }``,
redirections, variable, command (``$(…)``) and arithmetic (``$((…))``) expansion with field splitting,
pathname expansion, assignments, then a builtin, an Android command of the phone, or Android's "not
found".

Synchronous by design: the server runs each command line in a worker thread, so a slow
``screencap`` never blocks another connection.
"""

from __future__ import annotations

import fnmatch
import posixpath
import re
import time
from collections.abc import Callable

from phone_agent.sim.vfs import VirtualFileSystem

from ...device.shell_result import ShellResult
from .arith import ArithmeticProblem, evaluate
from .builtins import BUILTINS
from .grammar import AndOr, Command, ForLoop, Group, IfClause, Parser, Pipeline, Simple, WhileLoop
from .lexer import (
    ARITH_END,
    ARITH_START,
    CMD_END,
    CMD_START,
    FIELD_SEP,
    UNQUOTED,
    VAR_END,
    VAR_START,
    ShellSyntaxError,
    glob_unescape,
    has_glob_magic,
    tokenize,
)
from .parser import SimpleCommand, parse_pipeline
from .session import SH, AndroidCommands, LoopControl, ShellExit, reason

_EXPANSION = re.compile(
    f"({UNQUOTED}?)(?:{VAR_START}([^{VAR_END}]*){VAR_END}|{CMD_START}([^{CMD_END}]*){CMD_END}"
    f"|{ARITH_START}([^{ARITH_END}]*){ARITH_END})"
)
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
MAX_ITERATIONS = 100_000  # a loop that never ends is stopped: nothing in the sim may hang


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
            parser = Parser(tokenize(line))
            while (item := parser.next_item()) is not None:  # each runs before the next is read
                self._run_and_or(item, out, err)
        except ShellExit as stop:
            self.status = stop.code
            self.exited = True
        except LoopControl:
            pass  # break or continue outside a loop: ignored, as mksh does
        except ShellSyntaxError as exc:
            self._emit(err, f"{SH}: syntax error: {exc}\n".encode())
            self.status = 2
        except ArithmeticProblem as exc:
            self._emit(err, f"{SH}: {exc}\n".encode())
            self.status = 1
        except RecursionError:
            self._emit(err, f"{SH}: syntax error: nested too deeply\n".encode())
            self.status = 2
        return ShellResult(out.value(), err.value(), self.status, self._merged.value())

    def _emit(self, target: _Output, data: bytes) -> None:
        target += data
        if any(target is top for top in self._top):
            self._merged += data

    def _run_and_or(self, item: AndOr, out: _Output, err: _Output) -> int:
        # Pipelines joined by && or || run or are skipped by the status of the one before.
        self.status = self._run_pipeline(item.first, out, err)
        for operator, pipeline in item.rest:
            if (operator == "&&") == (self.status == 0):
                self.status = self._run_pipeline(pipeline, out, err)
        return self.status

    def _run_body(self, items: list[AndOr], out: _Output, err: _Output) -> int:
        for item in items:
            self._run_and_or(item, out, err)
        return self.status

    def _run_pipeline(self, pipeline: Pipeline, out: _Output, err: _Output) -> int:
        started = time.monotonic()
        data: bytes | None = None  # None: the session's stdin
        code = 0
        for index, command in enumerate(pipeline.commands):
            if index == len(pipeline.commands) - 1:
                code = self._run_command(command, data, out, err)
            else:
                sink = _Output()
                self._run_command(command, data, sink, err)
                data = sink.value()
        if pipeline.negated:
            code = int(code == 0)
        if pipeline.timed:  # mksh's `time`: real, user and system time on stderr
            real = time.monotonic() - started
            self._emit(err, f"{_clock(real)} real {_clock(0.0)} user {_clock(0.0)} system\n".encode())
        self.status = code
        return code

    def _run_command(self, command: Command, stdin: bytes | None, out: _Output, err: _Output) -> int:
        if isinstance(command, Simple):
            simple = parse_pipeline(command.tokens, self._expand, self._glob)[0]
            return self._run_simple(simple, stdin, out, err)
        if command.redirects:
            return self._redirected(command, stdin, out, err)
        if isinstance(command, Group):
            return self._run_body(command.body, out, err)
        if isinstance(command, IfClause):
            for condition, body in command.branches:
                if self._run_body(condition, out, err) == 0:
                    return self._run_body(body, out, err)
            self.status = 0
            return self._run_body(command.otherwise, out, err) if command.otherwise else 0
        self.status = 0
        if isinstance(command, ForLoop):
            values = parse_pipeline(command.words, self._expand, self._glob)[0].argv if command.words else []
            for value in values:
                self.env[command.name] = value
                if self._iteration(command.body, out, err):
                    break
            return self.status
        assert isinstance(command, WhileLoop)
        for _ in range(MAX_ITERATIONS):
            if (self._run_body(command.condition, out, err) == 0) == command.until:
                self.status = 0
                return 0
            if self._iteration(command.body, out, err):
                return self.status
        self._emit(err, f"{SH}: loop stopped after {MAX_ITERATIONS} rounds\n".encode())
        self.status = 1
        return 1

    def _redirected(self, command: Command, stdin: bytes | None, out: _Output, err: _Output) -> int:
        """A compound command with redirections: its output collected, then written where they say."""
        assert not isinstance(command, Simple)
        redirects = parse_pipeline(command.redirects, self._expand, self._glob)[0].redirects
        streams: dict[int, _Output] = {1: out, 2: err}
        files: list[tuple[str, _Output]] = []
        for redirect in redirects:
            if redirect.op == ">&":
                streams[redirect.fd] = streams.get(int(redirect.target), out)
                continue
            path = self.path(redirect.target)
            try:
                if redirect.op == "<":
                    self.fs.read_file(path)
                    continue
                if path != "/dev/null":
                    self.fs.write_file(path, b"", append=redirect.op != ">")
            except OSError as exc:
                self._emit(err, f"{SH}: {redirect.target}: {reason(exc)}\n".encode())
                return 1
            streams[redirect.fd] = _Output()
            if path != "/dev/null":
                files.append((path, streams[redirect.fd]))
        saved, command.redirects = command.redirects, []
        try:
            code = self._run_command(command, stdin, streams.get(1, out), streams.get(2, err))
        finally:
            command.redirects = saved
            for path, sink in files:
                self.fs.write_file(path, sink.value(), append=True)
        return code

    def _iteration(self, body: list[AndOr], out: _Output, err: _Output) -> bool:
        """One round of a loop's body; True when ``break`` ends the loop."""
        try:
            self._run_body(body, out, err)
        except LoopControl as control:
            if control.levels > 1:
                control.levels -= 1
                raise
            return control.kind == "break"
        return False

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
        argv = command.argv
        while argv and _ASSIGNMENT.match(argv[0]):  # NAME=value before a command (or alone)
            name, _, value = argv[0].partition("=")
            self.env[name] = value
            argv = argv[1:]
        if not argv:
            return 0
        result = self.execute(argv, stdin)
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

    def execute(self, argv: list[str], stdin: bytes | None) -> ShellResult:
        """Run one command: a builtin, else one of the phone's, else Android's "not found"."""
        name = argv[0]
        base = name.rsplit("/", 1)[-1] if name.startswith("/system/bin/") else name
        builtin = BUILTINS.get(base)
        if builtin is not None:
            return builtin(self, [base, *argv[1:]], stdin)
        if self.phone is not None and base in self.phone.command_names():
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
        """Variables, command substitutions and arithmetic in ``text``; an unquoted one's result has
        FIELD_SEP where the word splits."""
        return _EXPANSION.sub(self._expansion, text)

    def _expansion(self, match: re.Match[str]) -> str:
        unquoted, name, command, arithmetic = match.groups()
        if name is not None:
            value = str(self.status) if name == "?" else "0" if name == "#" else self.env.get(name, "")
        elif command is not None:
            value = self._substitute(command)
        else:
            value = str(evaluate(self._expand(arithmetic or "").replace(FIELD_SEP, " "), self.env))
        return re.sub(r"[ \t\n]+", FIELD_SEP, value) if unquoted else value

    def _substitute(self, command: str) -> str:
        """``$(command)``: its output without the trailing newlines (its errors go to ours)."""
        inner = Shell(self.fs, self.phone, read_stdin=lambda: b"")
        inner.cwd, inner.env = self.cwd, dict(self.env)
        result = inner.run(command)
        if result.stderr and self._top:
            self._emit(self._top[1], result.stderr)
        return result.stdout.decode("utf-8", "replace").rstrip("\n")

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


def _clock(seconds: float) -> str:
    """A time as mksh's ``time`` prints it: ``    0m00.12s``."""
    hundredths = int(seconds * 100)
    minutes, rest = divmod(hundredths, 6000)
    return f"{minutes:5d}m{rest // 100:02d}.{rest % 100:02d}s"
