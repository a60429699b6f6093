"""Android's own command-line tools, answering in Android's own formats.

Each handler takes the phone, the arguments after the command name, stdin and
the file store, and returns a CommandResult. The phone holds its lock while a
handler runs. Errors follow Android: Java shell commands (`input`, `am`, `pm`,
`cmd …`) report exceptions on stderr and exit 255; `cmd` with an unknown
service exits 20; `monkey` without a launchable package exits 252.
"""

from __future__ import annotations

import base64
import binascii
import time
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from . import apps, keys, screens
from .contract import CommandResult, FileStore
from .props import DENSITY, SCREEN_HEIGHT, SCREEN_WIDTH
from .screens import Screen
from .ui import dump_xml

if TYPE_CHECKING:
    from .phone import VirtualPhone

Handler = Callable[["VirtualPhone", list[str], bytes, FileStore], CommandResult]


class ShellCommandError(Exception):
    """An exception a Java shell command would throw (reported like ShellCommand.exec)."""

    def __init__(self, command: str, java_class: str, message: str) -> None:
        super().__init__(message)
        self.command, self.java_class = command, java_class


def ok(text: str = "") -> CommandResult:
    return CommandResult(stdout=text.encode())


def fail(text: str, code: int = 1, stdout: str = "") -> CommandResult:
    return CommandResult(stdout=stdout.encode(), stderr=text.encode(), exit_code=code)


def java_exception(error: ShellCommandError) -> CommandResult:
    return fail(
        f"\nException occurred while executing '{error.command}':\n"
        f"{error.java_class}: {error}\n"
        "\tat com.android.modules.utils.BasicShellCommandHandler.exec(BasicShellCommandHandler.java:97)\n",
        255,
    )


class Args:
    """Sequential access to arguments, like Android's ShellCommand."""

    def __init__(self, command: str, args: list[str]) -> None:
        self.command, self.args, self.pos = command, args, 0
        self.last = command

    def next(self) -> str | None:
        if self.pos >= len(self.args):
            return None
        self.last = self.args[self.pos]
        self.pos += 1
        return self.last

    def required(self) -> str:
        prev = self.last
        value = self.next()
        if value is None:
            raise ShellCommandError(
                self.command, "java.lang.IllegalArgumentException", f'Argument expected after "{prev}"'
            )
        return value

    def rest(self) -> list[str]:
        rest, self.pos = self.args[self.pos :], len(self.args)
        return rest


def _write(fs: FileStore, path: str, data: bytes) -> str | None:
    """Write a file; an errno-style reason when it fails."""
    try:
        fs.write_file(path, data)
    except FileNotFoundError:
        return "No such file or directory"
    except IsADirectoryError:
        return "Is a directory"
    except PermissionError:
        return "Permission denied"
    return None


# --- getprop, wm ---------------------------------------------------------------------------


def getprop(phone: VirtualPhone, args: list[str], stdin: bytes, fs: FileStore) -> CommandResult:
    if not args:
        return ok("".join(f"[{k}]: [{v}]\n" for k, v in sorted(phone.props.items())))
    default = args[1] if len(args) > 1 else ""
    return ok(phone.props.get(args[0], default) + "\n")


WM_USAGE = """Window manager (window) commands:
  help
      Print this help text.
  size [reset|WxH|WdpxHdp] [-d DISPLAY_ID]
    Return or override display size.
  density [reset|DENSITY] [-d DISPLAY_ID]
    Return or override display density.
"""


def wm(phone: VirtualPhone, args: list[str], stdin: bytes, fs: FileStore) -> CommandResult:
    sub, rest = (args[0], [a for a in args[1:] if a not in ("-d", "0")]) if args else ("", [])
    if sub == "size" and not rest:
        return ok(f"Physical size: {SCREEN_WIDTH}x{SCREEN_HEIGHT}\n")
    if sub == "density" and not rest:
        return ok(f"Physical density: {DENSITY}\n")
    if sub in ("size", "density") and rest == ["reset"]:
        return ok()
    if sub in ("size", "density"):
        return fail("Error: the simulated phone does not support display overrides\n", 255)
    if sub in ("", "help", "-h"):
        return ok(WM_USAGE)
    return fail(f"Unknown command: {sub}\n", 255)


