"""``phone-agent doctor``: what a real set-up needs, each check passing or failing with how to fix it.

The checks are pure: each reads the machine through ``Machine`` (``doctor_probe.LocalMachine`` is this
machine), so a test can hand any answer to any check. They cover Chrome's version and whether WebMCP
is on, a host adb server holding the USB phone (WebUSB cannot claim it then), on Linux whether this user
may open the phone's USB device (udev rules, ``plugdev``), the server's port, whether a page is paired,
and the jars the page pushes to phones.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

MIN_CHROME = 149
WEBMCP_FLAG = "enable-webmcp-testing"
JARS = (("scrcpy-server", "static/vendor/scrcpy/scrcpy-server"), ("u2.jar", "static/vendor/u2/u2.jar"))


@dataclass(frozen=True)
class CheckResult:
    name: str
    ok: bool
    detail: str
    fix: str = ""


@dataclass(frozen=True)
class UsbPhone:
    """A plugged-in USB device with an ADB interface, and whether this user may open it."""

    name: str
    node: str  # /dev/bus/usb/BBB/DDD
    vendor: str
    usable: bool


@dataclass(frozen=True)
class ListedPhone:
    serial: str
    state: str
    usb: bool


class Machine(Protocol):
    """What the checks read of the machine."""

    def browsers(self) -> list[tuple[str, str]]:
        """Installed Chrome/Chromium as (command, ``--version`` output)."""
        ...

    def browser_flags(self) -> list[tuple[str, list[str]]]:
        """Each browser profile's chrome://flags (``Local State``): (where, enabled experiments)."""
        ...

    def adb_devices(self) -> list[ListedPhone] | None:
        """The host adb server's devices, or None when no adb server answers."""
        ...

    def linux(self) -> bool: ...

    def usb_phones(self) -> list[UsbPhone]: ...

    def groups(self) -> set[str]: ...

    def port_holder(self, port: int) -> dict[str, object] | bool | None:
        """Who holds the port: a phone-agent server's identity (``/api/server``), False when it is free,
        None when something else holds it."""
        ...

    def page_root(self) -> Path: ...


def chrome_version(machine: Machine) -> CheckResult:
    found = []
    for command, output in machine.browsers():
        match = re.search(r"(\d+)\.\d+\.\d+", output)
        if match:
            found.append((int(match.group(1)), command, output.strip()))
    if not found:
        return CheckResult(
            "chrome",
            False,
            "no Chrome or Chromium found",
            f"install Google Chrome {MIN_CHROME} or newer (or Chromium: `sudo apt-get install chromium`)",
        )
    major, command, text = max(found)
    if major < MIN_CHROME:
        return CheckResult(
            "chrome", False, f"{text} ({command})", f"update Chrome to {MIN_CHROME} or newer (for WebMCP)"
        )
    return CheckResult("chrome", True, f"{text} ({command})")


def _enables_webmcp(flag: str) -> bool:
    """``enable-webmcp-testing@1`` (Enabled) in Local State's list; ``@2`` would be Disabled."""
    name, _, choice = flag.partition("@")
    return name == WEBMCP_FLAG and choice != "2"


def webmcp_flag(machine: Machine) -> CheckResult:
    profiles = machine.browser_flags()
    on = [where for where, flags in profiles if any(_enables_webmcp(flag) for flag in flags)]
    fix = (
        f"open chrome://flags/#{WEBMCP_FLAG}, set it to Enabled and restart Chrome (or start Chrome with "
        "--enable-features=WebMCP); the MCP relay works without it, in-page agents need it"
    )
    if on:
        return CheckResult("webmcp", True, f"WebMCP is on in {', '.join(on)}")
    if not profiles:
        return CheckResult("webmcp", False, "no Chrome profile found to read chrome://flags from", fix)
    return CheckResult("webmcp", False, f"WebMCP is off in {', '.join(w for w, _ in profiles)}", fix)


def adb_server(machine: Machine) -> CheckResult:
    devices = machine.adb_devices()
    if devices is None:
        return CheckResult("adb-server", True, "no host adb server runs: WebUSB can claim a USB phone")
    held = [d.serial for d in devices if d.usb]
    if held:
        return CheckResult(
            "adb-server",
            False,
            f"the host adb server holds the USB phone {', '.join(held)}: WebUSB cannot claim it",
            "run `adb kill-server` before Connect USB phone (or press Use adb server in the page instead)",
        )
    others = len(devices)
    return CheckResult("adb-server", True, f"a host adb server runs and holds no USB phone ({others} other)")


