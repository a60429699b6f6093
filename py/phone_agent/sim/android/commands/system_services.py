"""The simulated phone's location, connectivity, app-ops, media-scanner and content services, answering
the shell as Android 14 does — what Maestro's location, airplane-mode, media and killApp commands use:

- ``cmd location providers add-test-provider|remove-test-provider|set-test-provider-enabled|
  set-test-provider-location NAME [--location LAT,LNG]`` (LocationShellCommand), refused with Android's
  SecurityException unless the shell may mock locations (``appops set com.android.shell
  android:mock_location allow``); ``cmd location is-location-enabled``; ``dumpsys location`` shows them;
- ``cmd connectivity airplane-mode [enable|disable]`` (``enabled``/``disabled``), which turns Wi-Fi off and
  back to what it was, and keeps ``settings global airplane_mode_on``;
- ``appops set|get PACKAGE OP [MODE]``;
- the media scanner: ``am broadcast -a android.intent.action.MEDIA_SCANNER_SCAN_FILE -d file://PATH`` adds
  a file that exists to the media store, which ``content query --uri content://media/external/…`` lists.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from ....device.shell_result import ShellResult
from ..contract import AndroidPhone, FileStore
from .base import fail, ok

SCAN_FILE = "android.intent.action.MEDIA_SCANNER_SCAN_FILE"
_IMAGE_TYPES = {"png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif"}
_VIDEO_TYPES = {"mp4": "video/mp4"}
_PROVIDERS = ("gps", "network", "fused", "passive")


@dataclass
class TestProvider:
    """A test location provider the shell added."""

    enabled: bool = False
    location: tuple[float, float] | None = None
    fixes: int = 0


@dataclass
class SystemServices:
    """Location providers and app-ops, Wi-Fi before airplane mode, the media store, killed processes."""

    app_ops: dict[tuple[str, str], str] = field(default_factory=dict)
    test_providers: dict[str, TestProvider] = field(default_factory=dict)
    wifi_before_airplane: bool | None = None
    media: list[str] = field(default_factory=list)
    killed: list[str] = field(default_factory=list)

    def snapshot(self) -> dict[str, Any]:
        """What the phone's state() shows of them."""
        located = {
            name: list(p.location) for name, p in self.test_providers.items() if p.location and p.enabled
        }
        return {
            "location": located.get("gps") or next(iter(located.values()), None),
            "media": list(self.media),
        }


def services(phone: AndroidPhone) -> SystemServices:
    found = getattr(phone, "system", None)
    if not isinstance(found, SystemServices):
        found = SystemServices()
        phone.system = found  # type: ignore[attr-defined]
    return found


def _security(message: str) -> ShellResult:
    return fail(f"Exception occurred while executing:\njava.lang.SecurityException: {message}\n", 255)