# --- input -------------------------------------------------------------------------------------

INPUT_SOURCES = (
    "keyboard dpad gamepad touchscreen mouse stylus trackball touchpad touchnavigation joystick".split()
)
INPUT_USAGE = (
    "Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]\n\n"
    "The sources are: \n" + "".join(f"      {s}\n" for s in INPUT_SOURCES) + "\n-d: specify the display ID.\n"
    "      (Default: -1 for key event, 0 for motion event if not specified.)\n"
    "The commands and default sources are:\n"
    "      text <string> (Default: touchscreen)\n"
    "      keyevent [--longpress|--doubletap] <key code number or name> ... (Default: keyboard)\n"
    "      tap <x> <y> (Default: touchscreen)\n"
    "      swipe <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)\n"
    "      draganddrop <x1> <y1> <x2> <y2> [duration(ms)] (Default: touchscreen)\n"
    "      press (Default: trackball)\n"
    "      roll <dx> <dy> (Default: trackball)\n"
    "      motionevent <DOWN|UP|MOVE|CANCEL> <x> <y> (Default: touchscreen)\n"
    "      keycombination <key code 1> <key code 2> ... (Default: keyboard)\n"
)


def _float(a: Args, sub: str) -> float:
    value = a.required()
    try:
        result = float(value)
    except ValueError:
        raise ShellCommandError(
            a.command, "java.lang.IllegalArgumentException", f"Error: Invalid arguments for command: {sub}"
        ) from None
    return result


def press_key(phone: VirtualPhone, code: int) -> None:
    """What one key press does to the phone."""
    if code == keys.HOME:
        phone.home()
    elif code in (keys.BACK, keys.ESCAPE):
        phone.back()
    elif code == keys.APP_SWITCH:
        phone.toggle_recents()
    elif code in (keys.ENTER, keys.NUMPAD_ENTER):
        phone.enter()
    elif code == keys.DEL:
        phone.delete_back()
    elif code == keys.PASTE:
        if phone.clipboard:
            phone.type_text(phone.clipboard)
    elif code in keys.KEY_CHARS:
        phone.type_text(keys.KEY_CHARS[code])


def input_(phone: VirtualPhone, args: list[str], stdin: bytes, fs: FileStore) -> CommandResult:
    a = Args(args[0] if args else "", args)
    sub = a.next()
    try:
        if sub in INPUT_SOURCES:
            sub = a.required()
        if sub == "-d":
            a.required()
            sub = a.required()
        a.command = sub or ""
        if sub is None or sub in ("help", "-h"):
            return ok(INPUT_USAGE)
        if sub == "text":
            text = a.required().replace("%s", " ")
            if not keys.typeable(text):
                raise ShellCommandError(
                    sub, "java.lang.NullPointerException", "Attempt to get length of null array"
                )
            phone.type_text(text)
        elif sub == "keyevent":
            first = a.required()
            if first in ("--longpress", "--doubletap"):
                first = a.required()
            for name in [first, *a.rest()]:
                press_key(phone, keys.keycode_from_string(name))
        elif sub == "tap":
            x, y = _float(a, sub), _float(a, sub)
            phone.tap(x, y)
        elif sub in ("swipe", "draganddrop"):
            x1, y1, x2, y2 = (_float(a, sub) for _ in range(4))
            duration_arg = a.next()
            try:
                duration = int(duration_arg) if duration_arg is not None else -1
            except ValueError:
                raise ShellCommandError(
                    sub, "java.lang.IllegalArgumentException", f"Error: Invalid arguments for command: {sub}"
                ) from None
            if sub == "swipe":
                phone.swipe(x1, y1, x2, y2, duration if duration >= 0 else 300)
        elif sub == "motionevent":
            action = a.required().upper()
            x, y = _float(a, sub), _float(a, sub)
            if action == "DOWN":
                phone.pointer_down = (x, y, time.monotonic())
            elif action == "UP" and phone.pointer_down is not None:
                x0, y0, t0 = phone.pointer_down
                phone.pointer_down = None
                phone.swipe(x0, y0, x, y, int((time.monotonic() - t0) * 1000))
            elif action == "CANCEL":
                phone.pointer_down = None
        elif sub == "roll":
            _float(a, sub), _float(a, sub)
        elif sub == "keycombination":
            a.required()
        elif sub == "press":
            pass
        else:
            return ok(f"Unknown command: {sub}\n")
    except ShellCommandError as error:
        return java_exception(error)
    return ok()


