"""The simulated phone's developer-loop state: the log buffers (main, system, crash, events), the
dropbox (crash, ANR and native crash reports), the posted notifications, the notification shade,
the crash dialog, app processes' pids, runtime permissions and the apps installed from APKs.

``DevState`` is held by the phone (``phone.dev``) and reset with it; the commands that read and
change it are ``commands/devloop.py``, the screens that show it ``screens/devloop.py``.
"""

from __future__ import annotations

import time
import zlib
from dataclasses import dataclass, field

from . import apps

CRASH_DEMO = "com.phoneagent.crashdemo"
CRASH_DEMO_ACTIVITY = "com.phoneagent.crashdemo.MainActivity"
BUFFERS = ("main", "system", "crash", "events", "radio")
LEVELS = "VDIWEF"
MAX_ENTRIES = 20_000  # per buffer, like a 256 KiB ring


@dataclass(frozen=True)
class LogEntry:
    time: float
    pid: int
    tid: int
    level: str  # one of LEVELS
    tag: str
    message: str
    buffer: str = "main"


@dataclass(frozen=True)
class DropBoxEntry:
    time: float
    tag: str  # data_app_crash, data_app_anr, data_app_native_crash, system_app_crash …
    text: str


@dataclass
class Notification:
    package: str
    tag: str
    id: int
    title: str
    text: str
    posted: float
    uid: int = 2000

    @property
    def key(self) -> str:
        return f"0|{self.package}|{self.id}|{self.tag}|{self.uid}"


@dataclass
class InstalledApk:
    """What `pm install` learnt of an APK's manifest."""

    package: str
    version_name: str
    version_code: int
    permissions: list[str]
    path: str


def app_pid(package: str) -> int:
    """A running app's pid (stable per package, as if zygote forked it once)."""
    return 4000 + zlib.crc32(package.encode()) % 20000


def app_uid(package: str) -> int:
    return 10100 + zlib.crc32(package.encode()) % 400


@dataclass
class DevState:
    logs: dict[str, list[LogEntry]] = field(default_factory=lambda: {name: [] for name in BUFFERS})
    dropbox: list[DropBoxEntry] = field(default_factory=list)
    notifications: list[Notification] = field(default_factory=list)
    shade: str | None = None  # "notifications" or "settings" while the shade is pulled down
    dialog: str | None = None  # the package whose "keeps stopping" dialog shows
    installed: dict[str, InstalledApk] = field(default_factory=dict)
    # Runtime permissions each package requested, granted or not.
    permissions: dict[str, dict[str, bool]] = field(default_factory=dict)
    zoom: float = 1.0  # the camera's zoom, which a pinch changes
    started: set[str] = field(default_factory=set)  # packages whose process runs

    def __post_init__(self) -> None:
        self.permissions.setdefault(CRASH_DEMO, {"android.permission.CAMERA": False})
        boot = time.time() - 30
        self.log("I", "ActivityManager", "System now ready", pid=1021, at=boot, buffer="system")
        self.log("I", "Zygote", "Process 1021 forked system_server", pid=612, at=boot)

    def log(
        self,
        level: str,
        tag: str,
        message: str,
        *,
        pid: int = 1021,
        tid: int | None = None,
        buffer: str = "main",
        at: float | None = None,
    ) -> None:
        """Add one line to a buffer (each line of a multi-line message is its own entry, as Android's)."""
        when = time.time() if at is None else at
        entries = self.logs.setdefault(buffer, [])
        for line in message.split("\n"):
            entries.append(LogEntry(when, pid, pid if tid is None else tid, level, tag, line, buffer))
        del entries[:-MAX_ENTRIES]

    def app_started(self, package: str) -> None:
        """Log the process start the first time an app comes up (ActivityManager's "Start proc")."""
        if package in self.started:
            return
        self.started.add(package)
        app = apps.APPS.get(package)
        activity = app.main_activity if app is not None else ""
        self.log(
            "I",
            "ActivityManager",
            f"Start proc {app_pid(package)}:{package}/u0a{app_uid(package) - 10000} for "
            f"top-activity {{{package}/{activity}}}",
            buffer="system",
        )

    def crash(self, package: str, label: str) -> None:
        """The app's main thread threw: the crash buffer's FATAL EXCEPTION, a dropbox entry, the
        process gone and the "keeps stopping" dialog."""
        pid = app_pid(package)
        trace = [
            "java.lang.IllegalStateException: Crash now was pressed",
            f"\tat {package}.MainActivity.onCrashClicked(MainActivity.java:42)",
            "\tat android.view.View.performClick(View.java:7659)",
            "\tat android.view.View.performClickInternal(View.java:7636)",
            "\tat android.view.View$PerformClick.run(View.java:30156)",
            "\tat android.os.Handler.handleCallback(Handler.java:958)",
            "\tat android.os.Handler.dispatchMessage(Handler.java:99)",
            "\tat android.os.Looper.loopOnce(Looper.java:205)",
            "\tat android.os.Looper.loop(Looper.java:294)",
            "\tat android.app.ActivityThread.main(ActivityThread.java:8177)",
            "\tat java.lang.reflect.Method.invoke(Native Method)",
            "\tat com.android.internal.os.RuntimeInit$MethodAndArgsCaller.run(RuntimeInit.java:552)",
            "\tat com.android.internal.os.ZygoteInit.main(ZygoteInit.java:971)",
        ]
        now = time.time()
        self.log("D", "CrashDemo", "Crash now pressed: throwing", pid=pid, at=now)
        self.log(
            "E",
            "AndroidRuntime",
            "\n".join(["FATAL EXCEPTION: main", f"Process: {package}, PID: {pid}", *trace]),
            pid=pid,
            buffer="crash",
            at=now,
        )
        self.log("I", "Process", f"Sending signal. PID: {pid} SIG: 9", pid=pid, at=now)
        self.log(
            "W",
            "ActivityTaskManager",
            f"  Force finishing activity {package}/.MainActivity",
            at=now,
            buffer="system",
        )
        header = (
            f"Process: {package}\nPID: {pid}\nUID: {app_uid(package)}\nFlags: 0x38c83e44\n"
            f"Package: {package} v1 (1.0)\nForeground: Yes\nProcess-Runtime: 5123\n"
            "Build: google/panther/panther:14/UQ1A.240205.002/11224170:user/release-keys\n"
            "Loading-Progress: 1.0\nDropped-Count: 0\n\n"
        )
        self.dropbox.append(DropBoxEntry(now, "data_app_crash", header + "\n".join(trace) + "\n"))
        self.started.discard(package)
        self.dialog = label

    def post(self, package: str, tag: str, title: str, text: str) -> Notification:
        """Post (or update, for the same tag) a notification."""
        for old in self.notifications:
            if old.package == package and old.tag == tag:
                old.title, old.text, old.posted = title, text, time.time()
                return old
        note = Notification(package, tag, zlib.crc32(tag.encode()) & 0x7FFFFFFF, title, text, time.time())
        self.notifications.append(note)
        return note
