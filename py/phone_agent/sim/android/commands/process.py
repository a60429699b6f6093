"""`ps` and `kill`: toybox's process list — a few of Android's own processes plus what runs now (the
scrcpy server started through `app_process` registers itself in ``phone.processes`` while it runs,
and how to end it in ``phone.process_stoppers``) — and ending one of those as the shell user may."""

from __future__ import annotations

from ....device.shell_result import ShellResult
from ..contract import AndroidPhone, FileStore
from .base import fail, ok

HEADER = "USER           PID  PPID        VSZ    RSS WCHAN            ADDR S NAME                       \n"
SYSTEM = [
    ("root", 1, 0, "init"),
    ("root", 2, 0, "[kthreadd]"),
    ("logd", 312, 1, "logd"),
    ("system", 581, 1, "servicemanager"),
    ("root", 612, 1, "zygote64"),
    ("system", 1021, 612, "system_server"),
    ("shell", 2987, 1, "adbd"),
]


def _line(user: str, pid: int, ppid: int, name: str) -> str:
    return f"{user:<10}{pid:>8}{ppid:>6}{10904472:>11}{4096:>7} do_epoll_wait{0:>11} S {name}\n"


def ps(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    rows = list(SYSTEM)
    rows += [("shell", pid, 2987, name) for pid, name in sorted(getattr(phone, "processes", {}).items())]
    if not any(a in ("-A", "-e") for a in args):
        rows = [row for row in rows if row[0] == "shell"]  # without -A: this session's user only
    return ok(HEADER + "".join(_line(*row) for row in rows))


def kill(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    """``kill [-SIGNAL|-s SIGNAL] PID…``: ends what the shell user started; Android's own processes
    are not the shell's to kill (toybox's "Operation not permitted")."""
    pids: list[str] = []
    words = iter(args)
    for word in words:
        if word == "-s":  # -s SIGNAL: the word after it is the signal, not a pid
            next(words, None)
        elif not word.startswith("-"):
            pids.append(word)
    if not pids:
        return fail("usage: kill [-s SIGNAL | -SIGNAL] PID...\n")
    errors, code = [], 0
    system = {pid for _user, pid, _ppid, _name in SYSTEM}
    for text in pids:
        if not text.isdigit():
            errors.append(f"kill: bad pid '{text}'\n")
            code = 1
            continue
        pid = int(text)
        stop = phone.process_stoppers.get(pid)
        if stop is not None:
            stop()
        elif pid in system:
            errors.append(f"kill: {pid}: Operation not permitted\n")
            code = 1
        else:
            errors.append(f"kill: {pid}: No such process\n")
            code = 1
    return fail("".join(errors), code) if code else ok()
