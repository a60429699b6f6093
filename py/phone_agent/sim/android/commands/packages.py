"""`pm`, `cmd` and its services (package, wifi, bluetooth_manager, input, settings, …)."""

from __future__ import annotations

import zlib

from ....device.shell_result import ShellResult
from .. import apps
from ..contract import AndroidPhone, FileStore
from .activity import am
from .base import Handler, fail, ok
from .devloop import cmd_notification, cmd_statusbar, pm_clear, pm_grant, pm_install, pm_uninstall
from .input import input_
from .system import ime, settings, wm
from .system_services import appops, cmd_connectivity, cmd_location

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


def pm(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
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
                for app in phone.apps.values()
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
        app = phone.apps.get(args[-1])
        installed = phone.dev.installed.get(args[-1])
        if installed is not None:
            return ok(f"package:{installed.path}\n")
        return ok(f"package:{_apk_path(app)}\n") if app else fail("", 1)
    if sub == "resolve-activity":
        return _resolve_activity(phone, args[1:])
    if sub == "install":
        return pm_install(phone, args[1:], stdin, fs)
    if sub == "uninstall":
        return pm_uninstall(phone, args[1:], stdin, fs)
    if sub == "clear":
        return pm_clear(phone, args[1:], stdin, fs)
    if sub in ("grant", "revoke"):
        return pm_grant(phone, args[1:], stdin, fs, grant=sub == "grant")
    if sub in ("disable-user", "enable"):
        return ok()
    return fail(f"Unknown command: {sub}\n", 255)


def _resolve_activity(phone: AndroidPhone, args: list[str]) -> ShellResult:
    words = [a for a in args if not a.startswith("-")]
    package = words[-1] if words else ""
    app = phone.apps.get(package)
    if app is None or not app.launchable:
        return ok("No activity found\n")
    return ok(
        "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true\n"
        f"{app.package}/{app.main_activity}\n"
    )


def cmd(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
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


def _cmd_wifi(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    if args[:1] == ["set-wifi-enabled"] and len(args) == 2 and args[1] in ("enabled", "disabled"):
        phone.set_wifi(args[1] == "enabled")
        return ok()
    if args[:1] == ["status"]:
        return ok("Wifi is enabled\n" if phone.wifi else "Wifi is disabled\n")
    return ok("Wi-Fi (wifi) commands:\n  set-wifi-enabled enabled|disabled\n  status\n")


def _cmd_bluetooth(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    if args in (["enable"], ["disable"]):
        phone.set_bluetooth(args[0] == "enable")
        return ok()
    return ok("Bluetooth Manager Commands:\n  enable\n  disable\n")


CMD_SERVICES: dict[str, Handler] = {
    "activity": am,
    "appops": appops,
    "connectivity": cmd_connectivity,
    "location": cmd_location,
    "bluetooth_manager": _cmd_bluetooth,
    "input": input_,
    "input_method": ime,
    "notification": cmd_notification,
    "package": pm,
    "settings": settings,
    "statusbar": cmd_statusbar,
    "wifi": _cmd_wifi,
    "window": wm,
}