def usb_access(machine: Machine) -> CheckResult:
    if not machine.linux():
        return CheckResult("usb-access", True, "not Linux: the browser asks for the device itself")
    phones = machine.usb_phones()
    if not phones:
        return CheckResult("usb-access", True, "no phone with USB debugging is plugged in (nothing to check)")
    blocked = [p for p in phones if not p.usable]
    if not blocked:
        return CheckResult("usb-access", True, f"this user may open {', '.join(p.name for p in phones)}")
    vendors = sorted({p.vendor for p in blocked})
    rules = "; ".join(
        f'SUBSYSTEM=="usb", ATTR{{idVendor}}=="{vendor}", MODE="0660", GROUP="plugdev"' for vendor in vendors
    )
    joined = "" if "plugdev" in machine.groups() else " and `sudo usermod -aG plugdev $USER` (log in again)"
    return CheckResult(
        "usb-access",
        False,
        f"this user may not open {', '.join(f'{p.name} ({p.node})' for p in blocked)}",
        f"add the udev rule {rules} to /etc/udev/rules.d/51-android.rules, `sudo udevadm control "
        f"--reload-rules`{joined}, then unplug and replug the phone",
    )


def port_check(machine: Machine, port: int) -> CheckResult:
    holder = machine.port_holder(port)
    if holder is False:
        return CheckResult("port", True, f"port {port} is free for phone-agent")
    if isinstance(holder, dict):
        return CheckResult("port", True, f"phone-agent {holder.get('version', '?')} runs on port {port}")
    return CheckResult(
        "port",
        False,
        f"port {port} is held by something that is not phone-agent",
        "stop it, or choose another port with --port or PHONE_AGENT_WS_PORT",
    )


def page_paired(machine: Machine, port: int) -> CheckResult:
    holder = machine.port_holder(port)
    if isinstance(holder, dict) and holder.get("pagePaired"):
        return CheckResult("page", True, f"a page is paired with the server on port {port}")
    open_it = f"open the link `phone-agent url --port {port}` prints in Chrome"
    if isinstance(holder, dict):
        return CheckResult("page", False, f"no page is paired with the server on port {port}", open_it)
    return CheckResult(
        "page",
        False,
        f"no phone-agent server runs on port {port}, so no page is paired",
        f"start one (`phone-agent serve --port {port}`, or your MCP client's `phone-agent mcp`), then "
        + open_it,
    )


def jars(machine: Machine) -> CheckResult:
    root = machine.page_root()
    missing = [name for name, path in JARS if not (root / path).is_file() or not (root / path).stat().st_size]
    if missing:
        return CheckResult(
            "jars",
            False,
            f"{', '.join(missing)} missing under {root}",
            "run scripts/setup in a checkout, or reinstall phone-agent-mcp (its wheel carries them)",
        )
    return CheckResult("jars", True, "scrcpy-server and u2.jar are there for the page to push")


def run_checks(machine: Machine, port: int) -> list[CheckResult]:
    checks: Sequence[Callable[[], CheckResult]] = (
        lambda: chrome_version(machine),
        lambda: webmcp_flag(machine),
        lambda: adb_server(machine),
        lambda: usb_access(machine),
        lambda: port_check(machine, port),
        lambda: page_paired(machine, port),
        lambda: jars(machine),
    )
    return [check() for check in checks]


def report_text(results: list[CheckResult]) -> str:
    lines = []
    for result in results:
        lines.append(f"{'ok  ' if result.ok else 'FAIL'} {result.name}: {result.detail}")
        if not result.ok and result.fix:
            lines.append(f"     fix: {result.fix}")
    failed = sum(not r.ok for r in results)
    lines.append("all checks passed" if not failed else f"{failed} of {len(results)} checks failed")
    return "\n".join(lines)


def report_json(results: list[CheckResult]) -> str:
    return json.dumps({"ok": all(r.ok for r in results), "checks": [asdict(r) for r in results]}, indent=2)
