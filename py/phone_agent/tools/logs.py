"""Logs and crashes: the device tools read_logs (the phone's log, ``logcat -d -v threadtime``), and
list_crashes / get_crash (the crash buffer and ``dumpsys dropbox``'s crash, ANR and native crash
reports).

An app's log lines are those of its pids: the ones running now (``pidof``) and the ones the log itself
says it started (ActivityManager's ``Start proc PID:PACKAGE/…``), so the lines of an app that has
crashed are still found. Times are the phone's own clock (``YYYY-MM-DD HH:MM:SS.mmm``); ``sinceSeconds``
counts back from the phone's now. Pure: the phone is reached only through the ``Device`` interface.
"""

from __future__ import annotations

import calendar
import re
import time
from dataclasses import dataclass
from typing import Any

from .. import errors
from ..device.shell_args import PACKAGE_PATTERN, command, for_tool, package_name
from ..errors import DeviceError
from .results import action_result
from .session import DeviceSession
from .spec import BOOLEAN, INTEGER, STRING, STRING_OR_NULL, CallEnv, ToolSpec, object_schema, result_schema

LEVELS = ("V", "D", "I", "W", "E", "F")
LOG_TIMEOUT_MS = 30_000
_LINE = re.compile(
    r"^(?:(\d{4})-)?(\d\d-\d\d \d\d:\d\d:\d\d\.\d+)\s+(\d+)\s+(\d+)\s+([VDIWEFA])\s+(.*?)\s*: (.*)$"
)
_START_PROC = re.compile(r"Start proc (\d+):([\w.]+)/")
_DROPBOX_HEAD = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) (\S+) \((?:text|data)[^)]*\)$")
CRASH_TAGS = {
    "data_app_crash": "crash",
    "system_app_crash": "crash",
    "data_app_anr": "anr",
    "system_app_anr": "anr",
    "data_app_native_crash": "native",
    "system_app_native_crash": "native",
    "SYSTEM_TOMBSTONE": "native",
}

PACKAGE_FILTER = {
    "type": "string",
    "minLength": 1,
    "maxLength": 255,
    "pattern": PACKAGE_PATTERN,
    "description": "Only this app's lines (its processes' pids), e.g. com.example.app.",
}
SINCE = {
    "type": "integer",
    "minimum": 1,
    "maximum": 7 * 86_400,
    "description": "Only the last this many seconds (by the phone's clock).",
}


@dataclass(frozen=True)
class LogLine:
    time: str
    pid: int
    tid: int
    level: str
    tag: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return {
            "time": self.time,
            "pid": self.pid,
            "tid": self.tid,
            "level": self.level,
            "tag": self.tag,
            "message": self.message,
        }


def parse_logcat(text: str, year: int | None = None) -> list[LogLine]:
    """``logcat -v threadtime [-v year]`` lines (the ``--------- beginning of`` lines skipped)."""
    out = []
    for raw in text.splitlines():
        match = _LINE.match(raw)
        if match is None:
            continue
        stamp = f"{match.group(1) or year or time.gmtime().tm_year}-{match.group(2)}"
        level = "F" if match.group(5) == "A" else match.group(5)
        out.append(
            LogLine(stamp, int(match.group(3)), int(match.group(4)), level, match.group(6), match.group(7))
        )
    return out


def stamp_epoch(stamp: str, offset_s: int) -> float:
    """``YYYY-MM-DD HH:MM:SS[.mmm]`` in the phone's local time (UTC + offset) as seconds since the epoch."""
    whole, _, fraction = stamp.partition(".")
    parsed = time.strptime(whole, "%Y-%m-%d %H:%M:%S")
    return calendar.timegm(parsed) - offset_s + float(f"0.{fraction or 0}")


