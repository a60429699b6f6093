"""`am` (start, force-stop, broadcast with ADBKeyBoard and Clipper) and `monkey`."""

from __future__ import annotations

import base64
import binascii
import json
from urllib.parse import unquote, urlsplit

from ....device.shell_result import ShellResult
from .. import apps
from ..contract import AndroidPhone, FileStore, Screen
from ..data import CATALOG_ITEMS
from .base import Args, ShellCommandError, fail, java_exception, ok
from .input import press_key
from .system_services import SCAN_FILE, scan_file, services

AM_USAGE = """Activity manager (activity) commands:
  help
      Print this help text.
  start-activity [-D] [-N] [-W] [-P <FILE>] [--start-profiler <FILE>]
          [--sampling INTERVAL] [--streaming] [-R COUNT] [-S]
          [--track-allocation] [--user <USER_ID> | current] <INTENT>
      Start an Activity.
  force-stop [--user <USER_ID> | all | current] <PACKAGE>
      Completely stop the given application package.
  broadcast [--user <USER_ID> | all | current] <INTENT>
      Send a broadcast Intent.
"""

_NO_VALUE_FLAGS = {
    "-W",
    "-S",
    "-D",
    "-N",
    "--streaming",
    "--track-allocation",
    "--receiver-foreground",
    "--activity-clear-top",
    "--activity-new-task",
    "--activity-single-top",
    "--activity-clear-task",
    "--activity-no-history",
    "--activity-reorder-to-front",
    "--include-stopped-packages",
    "--exclude-stopped-packages",
    "--activity-brought-to-front",
}


class Intent:
    """The parts of an `am` intent the simulated phone uses."""

    def __init__(self) -> None:
        self.action = ""
        self.data = ""
        self.component = ""
        self.package = ""
        self.categories: list[str] = []
        self.extras: dict[str, str] = {}
        self.force_stop = False
        self.wait = False

    def describe(self, flags: str = "") -> str:
        parts = []
        if self.action:
            parts.append(f"act={self.action}")
        if self.categories:
            parts.append(f"cat=[{','.join(self.categories)}]")
        if self.data:
            split = urlsplit(self.data)
            shown = (
                f"{split.scheme}://{split.netloc}/..."
                if split.netloc and (split.path not in ("", "/") or split.query)
                else self.data
            )
            if not split.netloc and split.scheme:
                shown = f"{split.scheme}:..."
            parts.append(f"dat={shown}")
        if flags:
            parts.append(f"flg={flags}")
        if self.package:
            parts.append(f"pkg={self.package}")
        if self.component:
            pkg, _, act = self.component.partition("/")
            parts.append(f"cmp={pkg}/{apps.short_activity(pkg, _full_activity(pkg, act))}")
        if self.extras:
            parts.append("(has extras)")
        return "Intent { " + " ".join(parts) + " }"


def _full_activity(package: str, activity: str) -> str:
    return package + activity if activity.startswith(".") else activity


def parse_intent(command: str, a: Args) -> Intent:
    intent = Intent()
    while (arg := a.next()) is not None:
        if arg == "-a":
            intent.action = a.required()
        elif arg == "-d":
            intent.data = a.required()
        elif arg == "-n":
            intent.component = a.required()
        elif arg == "-p":
            intent.package = a.required()
        elif arg == "-c":
            intent.categories.append(a.required())
        elif arg in (
            "-e",
            "--es",
            "--ei",
            "--ez",
            "--el",
            "--ef",
            "--eu",
            "--ecn",
            "--eia",
            "--esa",
            "--ela",
            "--efa",
            "--esn",
        ):
            key = a.required()
            intent.extras[key] = "" if arg == "--esn" else a.required()
        elif arg in (
            "-t",
            "-f",
            "--user",
            "-R",
            "-P",
            "--start-profiler",
            "--sampling",
            "--display",
            "--windowingMode",
            "--activityType",
            "--task",
        ):
            a.required()
        elif arg == "-S":
            intent.force_stop = True
        elif arg == "-W":
            intent.wait = True
        elif arg in _NO_VALUE_FLAGS or arg.startswith("--activity-") or arg.startswith("--receiver-"):
            pass
        elif arg.startswith("-"):
            raise ShellCommandError(command, "java.lang.IllegalArgumentException", f"Unknown option: {arg}")
        elif not intent.data and ":" in arg:
            intent.data = arg
        elif not intent.component and "/" in arg:
            intent.component = arg
        else:
            intent.package = intent.package or arg
    return intent


