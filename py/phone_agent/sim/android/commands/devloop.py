"""The developer loop's Android commands on the simulated phone, in Android's own words: `pm install`
(the APK's manifest read with pyaxmlparser), `pm uninstall|clear|grant|revoke`, `log`, `logcat` (buffers,
formats, filter specs, ``-t``), `pidof`, `dumpsys package|notification|dropbox`, `cmd notification post`
and `cmd statusbar expand-notifications|expand-settings|collapse`.
"""

from __future__ import annotations

import logging
import re
import time
import zlib

from ....device.shell_result import ShellResult
from .. import apps
from ..contract import AndroidPhone, FileStore
from ..devloop_state import LEVELS, InstalledApk, LogEntry, app_pid, app_uid
from .base import fail, ok

log = logging.getLogger(__name__)

RUNTIME_PERMISSIONS = frozenset(
    "android.permission." + name
    for name in (
        "CAMERA RECORD_AUDIO ACCESS_FINE_LOCATION ACCESS_COARSE_LOCATION ACCESS_BACKGROUND_LOCATION "
        "READ_CONTACTS WRITE_CONTACTS GET_ACCOUNTS READ_CALENDAR WRITE_CALENDAR READ_PHONE_STATE "
        "CALL_PHONE READ_CALL_LOG WRITE_CALL_LOG SEND_SMS RECEIVE_SMS READ_SMS READ_EXTERNAL_STORAGE "
        "WRITE_EXTERNAL_STORAGE READ_MEDIA_IMAGES READ_MEDIA_VIDEO READ_MEDIA_AUDIO POST_NOTIFICATIONS "
        "BODY_SENSORS NEARBY_WIFI_DEVICES BLUETOOTH_CONNECT BLUETOOTH_SCAN"
    ).split()
)


def _exception(command: str, java_class: str, message: str) -> ShellResult:
    return fail(f"\nException occurred while executing '{command}':\n{java_class}: {message}\n", 255)


# ----- pm ----------------------------------------------------------------------------------------------