async def phone_clock(phone: DeviceSession) -> tuple[float, int]:
    """The phone's now (seconds since the epoch) and its UTC offset in seconds."""
    result = await phone.device.shell("date +%s%z", 10_000)
    text = result.stdout.decode("utf-8", "replace").strip()
    match = re.fullmatch(r"(\d+)\s*([+-])(\d\d):?(\d\d)", text)
    if match is None:
        if text.isdigit():
            return float(text), 0
        raise DeviceError(f"the phone did not tell its time (date +%s%z answered {text[:80]!r})")
    sign = -1 if match.group(2) == "-" else 1
    return float(match.group(1)), sign * (int(match.group(3)) * 3600 + int(match.group(4)) * 60)


async def app_pids(phone: DeviceSession, package: str, lines: list[LogLine]) -> set[int]:
    result = await phone.device.shell(command("pidof", package_name(package)), 10_000)
    pids = {int(word) for word in result.stdout.decode("utf-8", "replace").split() if word.isdigit()}
    for line in lines:
        for match in _START_PROC.finditer(line.message):
            if match.group(2) == package:
                pids.add(int(match.group(1)))
    return pids


async def logcat(phone: DeviceSession, *options: str) -> str:
    """``logcat -d`` (dump and exit: the log is read, never cleared) with these options."""
    line = command("logcat", "-d", "-v", "threadtime", "-v", "year", *options)
    result = await phone.device.shell(line, LOG_TIMEOUT_MS)
    if result.exit_code not in (0, -1):
        said = (result.stderr or result.stdout).decode("utf-8", "replace").strip()
        raise DeviceError(f"logcat failed: {said[:300]}")
    return result.stdout.decode("utf-8", "replace")