def cmd_location(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    state = services(phone)
    if args[:1] == ["is-location-enabled"]:
        return ok("true\n")
    if args[:1] == ["set-location-enabled"]:
        return ok()
    if args[:1] != ["providers"] or len(args) < 3:
        return ok(
            "Location service commands:\n  is-location-enabled\n  set-location-enabled true|false\n"
            "  providers add-test-provider|remove-test-provider|set-test-provider-enabled|"
            "set-test-provider-location <PROVIDER> …\n"
        )
    verb, name, rest = args[1], args[2], args[3:]
    if state.app_ops.get(("com.android.shell", "android:mock_location")) != "allow":
        return _security("com.android.shell is not allowed to mock location (appops set com.android.shell "
                         "android:mock_location allow)")  # fmt: skip
    if verb == "add-test-provider":
        state.test_providers.setdefault(name, TestProvider())
        return ok()
    if verb == "remove-test-provider":
        state.test_providers.pop(name, None)
        return ok()
    provider = state.test_providers.get(name)
    if provider is None:
        return fail(
            f'Exception occurred while executing:\njava.lang.IllegalArgumentException: provider "{name}" '
            "does not exist as a test provider\n",
            255,
        )
    if verb == "set-test-provider-enabled" and rest[:1] in (["true"], ["false"]):
        provider.enabled = rest[0] == "true"
        return ok()
    if verb == "set-test-provider-location" and rest[:1] == ["--location"] and len(rest) >= 2:
        parts = rest[1].split(",")
        try:
            lat, lng = float(parts[0]), float(parts[1])
        except (ValueError, IndexError):
            return fail(
                f"Exception occurred while executing:\njava.lang.NumberFormatException: {rest[1]}\n", 255
            )
        if not (math.isfinite(lat) and math.isfinite(lng) and abs(lat) <= 90 and abs(lng) <= 180):
            return fail(
                "Exception occurred while executing:\njava.lang.IllegalArgumentException: invalid location\n",
                255,
            )
        provider.location = (lat, lng)
        provider.fixes += 1
        phone.version += 1
        return ok()
    return fail(f"Unknown command: providers {verb}\n", 255)


def dumpsys_location(phone: AndroidPhone, args: list[str]) -> ShellResult:
    state = services(phone)
    lines = ["Location Manager State:", "  Location Providers:"]
    for name in _PROVIDERS:
        test = state.test_providers.get(name)
        if test is None:
            lines.append(f"    {name} provider:\n      enabled=true")
            continue
        where = f"Location[{name} {test.location[0]:.6f},{test.location[1]:.6f}]" if test.location else "null"
        enabled = str(test.enabled).lower()
        lines.append(f"    {name} provider [mock]:\n      enabled={enabled}\n      last location={where}")
    return ok("\n".join(lines) + "\n")


def cmd_connectivity(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    if args[:1] != ["airplane-mode"]:
        return ok("Connectivity service commands:\n  airplane-mode [enable|disable]\n")
    on = phone.get_setting("global", "airplane_mode_on") == "1"
    if len(args) == 1:
        return ok("enabled\n" if on else "disabled\n")
    if args[1] not in ("enable", "disable"):
        return fail(f"Unsupported argument: {args[1]}\n", 255)
    set_airplane_mode(phone, args[1] == "enable")
    return ok()


def set_airplane_mode(phone: AndroidPhone, on: bool) -> None:
    """Airplane mode: Wi-Fi off while it is on, and back to what it was after (as Android restores it)."""
    state = services(phone)
    was_on = phone.get_setting("global", "airplane_mode_on") == "1"
    if on and not was_on:
        state.wifi_before_airplane = phone.wifi
        phone.set_wifi(False)
    elif not on and was_on:
        phone.set_wifi(bool(state.wifi_before_airplane) if state.wifi_before_airplane is not None else True)
        state.wifi_before_airplane = None
    phone.put_setting("global", "airplane_mode_on", "1" if on else "0")


def appops(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    words = [word for word in args if not word.startswith("--")]
    state = services(phone)
    if len(words) >= 4 and words[0] == "set":
        package, op, mode = words[1], words[2], words[3]
        if mode not in ("allow", "ignore", "deny", "default", "foreground"):
            return fail(f"Error: Mode {mode} is not valid\n", 255)
        state.app_ops[(package, op if op.startswith("android:") else f"android:{op.lower()}")] = mode
        return ok()
    if len(words) >= 2 and words[0] == "get":
        found = [(op, mode) for (package, op), mode in state.app_ops.items() if package == words[1]]
        if len(words) >= 3:
            found = [(op, mode) for op, mode in found if op in (words[2], f"android:{words[2].lower()}")]
        return ok(
            "".join(f"{op.removeprefix('android:').upper()}: {mode}\n" for op, mode in found)
            or "No operations.\n"
        )
    return ok("AppOps service (appops) commands:\n  set <PACKAGE> <OP> <MODE>\n  get <PACKAGE> [<OP>]\n")


def scan_file(phone: AndroidPhone, data: str, fs: FileStore) -> None:
    """The media scanner's answer to a scan request: the file, when it exists, joins the media store."""
    path = data.removeprefix("file://")
    state = services(phone)
    if path.startswith("/storage/emulated/0/"):
        path = "/sdcard/" + path[len("/storage/emulated/0/") :]
    extension = path.rsplit(".", 1)[-1].lower()
    if (extension not in _IMAGE_TYPES and extension not in _VIDEO_TYPES) or path in state.media:
        return
    try:
        fs.read_file(path)
    except OSError:  # no such file (or a folder): the scanner finds nothing
        return
    state.media.append(path)
    phone.version += 1


def content(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    """``content query --uri content://media/external/{images,video,file}/media`` over the media store."""
    if args[:1] != ["query"] or "--uri" not in args:
        return ok("usage: content query --uri <URI> [--projection <PROJECTION>]\n")
    uri = args[args.index("--uri") + 1] if args.index("--uri") + 1 < len(args) else ""
    kinds = {"images": _IMAGE_TYPES, "video": _VIDEO_TYPES, "file": {**_IMAGE_TYPES, **_VIDEO_TYPES}}
    kind = next((name for name in kinds if f"/{name}/" in uri + "/"), None)
    if not uri.startswith("content://media/") or kind is None:
        return fail(
            f"Error while accessing provider:{uri}\njava.lang.IllegalArgumentException: Unknown URL\n", 1
        )
    rows = []
    for index, path in enumerate(services(phone).media):
        extension = path.rsplit(".", 1)[-1].lower()
        if extension in kinds[kind]:
            name = path.rsplit("/", 1)[-1]
            rows.append(
                f"Row: {len(rows)} _id={index + 1000}, _data={path}, _display_name={name}, "
                f"mime_type={kinds[kind][extension]}"
            )
    return ok("\n".join(rows) + "\n" if rows else "No result found.\n")
