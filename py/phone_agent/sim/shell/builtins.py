"""The shell's builtins: the toybox commands the simulated phone's sh runs itself, with toybox's messages.

Each is a function of the session (its files, working directory, variables and stdin), the argv and the
stdin a pipe or redirection gives (None: the session's own); ``BUILTINS`` maps the command names to them.
"""

from __future__ import annotations

import hashlib
import re
import stat
import time

from ...device.shell_result import ShellResult
from .session import SH, Builtin, LoopControl, ShellExit, ShellSession, reason

MAX_SLEEP = 10.0  # seconds; a longer sleep is cut short
ID_LINE = (
    b"uid=2000(shell) gid=2000(shell) groups=2000(shell),1004(input),1007(log),1011(adb),"
    b"1015(sdcard_rw) context=u:r:shell:s0\n"
)


def echo(shell: ShellSession, argv: list[str], stdin: bytes | None) -> ShellResult:
    args, newline = argv[1:], True
    if args and args[0] == "-n":
        args, newline = args[1:], False
    return ShellResult((" ".join(args) + ("\n" if newline else "")).encode())


def cat(shell: ShellSession, argv: list[str], stdin: bytes | None) -> ShellResult:
    files = [a for a in argv[1:] if a != "-"] if len(argv) > 1 else []
    if len(argv) == 1 or "-" in argv[1:]:
        data = shell.stdin(stdin)
        if not files:
            return ShellResult(data)
    if len(files) == 1 and len(argv) == 2:  # one file: its bytes as they are (no copy)
        try:
            return ShellResult(shell.fs.read_file(shell.path(files[0])))
        except OSError as exc:
            return ShellResult(b"", f"cat: {files[0]}: {reason(exc)}\n".encode(), 1)
    out, err, code = bytearray(), bytearray(), 0
    for name in files:
        try:
            out += shell.fs.read_file(shell.path(name))
        except OSError as exc:
            err += f"cat: {name}: {reason(exc)}\n".encode()
            code = 1
    return ShellResult(bytes(out), bytes(err), code)


def sha256sum(shell: ShellSession, argv: list[str], stdin: bytes | None) -> ShellResult:
    return _digest_sum(shell, argv, stdin, "sha256")


def md5sum(shell: ShellSession, argv: list[str], stdin: bytes | None) -> ShellResult:
    return _digest_sum(shell, argv, stdin, "md5")


def _digest_sum(shell: ShellSession, argv: list[str], stdin: bytes | None, algorithm: str) -> ShellResult:
    """toybox's sha256sum and md5sum: ``DIGEST  NAME`` a line; a file that cannot be read says why."""
    out, err, code = bytearray(), bytearray(), 0
    for name in argv[1:] or ["-"]:
        try:
            data = shell.stdin(stdin) if name == "-" else shell.fs.read_file(shell.path(name))
        except OSError as exc:
            err += f"{argv[0]}: {name}: {reason(exc)}\n".encode()
            code = 1
            continue
        out += f"{hashlib.new(algorithm, data).hexdigest()}  {name}\n".encode()
    return ShellResult(bytes(out), bytes(err), code)


def ls(shell: ShellSession, argv: list[str], stdin: bytes | None) -> ShellResult:
    flags = "".join(a[1:] for a in argv[1:] if a.startswith("-") and len(a) > 1)
    names = [a for a in argv[1:] if not a.startswith("-") or a == "-"] or ["."]
    long, show_all, directory_only = "l" in flags, "a" in flags, "d" in flags
    out, err, code = bytearray(), bytearray(), 0
    for index, name in enumerate(names):
        path = shell.path(name)
        try:
            info = shell.fs.stat(path)
        except OSError as exc:
            err += f"ls: {name}: {reason(exc)}\n".encode()
            code = 1
            continue
        if not info.is_dir or directory_only:
            out += (_long_line(name, info) if long else name).encode() + b"\n"
            continue
        entries = shell.fs.list_dir(path)
        if show_all:
            entries = [(".", info), ("..", shell.fs.stat(shell.fs.normalize(path + "/.."))), *entries]
        if len(names) > 1:
            out += f"{'' if index == 0 else chr(10)}{name}:\n".encode()
        if long:
            out += f"total {len(entries) * 8}\n".encode()
        for entry, entry_info in entries:
            if entry.startswith(".") and not show_all:
                continue
            out += (_long_line(entry, entry_info) if long else entry).encode() + b"\n"
    return ShellResult(bytes(out), bytes(err), code)