# --- screencap, uiautomator ------------------------------------------------------------------------

SCREENCAP_USAGE = """usage: screencap [-hp] [-d display-id] [FILENAME]
   -h: this message
   -p: save the file as a png.
   -d: specify the physical display ID to capture (default: 4619827259835644672)
       see "dumpsys SurfaceFlinger --display-id" for valid display IDs.
If FILENAME ends with .png it will be saved as a png.
If FILENAME is not given, the results will be printed to stdout.
"""


def screencap(phone: VirtualPhone, args: list[str], stdin: bytes, fs: FileStore) -> CommandResult:
    png, path, i = False, None, 0
    while i < len(args):
        arg = args[i]
        if arg == "-p":
            png = True
        elif arg == "-d" and i + 1 < len(args):
            i += 1
        elif arg.startswith("-"):
            return fail(SCREENCAP_USAGE, 1)
        elif path is None:
            path = arg
        else:
            return fail(SCREENCAP_USAGE, 1)
        i += 1
    if path is not None and path.endswith(".png"):
        png = True
    data = phone.screenshot_png() if png else phone.screenshot_raw()
    if path is None:
        return CommandResult(stdout=data)
    reason = _write(fs, path, data)
    if reason:
        return fail(f"Error opening file: {path} ({reason})\n", 1)
    return ok()


UIAUTOMATOR_USAGE = """Usage: uiautomator <subcommand> [options]

Available subcommands:

help: displays help message

runtest: executes UI automation tests
    runtest <class spec> [options]

dump: creates an XML dump of current UI hierarchy
    dump [--verbose][file]
      [--compressed]: dumps compressed layout information.
      [file]: the location where the dumped XML should be stored, default is
      /sdcard/window_dump.xml

events: prints out accessibility events until terminated
"""


def uiautomator(phone: VirtualPhone, args: list[str], stdin: bytes, fs: FileStore) -> CommandResult:
    if not args or args[0] != "dump":
        return ok(UIAUTOMATOR_USAGE)
    paths = [a for a in args[1:] if not a.startswith("--")]
    path = paths[0] if paths else "/sdcard/window_dump.xml"
    xml = dump_xml(phone.windows()).encode()
    message = f"UI hierchary dumped to: {path}\n".encode()
    if path in ("/dev/tty", "/dev/stdout"):
        return CommandResult(stdout=xml + message)
    reason = _write(fs, path, xml)
    if reason:
        return fail(f"java.io.FileNotFoundException: {path}: open failed: {reason}\n", 1)
    return CommandResult(stdout=message)


# --- am, monkey ------------------------------------------------------------------------------------

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
}


def _start(phone: VirtualPhone, intent: Intent) -> CommandResult:
    """Resolve and start an activity intent; the answer `am start` prints."""
    starting = f"Starting: {intent.describe()}\n"
    if intent.component:
        package, _, activity = intent.component.partition("/")
        if not activity:
            return fail(f"Error: Bad component name: {intent.component}\n", 255)
        activity = _full_activity(package, activity)
        app = apps.APPS.get(package)
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
    if intent.package in apps.APPS and apps.APPS[intent.package].launchable and not intent.data:
        app = apps.APPS[intent.package]
        return _open_activity(phone, intent, app, app.main_activity, starting)
    return fail(
        f"Error: Activity not started, unable to resolve {intent.describe('0x10000000')}\n", 1, starting
    )


def _open_activity(
    phone: VirtualPhone, intent: Intent, app: apps.App, activity: str, starting: str
) -> CommandResult:
    if intent.force_stop:
        phone.force_stop(app.package)
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
        if not raw.isdigit() or not 1 <= int(raw) <= len(screens.CATALOG_ITEMS):
            phone.launch(app.package)
            return ok(starting)
        arg = str(int(raw))
    elif name == "browser/page":
        arg = intent.data
    phone.start_screen(app.package, Screen(name, arg))
    return ok(starting)