async def read_logs(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    package = None
    if "packageName" in args:
        package = for_tool(package_name, args["packageName"], "read_logs", "packageName")
    phone = env.session()
    pattern = None
    if "grep" in args:
        try:
            pattern = re.compile(args["grep"], re.IGNORECASE)
        except re.error as exc:
            raise errors.invalid_argument(
                "read_logs",
                "grep",
                f"is not a valid regular expression ({exc})",
                "Give a plain word or a valid regex.",
            ) from None
    options = ["-b", "main,system,crash"]
    if "sinceSeconds" in args:
        now, _offset = await phone_clock(phone)
        options += ["-T", f"{now - args['sinceSeconds']:.3f}"]
    lines = parse_logcat(await logcat(phone, *options))
    if package is not None:
        # Start proc lines are the system buffer's: read them too when the level filter hid them.
        pids = await app_pids(phone, package, lines)
        lines = [line for line in lines if line.pid in pids]
    if "level" in args:  # here, not logcat's *:L: the Start proc lines above are level I
        floor = LEVELS.index(args["level"])
        lines = [line for line in lines if LEVELS.index(line.level) >= floor]
    if pattern is not None:
        lines = [line for line in lines if pattern.search(line.tag) or pattern.search(line.message)]
    limit = args["maxLines"]
    truncated = len(lines) > limit
    lines = lines[-limit:]
    text = "\n".join(f"{ln.time} {ln.pid:5d} {ln.tid:5d} {ln.level} {ln.tag}: {ln.message}" for ln in lines)
    head = f"{len(lines)} log lines" + (f" (the last {limit}; more matched)" if truncated else "")
    return action_result(
        head + (":\n" + text if text else "."),
        {"lines": [line.to_json() for line in lines], "truncated": truncated},
    )


LINE_SCHEMA = result_schema(
    {"time": STRING, "pid": INTEGER, "tid": INTEGER, "level": STRING, "tag": STRING, "message": STRING},
    ["time", "pid", "tid", "level", "tag", "message"],
)
READ_LOGS = ToolSpec(
    name="read_logs",
    title="Read the phone's log",
    description="The phone's log (logcat: main, system and crash buffers), newest last: filter by app "
    "(packageName), lowest level (V, D, I, W, E, F), sinceSeconds and grep (a case-insensitive regex on tag "
    "and message); at most maxLines (default 200), truncated says when more matched.",
    input_schema=object_schema(
        {
            "packageName": PACKAGE_FILTER,
            "level": {"type": "string", "enum": list(LEVELS), "description": "The lowest level shown."},
            "sinceSeconds": SINCE,
            "grep": {
                "type": "string",
                "minLength": 1,
                "maxLength": 500,
                "description": "A regex (case-insensitive).",
            },
            "maxLines": {
                "type": "integer",
                "minimum": 1,
                "maximum": 5000,
                "default": 200,
                "description": "At most this many lines, the newest (default 200).",
            },
        }
    ),
    read_only=True,
    consequential=False,
    relay_timeout_ms=60_000,
    output_schema=result_schema(
        {"lines": {"type": "array", "items": LINE_SCHEMA}, "truncated": BOOLEAN}, ["lines", "truncated"]
    ),
    untrusted_content=True,
    run=read_logs,
)


@dataclass
class Crash:
    id: str
    package: str | None
    time: str
    kind: str
    summary: str
    report: str

    def to_json(self, *, report: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "packageName": self.package,
            "time": self.time,
            "kind": self.kind,
            "summary": self.summary,
        }
        if report:
            out["report"] = self.report
        return out


def _package_of(text: str) -> str | None:
    for pattern in (
        r"^Process: ([\w.:]+)",
        r"^Package: ([\w.]+)",
        r"^Cmdline: ([\w.:]+)",
        r">>> ([\w.:]+) <<<",
    ):
        match = re.search(pattern, text, re.MULTILINE)
        if match:
            return match.group(1).split(":")[0]
    return None


def _summary(text: str, kind: str) -> str:
    subject = re.search(r"^Subject: (.*)$", text, re.MULTILINE)
    if kind == "anr" and subject:
        return subject.group(1).strip()
    body = text.split("\n\n", 1)[1] if "\n\n" in text else text
    for line in body.splitlines():
        if line.strip() and not line.startswith(("\tat ", "    at ")):
            return line.strip()[:300]
    return (subject.group(1) if subject else kind)[:300]


def parse_dropbox(text: str) -> list[Crash]:
    """The crash, ANR and native crash entries of ``dumpsys dropbox --print``."""
    crashes: list[Crash] = []
    blocks = re.split(r"^={20,}\s*$", text, flags=re.MULTILINE)
    seen: dict[str, int] = {}
    for block in blocks[1:]:
        head, _, body = block.strip("\n").partition("\n")
        match = _DROPBOX_HEAD.match(head.strip())
        if match is None or match.group(2) not in CRASH_TAGS:
            continue
        stamp, tag = match.group(1), match.group(2)
        kind = CRASH_TAGS[tag]
        base = f"{tag}@{stamp.replace(' ', 'T')}"
        seen[base] = seen.get(base, 0) + 1
        crash_id = base if seen[base] == 1 else f"{base}#{seen[base]}"
        crashes.append(Crash(crash_id, _package_of(body), stamp, kind, _summary(body, kind), body.rstrip()))
    return crashes


def parse_crash_buffer(lines: list[LogLine]) -> list[Crash]:
    """FATAL EXCEPTION blocks (and native ``Fatal signal`` lines) of the crash buffer."""
    crashes: list[Crash] = []
    current: list[LogLine] = []

    def close() -> None:
        if not current:
            return
        first = current[0]
        body = "\n".join(line.message for line in current)
        kind = "native" if first.message.startswith("Fatal signal") else "crash"
        package = _package_of(body)
        process = re.search(r"\(([\w.:]+)\), pid", first.message)
        if package is None and process:
            package = process.group(1).split(":")[0]
        messages = [line.message for line in current[1:] if not line.message.startswith("Process:")]
        summary = next((m.strip() for m in messages if m.strip() and not m.startswith("\tat")), first.message)
        crash_id = f"logcat@{first.time.replace(' ', 'T')}@{first.pid}"
        crashes.append(Crash(crash_id, package, first.time.split(".")[0], kind, summary[:300], body))
        current.clear()

    for line in lines:
        starts = line.message.startswith(("FATAL EXCEPTION", "Fatal signal"))
        if starts or (current and line.pid != current[0].pid):
            close()
        if starts or current:
            current.append(line)
    close()
    return crashes


async def gather_crashes(phone: DeviceSession) -> list[Crash]:
    dropbox = await phone.device.shell("dumpsys dropbox --print", LOG_TIMEOUT_MS)
    crashes = parse_dropbox(dropbox.stdout.decode("utf-8", "replace"))
    buffered = parse_crash_buffer(parse_logcat(await logcat(phone, "-b", "crash")))
    for crash in buffered:  # the same crash in the dropbox and the crash buffer: the dropbox's report
        twin = any(
            other.package == crash.package and other.kind == crash.kind and other.time[:16] == crash.time[:16]
            for other in crashes
        )
        if not twin:
            crashes.append(crash)
    crashes.sort(key=lambda crash: crash.time)
    return crashes


async def list_crashes(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    package = None
    if "packageName" in args:
        package = for_tool(package_name, args["packageName"], "list_crashes", "packageName")
    phone = env.session()
    crashes = await gather_crashes(phone)
    if package is not None:
        crashes = [crash for crash in crashes if crash.package == package]
    if "sinceSeconds" in args:
        now, offset = await phone_clock(phone)
        crashes = [c for c in crashes if stamp_epoch(c.time, offset) >= now - args["sinceSeconds"] - 1]
    text = "\n".join(f"{c.id} {c.kind} {c.package or '?'}: {c.summary}" for c in crashes)
    return action_result(
        f"{len(crashes)} crashes" + (":\n" + text if text else "."),
        {"crashes": [crash.to_json() for crash in crashes]},
    )


CRASH_FIELDS = {
    "id": STRING,
    "packageName": STRING_OR_NULL,
    "time": STRING,
    "kind": {"type": "string", "enum": ["crash", "anr", "native"]},
    "summary": STRING,
}
LIST_CRASHES = ToolSpec(
    name="list_crashes",
    title="List app crashes",
    description="The phone's recorded crashes, ANRs and native crashes (dumpsys dropbox and the crash log), "
    "oldest first, optionally of one app or the last sinceSeconds; get_crash gives one's whole report.",
    input_schema=object_schema({"packageName": PACKAGE_FILTER, "sinceSeconds": SINCE}),
    read_only=True,
    consequential=False,
    relay_timeout_ms=60_000,
    output_schema=result_schema(
        {"crashes": {"type": "array", "items": result_schema(CRASH_FIELDS, list(CRASH_FIELDS))}}, ["crashes"]
    ),
    untrusted_content=True,
    run=list_crashes,
)


async def get_crash(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    phone = env.session()
    wanted = args["id"].strip()
    for crash in await gather_crashes(phone):
        if crash.id == wanted:
            return action_result(crash.report, crash.to_json(report=True))
    raise errors.invalid_argument(
        "get_crash",
        "id",
        f"names no crash the phone still has ({wanted})",
        "Call list_crashes for the ids it has.",
    )


GET_CRASH = ToolSpec(
    name="get_crash",
    title="Get a crash report",
    description="One crash's whole report (stack trace, process, build) by the id list_crashes gave.",
    input_schema=object_schema(
        {
            "id": {
                "type": "string",
                "minLength": 1,
                "maxLength": 300,
                "description": "An id from list_crashes.",
            }
        },
        required=["id"],
    ),
    read_only=True,
    consequential=False,
    relay_timeout_ms=60_000,
    output_schema=result_schema({**CRASH_FIELDS, "report": STRING}, [*CRASH_FIELDS, "report"]),
    untrusted_content=True,
    run=get_crash,
)