def rm(shell: ShellSession, argv: list[str], stdin: bytes | None) -> ShellResult:
    flags = "".join(a[1:] for a in argv[1:] if a.startswith("-"))
    recursive, force = "r" in flags.lower(), "f" in flags
    err, code = bytearray(), 0
    for name in (a for a in argv[1:] if not a.startswith("-")):
        path = shell.path(name)
        try:
            if shell.fs.is_dir(path) and not recursive:
                raise IsADirectoryError(path)
            shell.fs.remove(path, recursive=recursive)
        except FileNotFoundError:
            if not force:
                err += f"rm: {name}: No such file or directory\n".encode()
                code = 1
        except OSError as exc:
            err += f"rm: {name}: {reason(exc)}\n".encode()
            code = 1
    return ShellResult(b"", bytes(err), code)


def mkdir(shell: ShellSession, argv: list[str], stdin: bytes | None) -> ShellResult:
    parents = any(a.startswith("-") and "p" in a for a in argv[1:])
    err, code = bytearray(), 0
    for name in (a for a in argv[1:] if not a.startswith("-")):
        try:
            shell.fs.mkdir(shell.path(name), parents=parents)
        except OSError as exc:
            err += f"mkdir: '{name}': {reason(exc)}\n".encode()
            code = 1
    return ShellResult(b"", bytes(err), code)


def export(shell: ShellSession, argv: list[str], stdin: bytes | None) -> ShellResult:
    for item in argv[1:]:
        name, _, value = item.partition("=")
        shell.env[name] = value
    return ShellResult()


def exec_(shell: ShellSession, argv: list[str], stdin: bytes | None) -> ShellResult:
    return shell.execute(argv[1:], stdin) if len(argv) > 1 else ShellResult()


def uname(shell: ShellSession, argv: list[str], stdin: bytes | None) -> ShellResult:
    if "-a" in argv:
        return ShellResult(b"Linux localhost 5.10.198-android13-4 #1 SMP PREEMPT aarch64 Toybox\n")
    return ShellResult(b"Linux\n")


def sleep(shell: ShellSession, argv: list[str], stdin: bytes | None) -> ShellResult:
    try:
        seconds = float(argv[1]) if len(argv) > 1 else 0.0
    except ValueError:
        return ShellResult(stderr=f"sleep: invalid number '{argv[1]}'\n".encode(), exit_code=1)
    time.sleep(min(max(seconds, 0.0), MAX_SLEEP))  # bounded: nothing in the sim may hang
    return ShellResult()


def which(shell: ShellSession, argv: list[str], stdin: bytes | None) -> ShellResult:
    out, code = bytearray(), 0
    phone_commands = shell.phone.command_names() if shell.phone is not None else frozenset()
    for name in argv[1:]:
        if name in BUILTINS or name in phone_commands:
            out += f"/system/bin/{name}\n".encode()
        else:
            code = 1
    return ShellResult(bytes(out), b"", code)


def head_tail(shell: ShellSession, argv: list[str], stdin: bytes | None) -> ShellResult:
    count, files, args = 10, [], iter(argv[1:])
    for arg in args:
        if arg == "-n":
            arg = "-" + next(args, "10")
        if arg.startswith("-") and arg[1:].isdigit():
            count = int(arg[1:])
        else:
            files.append(arg)
    try:
        data = b"".join(shell.fs.read_file(shell.path(f)) for f in files) if files else shell.stdin(stdin)
    except OSError as exc:
        return ShellResult(stderr=f"{argv[0]}: {files[0]}: {reason(exc)}\n".encode(), exit_code=1)
    lines = data.splitlines(keepends=True)
    picked = lines[:count] if argv[0] == "head" else lines[-count:] if count else []
    return ShellResult(b"".join(picked))


def wc(shell: ShellSession, argv: list[str], stdin: bytes | None) -> ShellResult:
    files = [a for a in argv[1:] if not a.startswith("-")]
    try:
        data = b"".join(shell.fs.read_file(shell.path(f)) for f in files) if files else shell.stdin(stdin)
    except OSError as exc:
        return ShellResult(stderr=f"wc: {files[0]}: {reason(exc)}\n".encode(), exit_code=1)
    counts = {"l": data.count(b"\n"), "w": len(data.split()), "c": len(data)}
    flags = "".join(a[1:] for a in argv[1:] if a.startswith("-")) or "lwc"
    return ShellResult((" ".join(str(counts[f]) for f in "lwc" if f in flags) + "\n").encode())


