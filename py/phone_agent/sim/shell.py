"""A small ``sh`` for the simulated phone: POSIX quoting, lists, pipes, redirections, a few builtins.

The host hands the device one command string and the device's shell parses it: Debian's adb 29
joins ``adb shell a b`` with spaces, unescaped (like ssh), and single-quotes each argument of
``adb exec-out a b``; so this parses POSIX quoting itself. It has command lists with ``;`` ``&&``
``||``, pipes, ``> >> 2> 2>&1 <`` redirections (files and ``/dev/null``), ``$?``, ``$VAR`` and
pathname globs, and the builtins in ``Shell.builtins`` (echo cat ls rm mkdir touch grep head tail
wc sh exit true false cd pwd export exec id whoami uname date sleep which logcat sha256sum). Android's own
commands (getprop, input, screencap, …) go to the virtual phone. An unknown command answers as
Android's mksh does, with exit code 127.

Synchronous by design: the server runs each command line in a worker thread, so a slow
``screencap`` never blocks another connection.
"""

from __future__ import annotations

import fnmatch
import hashlib
import posixpath
import re
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from phone_agent.sim.vfs import VirtualFileSystem

SH = "/system/bin/sh"
MAX_SLEEP = 10.0  # seconds; a longer sleep is cut short
ID_LINE = (
    b"uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log),1011(adb),"
    b"1015(sdcard_rw) context=u:r:shell:s0\n"
)

# $? is expanded when its command runs (after the earlier commands of the list), not when parsed.
# Variables ($?, $NAME) are expanded when their command runs, after the earlier commands of the
# list (``false; echo $?``, ``export X=1; echo $X``): the lexer leaves a marker around the name.
VAR_START, VAR_END = "\ue000", "\ue001"
_VAR = re.compile(f"{VAR_START}([^{VAR_END}]*){VAR_END}")
OPERATORS = ("&&", "||", ";;", ">>", "2>&1", ";", "|", "&", ">", "<", "\n")


class AndroidCommands(Protocol):
    """What the shell needs of the virtual phone."""

    def command_names(self) -> frozenset[str]: ...
    def run(self, argv: list[str], stdin: bytes, fs: VirtualFileSystem) -> object: ...


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


class ShellSyntaxError(Exception):
    """An unterminated quote or a misplaced operator."""


class ShellExit(Exception):
    """``exit N`` ends the shell."""

    def __init__(self, code: int) -> None:
        self.code = code


@dataclass(frozen=True)
class Word:
    text: str
    pattern: str | None = None  # the word as a glob pattern (quoted parts escaped) if it has * ? [


@dataclass(frozen=True)
class Operator:
    text: str


@dataclass(frozen=True)
class Redirect:
    fd: int
    op: str  # ">", ">>", "<", ">&"
    target: str


@dataclass
class SimpleCommand:
    argv: list[str] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)