SETTINGS_ACTIONS = {
    "android.settings.SETTINGS": "settings/main",
    "android.settings.WIFI_SETTINGS": "settings/network",
    "android.settings.WIRELESS_SETTINGS": "settings/network",
    "android.settings.BLUETOOTH_SETTINGS": "settings/connected",
    "android.settings.DEVICE_INFO_SETTINGS": "settings/about",
    "android.settings.SECURITY_SETTINGS": "settings/security",
}


def _start(phone: AndroidPhone, intent: Intent) -> ShellResult:
    """Resolve and start an activity intent; the answer `am start` prints."""
    starting = f"Starting: {intent.describe()}\n"
    if intent.component:
        package, _, activity = intent.component.partition("/")
        if not activity:
            return fail(f"Error: Bad component name: {intent.component}\n", 255)
        activity = _full_activity(package, activity)
        app = phone.apps.get(package)
        if app is None or activity not in app.screens:
            return fail(
                f"Error type 3\nError: Activity class {{{package}/{activity}}} does not exist.\n", 1, starting
            )
        return _open_activity(phone, intent, app, activity, starting)
    if intent.action == "android.intent.action.VIEW" and intent.data:
        scheme = urlsplit(intent.data).scheme.lower()
        if scheme in ("http", "https"):
            if intent.force_stop:
                phone.force_stop(apps.CHROME)
            phone.start_screen(apps.CHROME, Screen("browser/page", intent.data))
            return ok(starting)
        if scheme in ("sms", "smsto", "mms", "mmsto"):
            address = unquote(intent.data.split(":", 1)[1].split("?")[0])
            contact = phone.contact_for(address)
            if contact is None:
                phone.launch(apps.MESSAGES)
            else:
                phone.start_screen(apps.MESSAGES, Screen("messages/thread", contact))
            return ok(starting)
    if intent.action in SETTINGS_ACTIONS:
        phone.start_screen(apps.SETTINGS, Screen(SETTINGS_ACTIONS[intent.action]))
        return ok(starting)
    if intent.action == "android.intent.action.MAIN" and "android.intent.category.HOME" in intent.categories:
        phone.home()
        return ok(starting)
    if intent.package in phone.apps and phone.apps[intent.package].launchable and not intent.data:
        app = phone.apps[intent.package]
        return _open_activity(phone, intent, app, app.main_activity, starting)
    return fail(
        f"Error: Activity not started, unable to resolve {intent.describe('0x10000000')}\n", 1, starting
    )


# Launch extras a simulated app reads: Login Demo fills its username from `--es username NAME`.
_PREFILLS = {(apps.LOGIN, "username"): f"{apps.LOGIN}:id/username"}


def _open_activity(
    phone: AndroidPhone, intent: Intent, app: apps.App, activity: str, starting: str
) -> ShellResult:
    if intent.force_stop:
        phone.force_stop(app.package)
    if intent.extras:  # what the app was started with (launchApp's arguments), kept where state() shows it
        phone.app_state[f"{app.package}.extras"] = json.dumps(intent.extras, sort_keys=True)
        for (package, key), field in _PREFILLS.items():
            if package == app.package and key in intent.extras:
                phone.drafts[field] = intent.extras[key]
    name = app.screens[activity]
    if activity == app.main_activity:
        top = phone.top_screen()
        running = app.package in phone.tasks
        in_front = running and phone.current == app.package and not phone.showing_recents
        phone.launch(app.package)
        if in_front and top is not None and top.name == name:
            return ok(
                starting + "Warning: Activity not started, intent has been delivered to currently running"
                " top-most instance.\n"
            )
        if running:
            return ok(
                starting + "Warning: Activity not started, its current task has been brought to the front\n"
            )
        return ok(starting)
    arg = ""
    if name == "messages/thread":
        contact = phone.contact_for(unquote(intent.data.split(":", 1)[-1])) if intent.data else None
        if contact is None:
            phone.launch(app.package)
            return ok(starting)
        arg = contact
    elif name == "catalog/item":
        raw = intent.extras.get("item", "")
        if not raw.isdigit() or not 1 <= int(raw) <= len(CATALOG_ITEMS):
            phone.launch(app.package)
            return ok(starting)
        arg = str(int(raw))
    elif name == "browser/page":
        arg = intent.data
    phone.start_screen(app.package, Screen(name, arg))
    return ok(starting)


