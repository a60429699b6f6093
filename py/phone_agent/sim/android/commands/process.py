"""`ps`: toybox's process list — a few of Android's own processes plus what runs now (the scrcpy
server started through `app_process` registers itself in ``phone.processes`` while it runs)."""

from __future__ import annotations

from ..contract import AndroidPhone, FileStore, ShellResult
from .base import ok

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