def _broadcast(phone: VirtualPhone, intent: Intent) -> CommandResult:
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


def am(phone: VirtualPhone, args: list[str], stdin: bytes, fs: FileStore) -> CommandResult:
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
            return _broadcast(phone, parse_intent(sub, a))
        if sub in ("force-stop", "kill", "stop-app"):
            rest = [x for x in a.rest() if not x.startswith("--user")]
            packages = [x for x in rest if not x.isdigit() and x not in ("all", "current")]
            if not packages:
                raise ShellCommandError(
                    sub, "java.lang.IllegalArgumentException", f'Argument expected after "{sub}"'
                )
            if sub != "kill":
                phone.force_stop(packages[-1])
            return ok()
    except ShellCommandError as error:
        return java_exception(error)
    return fail(f"Unknown command: {sub}\n", 255)


def monkey(phone: VirtualPhone, args: list[str], stdin: bytes, fs: FileStore) -> CommandResult:
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
    launchable = [p for p in packages if p in apps.APPS and apps.APPS[p].launchable]
    if not launchable:
        return fail("** No activities found to run, monkey aborted.\n", 252, "".join(out))
    phone.launch(launchable[0])
    out.append(f"Events injected: {count}\n")
    out.append("## Network stats: elapsed time=16ms (0ms mobile, 0ms wifi, 16ms not connected)\n")
    return ok("".join(out))


# --- pm, cmd, ime, settings, svc ---------------------------------------------------------------------

PM_USAGE = """Package manager (package) commands:
  help
    Print this help text.
  path [--user USER_ID] PACKAGE
    Print the path to the .apk of the given PACKAGE.
  list packages [-f] [-d] [-e] [-s] [-3] [-i] [-l] [-u] [-U]
      [--show-versioncode] [--apex-only] [--uid UID] [--user USER_ID] [FILTER]
    Prints all packages; optionally only those whose name contains
    the text in FILTER.
  resolve-activity [--brief] [--components] [--query-flags FLAGS]
       [--user USER_ID] INTENT
    Prints the activity that resolves to the given INTENT.
"""


def _apk_path(app: apps.App) -> str:
    if app.third_party:
        return f"/data/app/~~sim{zlib.crc32(app.package.encode()):08x}==/{app.package}-1/base.apk"
    return f"/product/app/{app.label.replace(' ', '')}/{app.label.replace(' ', '')}.apk"


def pm(phone: VirtualPhone, args: list[str], stdin: bytes, fs: FileStore) -> CommandResult:
    if not args or args[0] in ("help", "-h"):
        return ok(PM_USAGE)
    sub = args[0]
    if sub == "list" and len(args) > 1 and args[1] in ("packages", "package"):
        flags = [a for a in args[2:] if a.startswith("-")]
        words = [a for a in args[2:] if not a.startswith("-")]
        if "--user" in flags and words:
            words = words[1:]
        query = words[0] if words else ""
        chosen = sorted(
            (
                app
                for app in apps.APPS.values()
                if query in app.package
                and not ("-3" in flags and not app.third_party)
                and not ("-s" in flags and app.third_party)
            ),
            key=lambda app: app.package,
        )
        lines = [
            f"package:{_apk_path(app)}={app.package}" if "-f" in flags else f"package:{app.package}"
            for app in chosen
        ]
        return ok("".join(line + "\n" for line in lines))
    if sub == "path" and len(args) > 1:
        app = apps.APPS.get(args[-1])
        return ok(f"package:{_apk_path(app)}\n") if app else fail("", 1)
    if sub == "resolve-activity":
        return _resolve_activity(args[1:])
    if sub in ("clear", "grant", "revoke", "disable-user", "enable"):
        if sub == "clear" and len(args) > 1:
            phone.force_stop(args[-1])
            return ok("Success\n")
        return ok()
    return fail(f"Unknown command: {sub}\n", 255)