def tokenize(line: str) -> list[Word | Operator]:
    """Split a command line into words and operators, applying quotes; variables are left marked."""
    tokens: list[Word | Operator] = []
    word: list[str] = []
    pattern: list[str] = []
    globbing = False
    in_word = False

    def literal(text: str) -> None:
        word.append(text)
        pattern.append(_glob_escape(text))

    i, n = 0, len(line)

    def expand(at: int) -> tuple[str, int]:
        if at + 1 < n and line[at + 1] == "?":
            return f"{VAR_START}?{VAR_END}", at + 2
        match = re.match(r"\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*)", line[at + 1 :])
        if match:
            return f"{VAR_START}{match.group(1) or match.group(2)}{VAR_END}", at + 1 + match.end()
        return "$", at + 1

    def finish() -> None:
        nonlocal in_word, globbing
        if in_word:
            tokens.append(Word("".join(word), "".join(pattern) if globbing else None))
            word.clear()
            pattern.clear()
            in_word = False
            globbing = False

    while i < n:
        c = line[i]
        if c in " \t":
            finish()
            i += 1
        elif c == "#" and not in_word:
            while i < n and line[i] != "\n":
                i += 1
        elif c == "'":
            end = line.find("'", i + 1)
            if end < 0:
                raise ShellSyntaxError("unterminated '")
            literal(line[i + 1 : end])
            in_word = True
            i = end + 1
        elif c == '"':
            i += 1
            in_word = True
            while True:
                if i >= n:
                    raise ShellSyntaxError('unterminated "')
                c = line[i]
                if c == '"':
                    i += 1
                    break
                if c == "\\" and i + 1 < n and line[i + 1] in '$`"\\\n':
                    literal(line[i + 1])
                    i += 2
                elif c == "$":
                    text, i = expand(i)
                    literal(text)
                else:
                    literal(c)
                    i += 1
        elif c == "\\":
            if i + 1 < n and line[i + 1] != "\n":
                literal(line[i + 1])
                in_word = True
            i += 2
        elif c == "$":
            text, i = expand(i)
            literal(text)
            in_word = True
        else:
            # A digit glued to > or < is a file descriptor number (2>file, 2>&1).
            if c.isdigit() and not in_word and i + 1 < n and line[i + 1] in "<>":
                if line.startswith(">&", i + 1):
                    m = re.match(r"(\d)>&(\d)", line[i:])
                    if m:
                        tokens.append(Operator(f"{m.group(1)}>&{m.group(2)}"))
                        i += m.end()
                        continue
                op = ">>" if line.startswith(">>", i + 1) else line[i + 1]
                tokens.append(Operator(c + op))
                i += 1 + len(op)
                continue
            for op in OPERATORS:
                if line.startswith(op, i) and op != "2>&1":
                    finish()
                    if op == ">" and line.startswith(">&", i):
                        m = re.match(r">&(\d)", line[i:])
                        if m:
                            tokens.append(Operator(f"1>&{m.group(1)}"))
                            i += m.end()
                            break
                    tokens.append(Operator(op))
                    i += len(op)
                    break
            else:
                word.append(c)
                pattern.append(c)
                globbing = globbing or c in "*?["
                in_word = True
                i += 1
    finish()
    return tokens


def _glob_escape(text: str) -> str:
    return re.sub(r"([*?[])", r"[\1]", text)


def _glob_unescape(text: str) -> str:
    return re.sub(r"\[([*?[])\]", r"\1", text)


def _has_magic(part: str) -> bool:
    return any(c in "*?[" for c in re.sub(r"\[[*?[]\]", "", part))