def pm_install(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    """``pm install [-r] [-g] [-t] [-S SIZE] [PATH]`` (with -S the APK comes on stdin)."""
    flags = [a for a in args if a.startswith("-")]
    words = [a for a in args if not a.startswith("-")]
    if "-S" in flags and words and words[0].isdigit():
        data, source = stdin[: int(words[0])], "stdin"
    elif words:
        source = words[-1]
        try:
            data = fs.read_file(source)
        except OSError:
            return _exception(
                "install", "java.lang.IllegalArgumentException", f"Error: Can't open file: {source}"
            )
    else:
        return fail("Error: must either specify a package size or an APK file\n", 1)
    try:
        from pyaxmlparser import APK  # the sim only: the page reads manifests itself (tools/apk.py)

        apk = APK(data, raw=True)
        package = apk.package
        if not apk.is_valid_APK() or not package:
            raise ValueError("no AndroidManifest.xml")
        version_code = int(apk.version_code or 0)
        version_name = apk.version_name or ""
        main = apk.get_main_activity() or ""
        label = apk.application or package.rsplit(".", 1)[-1]
        requested = list(dict.fromkeys(apk.get_permissions()))
    except Exception as exc:
        log.debug("pm install: not an APK: %s", exc)
        return fail(
            "",
            1,
            f"Failure [INSTALL_PARSE_FAILED_NOT_APK: Failed parse during installPackageLI: "
            f"Failed to parse {source}: {exc}]\n",
        )
    existing = phone.apps.get(package)
    if existing is not None and package not in phone.dev.installed and not existing.third_party:
        return fail(
            "",
            1,
            f"Failure [INSTALL_FAILED_UPDATE_INCOMPATIBLE: Existing package {package} "
            "signatures do not match newer version; ignoring!]\n",
        )
    before = phone.dev.installed.get(package)
    if before is not None and before.version_code > version_code:
        return fail(
            "",
            1,
            f"Failure [INSTALL_FAILED_VERSION_DOWNGRADE: Downgrade detected: Update version "
            f"code {version_code} is older than current {before.version_code}]\n",
        )
    path = f"/data/app/~~sim{zlib.crc32(package.encode()):08x}==/{package}-1/base.apk"
    try:
        _mkdirs(fs, path)
        fs.write_file(path, data)
    except OSError as exc:
        return fail("", 1, f"Failure [INSTALL_FAILED_INSUFFICIENT_STORAGE: {exc}]\n")
    phone.force_stop(package)
    phone.apps[package] = apps.App(
        package,
        str(label),
        main,
        third_party=True,
        color=(0, 121, 107),
        glyph=str(label)[:1].upper(),
        screens={main: "apk/main"} if main else {},
    )
    phone.dev.installed[package] = InstalledApk(package, version_name, version_code, requested, path)
    grant = "-g" in flags
    old = phone.dev.permissions.get(package, {})
    phone.dev.permissions[package] = {
        p: grant or old.get(p, False) for p in requested if p in RUNTIME_PERMISSIONS
    }
    phone.dev.log(
        "I", "PackageManager", f"Installed {package} v{version_code} ({version_name})", buffer="system"
    )
    phone.version += 1
    return ok("Success\n")


def _mkdirs(fs: FileStore, path: str) -> None:
    mkdir = getattr(fs, "mkdir", None)
    if mkdir is not None:
        mkdir(path.rsplit("/", 1)[0], parents=True)


def pm_uninstall(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    words = [a for a in args if not a.startswith("-")]
    if "--user" in args and len(words) > 1:
        words = words[1:]
    package = words[-1] if words else ""
    app = phone.apps.get(package)
    if app is None or not app.third_party:
        return fail("", 1, "Failure [DELETE_FAILED_INTERNAL_ERROR]\n")
    phone.force_stop(package)
    del phone.apps[package]
    installed = phone.dev.installed.pop(package, None)
    if installed is not None:
        remove = getattr(fs, "remove", None)
        if remove is not None:
            try:
                remove(installed.path)
            except OSError:
                pass
    if "-k" not in args:
        phone.dev.permissions.pop(package, None)
    phone.dev.notifications = [n for n in phone.dev.notifications if n.package != package]
    phone.dev.log("I", "PackageManager", f"Uninstalled {package}", buffer="system")
    phone.version += 1
    return ok("Success\n")


def pm_clear(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    words = [a for a in args if not a.startswith("-")]
    package = words[-1] if words else ""
    if package not in phone.apps:
        return fail("", 1, "Failed\n")
    phone.force_stop(package)
    permissions = phone.dev.permissions.get(package, {})
    for name in permissions:
        permissions[name] = False  # clearing an app's storage resets its runtime permissions
    phone.dev.notifications = [n for n in phone.dev.notifications if n.package != package]
    if package == apps.MESSAGES:
        phone.drafts.clear()
    phone.version += 1
    return ok("Success\n")


def pm_grant(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore, grant: bool) -> ShellResult:
    command = "grant" if grant else "revoke"
    words = [a for a in args if not a.startswith("-")]
    if "--user" in args and len(words) > 2:
        words = words[1:]
    if len(words) < 2:
        return _exception(command, "java.lang.IllegalArgumentException", "no package or permission specified")
    package, permission = words[0], words[1]
    if package not in phone.apps:
        return _exception(command, "java.lang.IllegalArgumentException", f"Unknown package: {package}")
    requested = phone.dev.permissions.get(package, {})
    if permission not in requested:
        installed = phone.dev.installed.get(package)
        if installed is not None and permission in installed.permissions:
            return _exception(
                command,
                "java.lang.SecurityException",
                f"Permission {permission} requested by {package} is not a changeable permission type",
            )
        return _exception(
            command,
            "java.lang.SecurityException",
            f"Package {package} has not requested permission {permission}",
        )
    requested[permission] = grant
    phone.version += 1
    return ok()


# ----- dumpsys package | notification | dropbox --------------------------------------------------------


def dumpsys_package(phone: AndroidPhone, args: list[str]) -> ShellResult:
    package = next((a for a in args if not a.startswith("-")), "")
    app = phone.apps.get(package)
    if app is None:
        return ok(f"Unable to find package: {package}\n")
    installed = phone.dev.installed.get(package)
    code, name = (installed.version_code, installed.version_name) if installed else (34, "14")
    out = [
        "Packages:",
        f"  Package [{package}] ({zlib.crc32(package.encode()):07x}):",
        f"    userId={app_uid(package)}",
        f"    pkg=Package{{{zlib.crc32(package.encode()):07x} {package}}}",
        f"    versionCode={code} minSdk=21 targetSdk=34",
        f"    versionName={name}",
        "    install permissions:",
    ]
    runtime = phone.dev.permissions.get(package, {})
    if installed is not None:
        out += [f"      {p}: granted=true" for p in installed.permissions if p not in runtime]
    out += [
        "    User 0: ceDataInode=0 installed=true hidden=false suspended=false stopped=false",
        "      runtime permissions:",
    ]
    out += [
        f"        {p}: granted={str(g).lower()}, flags=[ USER_SENSITIVE_WHEN_GRANTED ]"
        for p, g in runtime.items()
    ]
    return ok("\n".join(out) + "\n")


def dumpsys_notification(phone: AndroidPhone, args: list[str]) -> ShellResult:
    redact = "--noredact" not in args
    out = ["Current Notification Manager state:", "  Notification List:"]
    for note in phone.dev.notifications:

        def shown(text: str) -> str:
            return f"String [length={len(text)}]" if redact else f"String ({text})"

        out += [
            f"    NotificationRecord(0x{zlib.crc32(note.key.encode()):08x}: pkg={note.package} "
            f"user=UserHandle{{0}} id={note.id} tag={note.tag} importance=3 key={note.key}: "
            "Notification(channel=shell_cmd shortcut=null contentView=null vibrate=null sound=null "
            "defaults=0x0 flags=0x10 color=0x00000000 vis=PRIVATE))",
            f"      uid={note.uid} userId=0",
            f"      opPkg={note.package}",
            f"      key={note.key}",
            "      seen=false",
            "      notification=",
            "        pri=0",
            "        extras={",
            f"          android.title={shown(note.title)}",
            f"          android.text={shown(note.text)}",
            "          android.reduced.images=Boolean (true)",
            "        }",
            f"      mCreationTimeMs={int(note.posted * 1000)}",
        ]
    out += ["", f"  mNotificationList size={len(phone.dev.notifications)}"]
    return ok("\n".join(out) + "\n")


def dumpsys_dropbox(phone: AndroidPhone, args: list[str]) -> ShellResult:
    printing = "--print" in args or "-p" in args
    tags = [a for a in args if not a.startswith("-")]
    chosen = [e for e in phone.dev.dropbox if not tags or e.tag in tags]
    out = [f"Drop box contents: {len(phone.dev.dropbox)} entries", "Max entries: 1000", ""]
    if tags:
        out += [f"Searching for: {' '.join(tags)}", ""]
    for entry in chosen:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(entry.time))
        head = f"{stamp} {entry.tag} (text, {len(entry.text.encode())} bytes)"
        if printing:
            out += ["========================================", head, entry.text]
        else:
            out += [head, "    " + entry.text[:70].replace("\n", "\\n")]
    if not chosen:
        out.append("(No entries found.)")
    return ok("\n".join(out) + "\n")


# ----- cmd notification | statusbar ---------------------------------------------------------------


def cmd_notification(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    if not args or args[0] != "post":
        return ok("usage: cmd notification post [flags] <tag> <text>\n")
    title, words, it = "", [], iter(args[1:])
    for word in it:
        if word in ("-t", "--title"):
            title = next(it, "")
        elif word in ("-S", "--style", "-i", "--icon", "-I", "--large-icon", "-c", "--conversation"):
            next(it, None)
        elif word in ("-v", "--verbose", "-h", "--help"):
            continue
        else:
            words.append(word)
    if len(words) < 2:
        return _exception("post", "java.lang.IllegalArgumentException", "Notification tag and text required")
    phone.dev.post("com.android.shell", words[0], title, " ".join(words[1:]))
    phone.version += 1
    return ok()


def cmd_statusbar(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    sub = args[0] if args else ""
    if sub in ("expand-notifications", "expand-settings", "collapse"):
        phone.dev.shade = {"expand-notifications": "notifications", "expand-settings": "settings"}.get(sub)
        phone.version += 1
        for listener in list(getattr(phone, "change_listeners", [])):
            listener()
        return ok()
    return ok("usage: cmd statusbar expand-notifications|expand-settings|collapse\n")


# ----- log, logcat, pidof ---------------------------------------------------------------------------


def log_command(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    """``log [-p PRIORITY] [-t TAG] MESSAGE…``: one line into the main buffer."""
    priority, tag, words, it = "I", "log", [], iter(args)
    for word in it:
        if word == "-p":
            priority = next(it, "i")[:1].upper()
        elif word == "-t":
            tag = next(it, "log")
        else:
            words.append(word)
    if priority not in LEVELS:
        return fail(f"log: invalid priority '{priority.lower()}'\n", 1)
    phone.dev.log(priority, tag, " ".join(words), pid=5123, buffer="main")
    return ok()


def _format(entry: LogEntry, formats: set[str]) -> str:
    local = time.localtime(entry.time)
    millis = int(entry.time * 1000) % 1000
    if "epoch" in formats:
        stamp = f"{int(entry.time):>10}.{millis:03d}"
    else:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S" if "year" in formats else "%m-%d %H:%M:%S", local)
        stamp += f".{millis:03d}"
    if "brief" in formats:
        return f"{entry.level}/{entry.tag}({entry.pid:5d}): {entry.message}"
    if "time" in formats:
        return f"{stamp} {entry.level}/{entry.tag}({entry.pid:5d}): {entry.message}"
    return f"{stamp} {entry.pid:5d} {entry.tid:5d} {entry.level} {entry.tag:<8}: {entry.message}"


def _since(text: str) -> float | None:
    """``-t``/``-T``'s time forms: seconds.millis since the epoch, or [YYYY-]MM-DD hh:mm:ss.mmm."""
    if re.fullmatch(r"\d+\.\d+", text):
        return float(text)
    match = re.fullmatch(r"(?:(\d{4})-)?(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(?:\.(\d+))?", text)
    if match is None:
        return None
    year = int(match.group(1) or time.localtime().tm_year)
    fields = (year, *(int(g) for g in match.groups()[1:6]), 0, 0, -1)
    return time.mktime(fields) + float("0." + (match.group(7) or "0"))  # type: ignore[arg-type]


def logcat(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    """``logcat -d [-b BUF] [-v FMT] [-t N|TIME] [-m N] [--pid=P] [-e RE] [-s] [-c] [TAG:L …]`` (without
    -d it dumps too: the simulated phone does not stream)."""
    buffers: list[str] = []
    formats: set[str] = set()
    count, since, max_count, pid, regex, silent, specs = None, None, None, None, None, False, []
    it = iter(args)
    for word in it:
        if word == "-b" or word.startswith("--buffer="):
            value = next(it, "") if word == "-b" else word.split("=", 1)[1]
            buffers += value.split(",")
        elif word == "-v" or word.startswith("--format="):
            formats.add(next(it, "") if word == "-v" else word.split("=", 1)[1])
        elif word in ("-t", "-T"):
            value = next(it, "")
            if value.isdigit():
                count = int(value)
            else:
                since = _since(value)
                if since is None:
                    return fail(f"unknown time format '{value}'\n", 1)
        elif word == "-m" or word.startswith("--max-count="):
            max_count = int(next(it, "0") if word == "-m" else word.split("=", 1)[1])
        elif word.startswith("--pid="):
            pid = int(word.split("=", 1)[1])
        elif word == "-e" or word.startswith("--regex="):
            regex = re.compile(next(it, "") if word == "-e" else word.split("=", 1)[1])
        elif word == "-s":
            silent = True
        elif word == "-c":
            for entries in phone.dev.logs.values():
                entries.clear()
            return ok()
        elif word in ("-d", "-D"):
            continue
        elif not word.startswith("-"):
            specs.append(word)
    chosen = ["main", "system", "crash"] if not buffers or "default" in buffers else buffers
    if "all" in chosen:
        chosen = list(phone.dev.logs)
    for name in chosen:
        if name not in phone.dev.logs:
            return fail(f"logcat: Unknown buffer '{name}'.\n", 1)
    rules = {"*": "S" if silent else "V"}
    for spec in specs:
        tag, _, level = spec.partition(":")
        rules[tag] = (level or "V").upper()[:1]

    def wanted(entry: LogEntry) -> bool:
        floor = rules.get(entry.tag, rules["*"])
        if floor == "S" or LEVELS.index(entry.level) < LEVELS.index(floor if floor in LEVELS else "V"):
            return False
        if pid is not None and entry.pid != pid:
            return False
        if since is not None and entry.time < since:
            return False
        return regex is None or regex.search(entry.message) is not None

    entries = sorted((e for name in chosen for e in phone.dev.logs[name] if wanted(e)), key=lambda e: e.time)
    if count is not None:
        entries = entries[-count:] if count else []
    if max_count is not None:
        entries = entries[:max_count]
    lines, begun = [], set()
    for entry in entries:
        if entry.buffer not in begun:
            begun.add(entry.buffer)
            lines.append(f"--------- beginning of {entry.buffer}")
        lines.append(_format(entry, formats))
    return ok("".join(line + "\n" for line in lines))


def pidof(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    # `am kill` ends a background app's process; its task stays in recents.
    killed = getattr(getattr(phone, "system", None), "killed", [])
    pids = [
        str(app_pid(name))
        for name in args
        if name in phone.dev.started or (name in phone.tasks and name not in killed)
    ]
    return ok(" ".join(pids) + "\n") if pids else fail("", 1)


def pkill(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    """``pkill [-SIGNAL] NAME``: ends the shell user's processes of that name (``screenrecord`` …)."""
    names = [a for a in args if not a.startswith("-")]
    if not names:
        return fail("usage: pkill [-SIGNAL] PATTERN\n", 2)
    found = [pid for pid, name in phone.processes.items() if any(n in name for n in names)]
    for pid in found:
        stop = phone.process_stoppers.get(pid)
        if stop is not None:
            stop()
    return ok() if found else fail("", 1)