def _resolve_activity(args: list[str]) -> CommandResult:
    words = [a for a in args if not a.startswith("-")]
    package = words[-1] if words else ""
    app = apps.APPS.get(package)
    if app is None or not app.launchable:
        return ok("No activity found\n")
    return ok(
        "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true\n"
        f"{app.package}/{app.main_activity}\n"
    )


def cmd(phone: VirtualPhone, args: list[str], stdin: bytes, fs: FileStore) -> CommandResult:
    if not args:
        return fail(
            "cmd: No service specified; use -l to list all running services."
            " Use -w to start and wait for a service.\n",
            20,
        )
    service, rest = args[0], args[1:]
    if service == "-l":
        return ok("Currently running services:\n" + "".join(f"  {s}\n" for s in sorted(CMD_SERVICES)))
    if service not in CMD_SERVICES:
        return fail(f"cmd: Can't find service: {service}\n", 20)
    return CMD_SERVICES[service](phone, rest, stdin, fs)


def _cmd_wifi(phone: VirtualPhone, args: list[str], stdin: bytes, fs: FileStore) -> CommandResult:
    if args[:1] == ["set-wifi-enabled"] and len(args) == 2 and args[1] in ("enabled", "disabled"):
        phone.set_wifi(args[1] == "enabled")
        return ok()
    if args[:1] == ["status"]:
        return ok("Wifi is enabled\n" if phone.wifi else "Wifi is disabled\n")
    return ok("Wi-Fi (wifi) commands:\n  set-wifi-enabled enabled|disabled\n  status\n")


def _cmd_bluetooth(phone: VirtualPhone, args: list[str], stdin: bytes, fs: FileStore) -> CommandResult:
    if args in (["enable"], ["disable"]):
        phone.set_bluetooth(args[0] == "enable")
        return ok()
    return ok("Bluetooth Manager Commands:\n  enable\n  disable\n")


IME_USAGE = (
    "ime <command>:\n  list [-a] [-s]\n  enable [--user <USER_ID>] <ID>\n"
    "  disable [--user <USER_ID>] <ID>\n  set [--user <USER_ID>] <ID>\n"
)


def ime(phone: VirtualPhone, args: list[str], stdin: bytes, fs: FileStore) -> CommandResult:
    known = [apps.GBOARD_IME, apps.ADB_KEYBOARD_IME]
    enabled = [i for i in phone.settings["secure"]["enabled_input_methods"].split(":") if i]
    sub = args[0] if args else ""
    ids = [a for a in args[1:] if not a.startswith("-")]
    if sub == "list":
        shown = known if "-a" in args else enabled
        if "-s" in args:
            return ok("".join(f"{i}\n" for i in shown))
        return ok("".join(f"{i}:\n  mId={i} mSettingsActivityName=null\n" for i in shown))
    if sub in ("enable", "disable", "set") and ids:
        target = ids[-1]
        if target not in known:
            return fail(f"Unknown input method {target} cannot be {sub}d for user #0\n", 255)
        if sub == "set":
            phone.ime = target
            phone.version += 1
            return ok(f"Input method {target} selected for user #0\n")
        was = target in enabled
        if sub == "enable" and not was:
            enabled.append(target)
        if sub == "disable" and was:
            enabled.remove(target)
        phone.settings["secure"]["enabled_input_methods"] = ":".join(enabled)
        state = "enabled" if sub == "enable" else "disabled"
        return ok(f"Input method {target}: {'already ' if was == (sub == 'enable') else 'now '}{state}\n")
    if sub == "reset":
        phone.ime = apps.ADB_KEYBOARD_IME
        return ok(f"Reset current and enabled IMEs for user #0\n  Selected: {phone.ime}\n")
    return ok(IME_USAGE)


SETTINGS_USAGE = """Settings provider (settings) commands:
  get [--user <USER_ID> | current] NAMESPACE KEY
      Retrieve the current value of KEY.
  put [--user <USER_ID> | current] NAMESPACE KEY VALUE [TAG] [default]
      Change the contents of KEY to VALUE.
  delete [--user <USER_ID> | current] NAMESPACE KEY
      Delete the entry for KEY.
  list [--user <USER_ID> | current] NAMESPACE
      Print all defined keys.
      NAMESPACE is one of {system, secure, global}, case-insensitive
"""