def _broadcast(phone: AndroidPhone, intent: Intent) -> ShellResult:
    out = f"Broadcasting: {intent.describe('0x400000')}\n"
    result = "Broadcast completed: result=0\n"
    action, extras = intent.action, intent.extras
    keyboard_active = phone.ime == apps.ADB_KEYBOARD_IME
    if action in ("ADB_INPUT_TEXT", "ADB_INPUT_B64") and keyboard_active and "msg" in extras:
        text: str | None = extras["msg"]
        if action == "ADB_INPUT_B64":
            try:
                text = base64.b64decode(extras["msg"], validate=False).decode("utf-8")
            except (binascii.Error, UnicodeDecodeError):
                text = None
        if text:
            phone.type_text(text)
    elif action == "ADB_INPUT_CHARS" and keyboard_active and "chars" in extras:
        try:
            phone.type_text("".join(chr(int(c)) for c in extras["chars"].split(",") if c))
        except (ValueError, OverflowError):
            pass
    elif action == "ADB_INPUT_CODE" and keyboard_active and extras.get("code", "").lstrip("-").isdigit():
        press_key(phone, int(extras["code"]))
    elif action == "ADB_EDITOR_CODE" and keyboard_active and extras.get("code") in ("2", "3", "4", "6"):
        phone.enter()
    elif action == "ADB_CLEAR_TEXT" and keyboard_active:
        phone.clear_field()
    elif action == "clipper.set":
        phone.clipboard = extras.get("text", "")
        phone.version += 1
        result = 'Broadcast completed: result=-1, data="Text is copied into clipboard."\n'
    elif action == "clipper.get":
        result = f'Broadcast completed: result=-1, data="{phone.clipboard}"\n'
    return ok(out + result)


def am(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    if not args or args[0] in ("help", "-h"):
        return ok(AM_USAGE)
    sub = args[0]
    a = Args(sub, args[1:])
    try:
        if sub in ("start", "start-activity"):
            intent = parse_intent(sub, a)
            result = _start(phone, intent)
            if intent.wait and result.exit_code == 0:
                package, activity = phone.focused_activity()
                short = apps.short_activity(package, activity)
                result.stdout += (
                    f"Status: ok\nLaunchState: COLD\nActivity: {package}/{short}\n"
                    "TotalTime: 212\nWaitTime: 215\nComplete\n"
                ).encode()
            return result
        if sub == "broadcast":
            intent = parse_intent(sub, a)
            if intent.action == SCAN_FILE and intent.data:
                scan_file(phone, intent.data, fs)
            return _broadcast(phone, intent)
        if sub in ("force-stop", "kill", "stop-app"):
            rest = [x for x in a.rest() if not x.startswith("--user")]
            packages = [x for x in rest if not x.isdigit() and x not in ("all", "current")]
            if not packages:
                raise ShellCommandError(
                    sub, "java.lang.IllegalArgumentException", f'Argument expected after "{sub}"'
                )
            if sub != "kill":
                phone.force_stop(packages[-1])
            elif packages[-1] != phone.focused_activity()[0]:  # the system kills only a background app
                services(phone).killed.append(packages[-1])
                phone.dev.started.discard(packages[-1])
            return ok()
    except ShellCommandError as error:
        return java_exception(error)
    return fail(f"Unknown command: {sub}\n", 255)


def monkey(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    out = [f"  bash arg: {x}\n" for x in args]
    out.append(f"args: [{', '.join(args)}]\n")
    out += [f' arg: "{x}"\n' for x in args]
    packages: list[str] = []
    categories: list[str] = []
    count: int | None = None
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("-p", "-c") and i + 1 < len(args):
            (packages if arg == "-p" else categories).append(args[i + 1])
            i += 1
        elif arg in ("-s", "--throttle", "--seed") or (arg.startswith("--pct-") and i + 1 < len(args)):
            i += 1
        elif arg.isdigit():
            count = int(arg)
        i += 1
    out += [f'data="{x}"\n' for x in packages + categories]
    if count is None:
        return fail(
            "** Error: Count not specified\nusage: monkey [-p ALLOWED_PACKAGE [-p ALLOWED_PACKAGE] ...]\n",
            1,
            "".join(out),
        )
    launchable = [p for p in packages if p in phone.apps and phone.apps[p].launchable]
    if not launchable:
        return fail("** No activities found to run, monkey aborted.\n", 252, "".join(out))
    phone.launch(launchable[0])
    out.append(f"Events injected: {count}\n")
    out.append("## Network stats: elapsed time=16ms (0ms mobile, 0ms wifi, 16ms not connected)\n")
    return ok("".join(out))