@dataclass
class ShellResult:
    """What a command line wrote and how it ended; ``merged`` is stdout and stderr in the order written."""

    stdout: bytes = b""
    stderr: bytes = b""
    exit_code: int = 0
    merged: bytes = b""


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
        self.builtins: dict[str, Callable[[list[str], bytes], ShellResult]] = {
            "echo": self._echo,
            "cat": self._cat,
            "ls": self._ls,
            "rm": self._rm,
            "mkdir": self._mkdir,
            "sh": self._sh,
            "true": lambda argv, stdin: ShellResult(),
            "false": lambda argv, stdin: ShellResult(exit_code=1),
            "exit": self._exit,
            "grep": self._grep,
            "pwd": lambda argv, stdin: ShellResult((self.cwd + "\n").encode()),
            "cd": self._cd,
            "touch": self._touch,
            "export": self._export,
            "exec": self._exec,
            "id": lambda argv, stdin: ShellResult(ID_LINE),
            "whoami": lambda argv, stdin: ShellResult(b"shell\n"),
            "uname": self._uname,
            "date": lambda argv, stdin: ShellResult(time.strftime("%a %b %d %H:%M:%S %Z %Y\n").encode()),
            "sleep": self._sleep,
            "which": self._which,
            "head": self._head_tail,
            "tail": self._head_tail,
            "wc": self._wc,
            "logcat": self._logcat,
            "sha256sum": self._sha256sum,
        }

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
        tokens = tokenize(line)
        # Split on ; & and newlines into and-or lists; those into pipelines joined by && or ||.
        pending: list[Word | Operator] = []
        connector = ""
        skip = False
        for token in [*tokens, Operator(";")]:
            if isinstance(token, Operator) and token.text in (";", "&", "\n", "&&", "||"):
                if pending:
                    if not skip:
                        self.status = self._run_pipeline(pending, out, err)
                    pending = []
                elif token.text in ("&&", "||"):
                    raise ShellSyntaxError(f"'{token.text}' unexpected")
                if token.text in ("&&", "||"):
                    connector = token.text
                    ok = self.status == 0
                    skip = (connector == "&&" and not ok) or (connector == "||" and ok)
                else:
                    skip = False
            else:
                pending.append(token)

    def _parse_pipeline(self, tokens: list[Word | Operator]) -> list[SimpleCommand]:
        commands = [SimpleCommand()]
        it = iter(tokens)
        for token in it:
            if isinstance(token, Word):
                text = self._expand(token.text)
                matches = self._glob(self._expand(token.pattern)) if token.pattern else []
                commands[-1].argv.extend(matches or [text])  # no match: the word stays, as in sh
            elif token.text == "|":
                if not commands[-1].argv:
                    raise ShellSyntaxError("'|' unexpected")
                commands.append(SimpleCommand())
            elif re.fullmatch(r"\d>&\d", token.text):
                commands[-1].redirects.append(Redirect(int(token.text[0]), ">&", token.text[-1]))
            elif token.text.lstrip("0123456789") in (">", ">>", "<"):
                op = token.text.lstrip("0123456789")
                fd = int(token.text[: len(token.text) - len(op)] or (0 if op == "<" else 1))
                target = next(it, None)
                if not isinstance(target, Word):
                    raise ShellSyntaxError(f"'{token.text}' needs a file")
                commands[-1].redirects.append(Redirect(fd, op, self._expand(target.text)))
            else:
                raise ShellSyntaxError(f"'{token.text}' unexpected")
        if not commands[-1].argv and not commands[-1].redirects:
            raise ShellSyntaxError("empty command")
        return commands

    def _run_pipeline(self, tokens: list[Word | Operator], out: _Output, err: _Output) -> int:
        commands = self._parse_pipeline(tokens)
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
                    stdin = self.fs.read_file(self._path(redirect.target))
                except OSError as exc:
                    err += f"{SH}: {redirect.target}: {_reason(exc)}\n".encode()
                    return 1
            else:
                path = self._path(redirect.target)
                if path == "/dev/null":
                    targets[redirect.fd] = None
                    continue
                try:
                    if redirect.op == ">" or not self.fs.exists(path):
                        self.fs.write_file(path, b"")
                except OSError as exc:
                    err += f"{SH}: {redirect.target}: {_reason(exc)}\n".encode()
                    return 1
                targets[redirect.fd] = path
        if not command.argv:
            return 0
        result = self._execute(command.argv, stdin)
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

    def _stdin(self, stdin: bytes | None) -> bytes:
        if stdin is not None:
            return stdin
        if self._stdin_used:
            return b""
        self._stdin_used = True
        return self._read_stdin()

    def _execute(self, argv: list[str], stdin: bytes | None) -> ShellResult:
        name = argv[0]
        base = name.rsplit("/", 1)[-1] if name.startswith("/system/bin/") else name
        builtin = self.builtins.get(base)
        if builtin is not None:
            return builtin([base, *argv[1:]], stdin)  # type: ignore[arg-type]
        if self.phone is not None and base in self.phone.command_names():
            result = self.phone.run([base, *argv[1:]], stdin or b"", WorkingDirFiles(self.fs, self.cwd))
            return ShellResult(
                getattr(result, "stdout", b""),
                getattr(result, "stderr", b""),
                getattr(result, "exit_code", 0),
            )
        return ShellResult(stderr=f"{SH}: {name}: inaccessible or not found\n".encode(), exit_code=127)

    def _expand(self, text: str) -> str:
        return _VAR.sub(lambda m: str(self.status) if m[1] == "?" else self.env.get(m[1], ""), text)

    def _glob(self, pattern: str) -> list[str]:
        """Paths matching ``pattern`` (``*``, ``?``, ``[…]`` per component; dotfiles only if asked)."""
        paths = ["/" if pattern.startswith("/") else ""]
        for part in (p for p in pattern.split("/") if p):
            found = []
            for base in paths:
                if not _has_magic(part):
                    found.append(posixpath.join(base, _glob_unescape(part)))
                    continue
                try:
                    entries = self.fs.list_dir(self._path(base or "."))
                except OSError:
                    continue
                for name, _ in entries:
                    if (part.startswith(".") or not name.startswith(".")) and fnmatch.fnmatchcase(name, part):
                        found.append(posixpath.join(base, name))
            paths = found
        return sorted(p for p in paths if p and self.fs.exists(self._path(p)))

    def _path(self, path: str) -> str:
        return self.fs.normalize(path, self.cwd)

    # ----- builtins (toybox's messages)

    def _echo(self, argv: list[str], stdin: bytes | None) -> ShellResult:
        args, newline = argv[1:], True
        if args and args[0] == "-n":
            args, newline = args[1:], False
        return ShellResult((" ".join(args) + ("\n" if newline else "")).encode())

    def _cat(self, argv: list[str], stdin: bytes | None) -> ShellResult:
        files = [a for a in argv[1:] if a != "-"] if len(argv) > 1 else []
        if len(argv) == 1 or "-" in argv[1:]:
            data = self._stdin(stdin)
            if not files:
                return ShellResult(data)
        if len(files) == 1 and len(argv) == 2:  # one file: its bytes as they are (no copy)
            try:
                return ShellResult(self.fs.read_file(self._path(files[0])))
            except OSError as exc:
                return ShellResult(b"", f"cat: {files[0]}: {_reason(exc)}\n".encode(), 1)
        out, err, code = bytearray(), bytearray(), 0
        for name in files:
            try:
                out += self.fs.read_file(self._path(name))
            except OSError as exc:
                err += f"cat: {name}: {_reason(exc)}\n".encode()
                code = 1
        return ShellResult(bytes(out), bytes(err), code)

    def _sha256sum(self, argv: list[str], stdin: bytes | None) -> ShellResult:
        out, err, code = bytearray(), bytearray(), 0
        for name in argv[1:] or ["-"]:
            try:
                data = self._stdin(stdin) if name == "-" else self.fs.read_file(self._path(name))
            except OSError as exc:
                err += f"sha256sum: {name}: {_reason(exc)}\n".encode()
                code = 1
                continue
            out += f"{hashlib.sha256(data).hexdigest()}  {name}\n".encode()
        return ShellResult(bytes(out), bytes(err), code)

    def _ls(self, argv: list[str], stdin: bytes | None) -> ShellResult:
        flags = "".join(a[1:] for a in argv[1:] if a.startswith("-") and len(a) > 1)
        names = [a for a in argv[1:] if not a.startswith("-") or a == "-"] or ["."]
        long, show_all, directory_only = "l" in flags, "a" in flags, "d" in flags
        out, err, code = bytearray(), bytearray(), 0
        for index, name in enumerate(names):
            path = self._path(name)
            try:
                info = self.fs.stat(path)
            except OSError as exc:
                err += f"ls: {name}: {_reason(exc)}\n".encode()
                code = 1
                continue
            if not info.is_dir or directory_only:
                out += (_long_line(name, info) if long else name).encode() + b"\n"
                continue
            entries = self.fs.list_dir(path)
            if show_all:
                entries = [(".", info), ("..", self.fs.stat(self.fs.normalize(path + "/.."))), *entries]
            if len(names) > 1:
                out += f"{'' if index == 0 else chr(10)}{name}:\n".encode()
            if long:
                out += f"total {len(entries) * 8}\n".encode()
            for entry, entry_info in entries:
                if entry.startswith(".") and not show_all:
                    continue
                out += (_long_line(entry, entry_info) if long else entry).encode() + b"\n"
        return ShellResult(bytes(out), bytes(err), code)

    def _rm(self, argv: list[str], stdin: bytes | None) -> ShellResult:
        flags = "".join(a[1:] for a in argv[1:] if a.startswith("-"))
        recursive, force = "r" in flags.lower(), "f" in flags
        err, code = bytearray(), 0
        for name in (a for a in argv[1:] if not a.startswith("-")):
            path = self._path(name)
            try:
                if self.fs.is_dir(path) and not recursive:
                    raise IsADirectoryError(path)
                self.fs.remove(path, recursive=recursive)
            except FileNotFoundError:
                if not force:
                    err += f"rm: {name}: No such file or directory\n".encode()
                    code = 1
            except OSError as exc:
                err += f"rm: {name}: {_reason(exc)}\n".encode()
                code = 1
        return ShellResult(b"", bytes(err), code)

    def _mkdir(self, argv: list[str], stdin: bytes | None) -> ShellResult:
        parents = any(a.startswith("-") and "p" in a for a in argv[1:])
        err, code = bytearray(), 0
        for name in (a for a in argv[1:] if not a.startswith("-")):
            try:
                self.fs.mkdir(self._path(name), parents=parents)
            except OSError as exc:
                err += f"mkdir: '{name}': {_reason(exc)}\n".encode()
                code = 1
        return ShellResult(b"", bytes(err), code)

    def _export(self, argv: list[str], stdin: bytes | None) -> ShellResult:
        for item in argv[1:]:
            name, _, value = item.partition("=")
            self.env[name] = value
        return ShellResult()

    def _exec(self, argv: list[str], stdin: bytes | None) -> ShellResult:
        return self._execute(argv[1:], stdin) if len(argv) > 1 else ShellResult()

    def _uname(self, argv: list[str], stdin: bytes | None) -> ShellResult:
        if "-a" in argv:
            return ShellResult(b"Linux localhost 5.10.198-android13-4 #1 SMP PREEMPT aarch64 Toybox\n")
        return ShellResult(b"Linux\n")

    def _sleep(self, argv: list[str], stdin: bytes | None) -> ShellResult:
        try:
            seconds = float(argv[1]) if len(argv) > 1 else 0.0
        except ValueError:
            return ShellResult(stderr=f"sleep: invalid number '{argv[1]}'\n".encode(), exit_code=1)
        time.sleep(min(max(seconds, 0.0), MAX_SLEEP))  # bounded: nothing in the sim may hang
        return ShellResult()

    def _which(self, argv: list[str], stdin: bytes | None) -> ShellResult:
        out, code = bytearray(), 0
        phone_commands = self.phone.command_names() if self.phone is not None else frozenset()
        for name in argv[1:]:
            if name in self.builtins or name in phone_commands:
                out += f"/system/bin/{name}\n".encode()
            else:
                code = 1
        return ShellResult(bytes(out), b"", code)

    def _head_tail(self, argv: list[str], stdin: bytes | None) -> ShellResult:
        count, files, args = 10, [], iter(argv[1:])
        for arg in args:
            if arg == "-n":
                arg = "-" + next(args, "10")
            if arg.startswith("-") and arg[1:].isdigit():
                count = int(arg[1:])
            else:
                files.append(arg)
        try:
            data = b"".join(self.fs.read_file(self._path(f)) for f in files) if files else self._stdin(stdin)
        except OSError as exc:
            return ShellResult(stderr=f"{argv[0]}: {files[0]}: {_reason(exc)}\n".encode(), exit_code=1)
        lines = data.splitlines(keepends=True)
        picked = lines[:count] if argv[0] == "head" else lines[-count:] if count else []
        return ShellResult(b"".join(picked))

    def _wc(self, argv: list[str], stdin: bytes | None) -> ShellResult:
        files = [a for a in argv[1:] if not a.startswith("-")]
        try:
            data = b"".join(self.fs.read_file(self._path(f)) for f in files) if files else self._stdin(stdin)
        except OSError as exc:
            return ShellResult(stderr=f"wc: {files[0]}: {_reason(exc)}\n".encode(), exit_code=1)
        counts = {"l": data.count(b"\n"), "w": len(data.split()), "c": len(data)}
        flags = "".join(a[1:] for a in argv[1:] if a.startswith("-")) or "lwc"
        return ShellResult((" ".join(str(counts[f]) for f in "lwc" if f in flags) + "\n").encode())

    def _logcat(self, argv: list[str], stdin: bytes | None) -> ShellResult:
        # The simulated phone keeps no log; print what a freshly booted one shows, as if -d.
        stamp = time.strftime("%m-%d %H:%M:%S.000")
        lines = [
            "--------- beginning of main",
            f"{stamp}  1000  1000 I ActivityManager: simulated phone ready",
            "--------- beginning of system",
        ]
        return ShellResult(("\n".join(lines) + "\n").encode())

    def _touch(self, argv: list[str], stdin: bytes | None) -> ShellResult:
        err, code = bytearray(), 0
        for name in (a for a in argv[1:] if not a.startswith("-")):
            path = self._path(name)
            try:
                data = self.fs.read_file(path) if self.fs.exists(path) else b""
                self.fs.write_file(path, data, mtime=int(time.time()))
            except OSError as exc:
                err += f"touch: '{name}': {_reason(exc)}\n".encode()
                code = 1
        return ShellResult(b"", bytes(err), code)

    def _cd(self, argv: list[str], stdin: bytes | None) -> ShellResult:
        path = self._path(argv[1] if len(argv) > 1 else "/")
        if not self.fs.is_dir(path):
            return ShellResult(stderr=f"{SH}: cd: {path}: No such file or directory\n".encode(), exit_code=2)
        self.cwd = path
        return ShellResult()

    def _exit(self, argv: list[str], stdin: bytes | None) -> ShellResult:
        try:
            code = int(argv[1]) & 0xFF if len(argv) > 1 else self.status
        except ValueError:
            return ShellResult(stderr=f"{SH}: exit: {argv[1]}: bad number\n".encode(), exit_code=2)
        raise ShellExit(code)

    def _sh(self, argv: list[str], stdin: bytes | None) -> ShellResult:
        if len(argv) >= 3 and argv[1] == "-c":
            inner = Shell(self.fs, self.phone, read_stdin=lambda: self._stdin(stdin))
            inner.cwd, inner.env = self.cwd, dict(self.env)
            return inner.run(argv[2])
        if len(argv) == 1:
            inner = Shell(self.fs, self.phone)
            inner.cwd = self.cwd
            return inner.run(self._stdin(stdin).decode("utf-8", "replace"))
        return ShellResult(stderr=f"{SH}: {argv[1]}: can't open\n".encode(), exit_code=127)

    def _grep(self, argv: list[str], stdin: bytes | None) -> ShellResult:
        flags, args = "", []
        patterns: list[str] = []
        it = iter(argv[1:])
        for arg in it:
            if arg == "-e":
                patterns.append(next(it, ""))
            elif arg.startswith("-") and len(arg) > 1 and not args:
                flags += arg[1:]
            else:
                args.append(arg)
        if not patterns:
            if not args:
                return ShellResult(stderr=b"usage: grep [-EFivcnq] PATTERN [FILE...]\n", exit_code=2)
            patterns.append(args.pop(0))
        try:
            if "F" in flags:
                regex = re.compile("|".join(re.escape(p) for p in patterns), re.I if "i" in flags else 0)
            else:
                if "E" not in flags:  # basic regex: \( \) \| \{ \} are the operators, ( ) | { } literals
                    patterns = [_bre_to_python(p) for p in patterns]
                regex = re.compile("|".join(f"(?:{p})" for p in patterns), re.I if "i" in flags else 0)
        except re.error as exc:
            return ShellResult(stderr=f"grep: bad regex: {exc}\n".encode(), exit_code=2)
        sources: list[tuple[str, bytes]] = []
        err = bytearray()
        if args:
            for name in args:
                try:
                    sources.append((name, self.fs.read_file(self._path(name))))
                except OSError as exc:
                    err += f"grep: {name}: {_reason(exc)}\n".encode()
        else:
            sources.append(("(standard input)", self._stdin(stdin)))
        out, count_total = bytearray(), 0
        for name, data in sources:
            count = 0
            for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
                if bool(regex.search(line)) == ("v" not in flags):
                    count += 1
                    if "c" not in flags and "q" not in flags:
                        prefix = f"{name}:" if len(sources) > 1 else ""
                        prefix += f"{number}:" if "n" in flags else ""
                        out += f"{prefix}{line}\n".encode()
            if "c" in flags and "q" not in flags:
                out += (f"{name}:{count}\n" if len(sources) > 1 else f"{count}\n").encode()
            count_total += count
        code = 2 if err and not count_total else (0 if count_total else 1)
        return ShellResult(bytes(out), bytes(err), code)


def _bre_to_python(pattern: str) -> str:
    swapped = {"(": r"\(", ")": r"\)", "|": r"\|", "{": r"\{", "}": r"\}", "+": r"\+", "?": r"\?"}
    out, i = [], 0
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            out.append(nxt if nxt in swapped else c + nxt)
            i += 2
        else:
            out.append(swapped.get(c, c))
            i += 1
    return "".join(out)


def _reason(exc: OSError) -> str:
    if isinstance(exc, FileNotFoundError):
        return "No such file or directory"
    if isinstance(exc, IsADirectoryError):
        return "Is a directory"
    if isinstance(exc, NotADirectoryError):
        return "Not a directory"
    if isinstance(exc, FileExistsError):
        return "File exists"
    return exc.strerror or str(exc)


def _long_line(name: str, info: object) -> str:
    mode = getattr(info, "mode", 0)
    size = getattr(info, "size", 0)
    mtime = time.strftime("%Y-%m-%d %H:%M", time.localtime(getattr(info, "mtime", 0)))
    owner = "root root"
    return f"{stat.filemode(mode)} {getattr(info, 'nlink', 1)} {owner} {size:>8} {mtime} {name}"