def settings(phone: VirtualPhone, args: list[str], stdin: bytes, fs: FileStore) -> CommandResult:
    words: list[str] = []
    i = 0
    while i < len(args):
        if args[i] == "--user":
            i += 2
            continue
        words.append(args[i])
        i += 1
    if not words or words[0] not in ("get", "put", "delete", "list", "reset"):
        return fail(SETTINGS_USAGE, 255) if words else ok(SETTINGS_USAGE)
    verb = words[0]
    if len(words) < 2 or words[1].lower() not in ("system", "secure", "global"):
        return fail(
            f"Invalid command: {verb}\n" if len(words) < 2 else f"Invalid namespace '{words[1]}'\n", 255
        )
    namespace = words[1].lower()
    if verb == "list":
        return ok("".join(f"{k}={v}\n" for k, v in sorted(phone.all_settings(namespace).items())))
    if len(words) < 3:
        return fail(f"Invalid command: {verb}\n", 255)
    key = words[2]
    if verb == "get":
        value = phone.get_setting(namespace, key)
        return ok(f"{'null' if value is None else value}\n")
    if verb == "put":
        if len(words) < 4:
            return fail(f"Invalid command: {verb}\n", 255)
        phone.put_setting(namespace, key, words[3])
        return ok()
    if verb == "delete":
        existed = phone.settings.get(namespace, {}).pop(key, None) is not None
        return ok(f"Deleted {int(existed)} rows\n")
    return ok()


def svc(phone: VirtualPhone, args: list[str], stdin: bytes, fs: FileStore) -> CommandResult:
    if len(args) == 2 and args[0] in ("wifi", "bluetooth") and args[1] in ("enable", "disable"):
        (phone.set_wifi if args[0] == "wifi" else phone.set_bluetooth)(args[1] == "enable")
        return ok()
    if len(args) >= 1 and args[0] in ("data", "power", "usb", "nfc"):
        return ok()
    return ok(
        "Available commands:\n    help     Show information about the subcommands\n"
        "    power    Control the power manager\n    data     Control mobile data connectivity\n"
        "    wifi     Control the Wi-Fi manager\n    usb      Control Usb state\n"
        "    nfc      Control NFC functions\n    bluetooth Control Bluetooth service\n"
    )


# --- dumpsys ------------------------------------------------------------------------------------------


def _hash(text: str) -> str:
    return f"{zlib.crc32(text.encode()):08x}"[1:]


def _focus_lines(phone: VirtualPhone) -> tuple[str, str]:
    package, activity = phone.focused_activity()
    task = zlib.crc32(package.encode()) % 90 + 10
    window = f"Window{{{_hash(package + activity)} u0 {package}/{activity}}}"
    record = (
        f"ActivityRecord{{{_hash(activity)} u0 {package}/{apps.short_activity(package, activity)} t{task}}}"
    )
    return window, record