def logcat(shell: ShellSession, argv: list[str], stdin: bytes | None) -> ShellResult:
    if shell.phone is not None and "logcat" in shell.phone.command_names():  # the phone's own log
        return shell.phone.run(["logcat", *argv[1:]], stdin or b"", shell.fs)
    # A phone that keeps no log: print what a freshly booted one shows, as if -d.
    stamp = time.strftime("%m-%d %H:%M:%S.000")
    lines = [
        "--------- beginning of main",
        f"{stamp}  1000  1000 I ActivityManager: simulated phone ready",
        "--------- beginning of system",
    ]
    return ShellResult(("\n".join(lines) + "\n").encode())


def touch(shell: ShellSession, argv: list[str], stdin: bytes | None) -> ShellResult:
    err, code = bytearray(), 0
    for name in (a for a in argv[1:] if not a.startswith("-")):
        path = shell.path(name)
        try:
            data = shell.fs.read_file(path) if shell.fs.exists(path) else b""
            shell.fs.write_file(path, data, mtime=int(time.time()))
        except OSError as exc:
            err += f"touch: '{name}': {reason(exc)}\n".encode()
            code = 1
    return ShellResult(b"", bytes(err), code)


def cd(shell: ShellSession, argv: list[str], stdin: bytes | None) -> ShellResult:
    path = shell.path(argv[1] if len(argv) > 1 else "/")
    if not shell.fs.is_dir(path):
        return ShellResult(stderr=f"{SH}: cd: {path}: No such file or directory\n".encode(), exit_code=2)
    shell.cwd = path
    return ShellResult()


def exit_(shell: ShellSession, argv: list[str], stdin: bytes | None) -> ShellResult:
    try:
        code = int(argv[1]) & 0xFF if len(argv) > 1 else shell.status
    except ValueError:
        return ShellResult(stderr=f"{SH}: exit: {argv[1]}: bad number\n".encode(), exit_code=2)
    raise ShellExit(code)


def sh(shell: ShellSession, argv: list[str], stdin: bytes | None) -> ShellResult:
    if len(argv) >= 3 and argv[1] == "-c":
        inner = shell.subshell(read_stdin=lambda: shell.stdin(stdin))
        inner.env = dict(shell.env)
        return inner.run(argv[2])
    if len(argv) == 1:
        inner = shell.subshell()
        return inner.run(shell.stdin(stdin).decode("utf-8", "replace"))
    return ShellResult(stderr=f"{SH}: {argv[1]}: can't open\n".encode(), exit_code=127)


_INT_TESTS = {
    "-eq": lambda a, b: a == b,
    "-ne": lambda a, b: a != b,
    "-lt": lambda a, b: a < b,
    "-le": lambda a, b: a <= b,
    "-gt": lambda a, b: a > b,
    "-ge": lambda a, b: a >= b,
}


def test(shell: ShellSession, argv: list[str], stdin: bytes | None) -> ShellResult:
    """``test`` and ``[ … ]``: strings, integers, files; ``!``; exit 0 true, 1 false, 2 misuse."""
    args = argv[1:]
    if argv[0] == "[":
        if not args or args[-1] != "]":
            return ShellResult(stderr=f"{SH}: [: missing ]\n".encode(), exit_code=2)
        args = args[:-1]
    negate = False
    while args and args[0] == "!" and len(args) > 1:
        negate, args = not negate, args[1:]
    try:
        truth = _test_truth(shell, args)
    except ValueError as exc:
        return ShellResult(stderr=f"{SH}: {argv[0]}: {exc}\n".encode(), exit_code=2)
    return ShellResult(exit_code=int(truth == negate))