def _dumpsys_window(phone: VirtualPhone, section: str) -> str:
    window, record = _focus_lines(phone)
    package, _ = phone.focused_activity()
    out = []
    if section in ("", "windows", "w"):
        out += [
            "WINDOW MANAGER WINDOWS (dumpsys window windows)",
            f"  Window #0 Window{{{_hash('nav')} u0 NavigationBar0}}:",
            "    mDisplayId=0 rootTaskId=1 mSession=Session{1c2d3e4 1234:u0a10101}"
            " mClient=android.os.BinderProxy@a1b2c3",
            "    mOwnerUid=10101 showForAllUsers=true package=com.android.systemui appop=NONE",
            f"  Window #1 Window{{{_hash('status')} u0 StatusBar}}:",
            "    mDisplayId=0 rootTaskId=1 mSession=Session{1c2d3e4 1234:u0a10101}"
            " mClient=android.os.BinderProxy@d4e5f6",
            "    mOwnerUid=10101 showForAllUsers=true package=com.android.systemui appop=NONE",
            f"  Window #2 {window}:",
            "    mDisplayId=0 rootTaskId=12 mSession=Session{5f6a7b8 4321:u0a10123}"
            f" mClient=android.os.BinderProxy@{_hash(package)}",
            f"    mOwnerUid=10123 showForAllUsers=false package={package} appop=NONE",
            f"    mActivityRecord={record}",
            "",
        ]
    if section in ("", "displays", "d", "windows", "w"):
        out += [
            "WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)",
            "  Display: mDisplayId=0 (organized) rootTasks=3",
            f"    init={SCREEN_WIDTH}x{SCREEN_HEIGHT} {DENSITY}dpi cur={SCREEN_WIDTH}x{SCREEN_HEIGHT}"
            f" app={SCREEN_WIDTH}x{screens.NAV_Y} rng=1080x1017-2400x2337",
            "    deferred=false mLayoutNeeded=false mTouchExcludeRegion=SkRegion()",
            "",
        ]
    out += [
        "  mGlobalConfiguration={1.0 ?mcc?mnc [en_US] ldltr sw411dp w411dp h914dp 420dpi nrml long port"
        " finger -keyb/v/h -nav/h}",
        "  mHasPermanentDpad=false",
        "  mTopFocusedDisplayId=0",
        f"  mInputMethodWindow=Window{{{_hash('ime')} u0 InputMethod}}",
        f"  mCurrentFocus={window}",
        f"  mFocusedApp={record}",
    ]
    return "\n".join(out) + "\n"


def dumpsys(phone: VirtualPhone, args: list[str], stdin: bytes, fs: FileStore) -> CommandResult:
    service = args[0] if args else ""
    section = args[1] if len(args) > 1 else ""
    if service == "window":
        return ok(_dumpsys_window(phone, section))
    if service == "activity":
        _, record = _focus_lines(phone)
        return ok(
            "ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\n"
            "Display #0 (activities from top to bottom):\n"
            f"  mResumedActivity: {record}\n"
            f"  ResumedActivity: {record}\n"
            f"  mFocusedApp={record}\n"
        )
    if service == "battery":
        return ok(
            "Current Battery Service state:\n  AC powered: false\n  USB powered: true\n"
            "  Wireless powered: false\n"
            f"  status: 2\n  health: 2\n  present: true\n  level: {phone.battery}\n  scale: 100\n"
            "  voltage: 4123\n  temperature: 285\n  technology: Li-ion\n"
        )
    if service == "wifi":
        return ok("Wi-Fi is enabled\n" if phone.wifi else "Wi-Fi is disabled\n")
    if service == "bluetooth_manager":
        return ok(
            f"Bluetooth Status\n  enabled: {str(phone.bluetooth).lower()}\n"
            f"  state: {'ON' if phone.bluetooth else 'OFF'}\n"
        )
    if service == "input_method":
        return ok(f"Input Method Manager Service state:\n  mCurMethodId={phone.ime}\n")
    if service == "display":
        return ok(
            '  mBaseDisplayInfo=DisplayInfo{"Built-in Screen", displayId 0, '
            f"real {SCREEN_WIDTH} x {SCREEN_HEIGHT}, "
            f"rotation 0, state ON, density {DENSITY}}}\n"
        )
    if service in ("", "-l"):
        return ok("Currently running services:\n" + "".join(f"  {s}\n" for s in DUMPSYS_SERVICES))
    return fail(f"Can't find service: {service}\n", 0)


DUMPSYS_SERVICES = ["activity", "battery", "bluetooth_manager", "display", "input_method", "wifi", "window"]

HANDLERS: dict[str, Handler] = {
    "am": am,
    "cmd": cmd,
    "dumpsys": dumpsys,
    "getprop": getprop,
    "ime": ime,
    "input": input_,
    "monkey": monkey,
    "pm": pm,
    "screencap": screencap,
    "settings": settings,
    "svc": svc,
    "uiautomator": uiautomator,
    "wm": wm,
}

CMD_SERVICES: dict[str, Handler] = {
    "activity": am,
    "bluetooth_manager": _cmd_bluetooth,
    "input": input_,
    "input_method": ime,
    "package": pm,
    "settings": settings,
    "wifi": _cmd_wifi,
    "window": wm,
}