def _test_truth(shell: ShellSession, args: list[str]) -> bool:
    if not args:
        return False
    if len(args) == 1:
        return args[0] != ""
    if len(args) == 2:
        op, operand = args
        if op in ("-e", "-f", "-d"):
            path = shell.path(operand)
            exists, is_dir = shell.fs.exists(path), shell.fs.is_dir(path)
            return {"-e": exists, "-f": exists and not is_dir, "-d": is_dir}[op]
        if op in ("-z", "-n"):
            return (operand == "") == (op == "-z")
        raise ValueError(f"{op}: unexpected operator")
    if len(args) == 3:
        left, op, right = args
        if op in ("=", "=="):
            return left == right
        if op == "!=":
            return left != right
        if op in _INT_TESTS:
            try:
                return _INT_TESTS[op](int(left), int(right))
            except ValueError:
                raise ValueError(f"{left if not left.lstrip('-').isdigit() else right}: bad number") from None
        raise ValueError(f"{op}: unexpected operator")
    raise ValueError("too many arguments")


def seq(shell: ShellSession, argv: list[str], stdin: bytes | None) -> ShellResult:
    try:
        numbers = [int(a) for a in argv[1:]]
    except ValueError:
        return ShellResult(stderr=b"seq: not integer\n", exit_code=1)
    if not 1 <= len(numbers) <= 3:
        return ShellResult(
            stderr=b"usage: seq [-w|-f fmt_str] [-s sep_str] [first] [increment] last\n", exit_code=1
        )
    first, step, last = (1, 1, numbers[0]) if len(numbers) == 1 else (numbers[0], 1, numbers[1])
    if len(numbers) == 3:
        first, step, last = numbers
    values = range(first, last + (1 if step > 0 else -1), step) if step else []
    return ShellResult("".join(f"{v}\n" for v in list(values)[:100_000]).encode())


def loop_control(shell: ShellSession, argv: list[str], stdin: bytes | None) -> ShellResult:
    """``break [n]`` and ``continue [n]``: leave (or go round) the innermost n loops."""
    try:
        levels = int(argv[1]) if len(argv) > 1 else 1
    except ValueError:
        return ShellResult(stderr=f"{SH}: {argv[0]}: {argv[1]}: bad number\n".encode(), exit_code=1)
    raise LoopControl(argv[0], max(1, levels))


def grep(shell: ShellSession, argv: list[str], stdin: bytes | None) -> ShellResult:
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
                sources.append((name, shell.fs.read_file(shell.path(name))))
            except OSError as exc:
                err += f"grep: {name}: {reason(exc)}\n".encode()
    else:
        sources.append(("(standard input)", shell.stdin(stdin)))
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


def _long_line(name: str, info: object) -> str:
    mode = getattr(info, "mode", 0)
    size = getattr(info, "size", 0)
    mtime = time.strftime("%Y-%m-%d %H:%M", time.localtime(getattr(info, "mtime", 0)))
    owner = "root root"
    return f"{stat.filemode(mode)} {getattr(info, 'nlink', 1)} {owner} {size:>8} {mtime} {name}"


def pwd(shell: ShellSession, argv: list[str], stdin: bytes | None) -> ShellResult:
    return ShellResult((shell.cwd + "\n").encode())


def date(shell: ShellSession, argv: list[str], stdin: bytes | None) -> ShellResult:
    formats = [a[1:] for a in argv[1:] if a.startswith("+")]
    if formats:  # toybox's +FORMAT, %s (seconds since the epoch) included
        now = time.time()
        return ShellResult(
            (time.strftime(formats[0].replace("%s", str(int(now))), time.localtime(now)) + "\n").encode()
        )
    return ShellResult(time.strftime("%a %b %d %H:%M:%S %Z %Y\n").encode())


BUILTINS: dict[str, Builtin] = {
    "echo": echo,
    "cat": cat,
    "ls": ls,
    "rm": rm,
    "mkdir": mkdir,
    "sh": sh,
    "true": lambda shell, argv, stdin: ShellResult(),
    ":": lambda shell, argv, stdin: ShellResult(),
    "test": test,
    "[": test,
    "seq": seq,
    "break": loop_control,
    "continue": loop_control,
    "false": lambda shell, argv, stdin: ShellResult(exit_code=1),
    "exit": exit_,
    "grep": grep,
    "pwd": pwd,
    "cd": cd,
    "touch": touch,
    "export": export,
    "exec": exec_,
    "id": lambda shell, argv, stdin: ShellResult(ID_LINE),
    "whoami": lambda shell, argv, stdin: ShellResult(b"shell\n"),
    "uname": uname,
    "date": date,
    "sleep": sleep,
    "which": which,
    "logcat": logcat,
    "head": head_tail,
    "tail": head_tail,
    "wc": wc,
    "sha256sum": sha256sum,
    "md5sum": md5sum,
}
