"""This machine as ``doctor``'s checks read it (``doctor.Machine``): the browsers installed and their
chrome://flags, the host adb server's devices, the USB devices with an ADB interface (Linux sysfs), the
user's groups, who holds a port, and where the page is served from. Each probe is bounded and never
raises: what it cannot learn it reports as absent."""

from __future__ import annotations

import grp
import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

from .doctor import ListedPhone, UsbPhone

BROWSER_COMMANDS = ("google-chrome", "google-chrome-stable", "chromium", "chromium-browser")
MAC_BROWSERS = (
    "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
    "/Applications/Chromium.app/Contents/MacOS/Chromium",
)
ADB_SERVER_PORT = 5037
TIMEOUT_S = 3.0
# An ADB interface: vendor-specific class 0xff, subclass 0x42, protocol 0x01 (AOSP adb's usb rules).
ADB_INTERFACE = ("ff", "42", "01")


def _profile_dirs() -> list[tuple[str, Path]]:
    home = Path.home()
    config = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    support = home / "Library" / "Application Support"
    return [
        ("Chrome", config / "google-chrome"),
        ("Chromium", config / "chromium"),
        ("Chrome", support / "Google" / "Chrome"),
        ("Chromium", support / "Chromium"),
    ]


class LocalMachine:
    def __init__(
        self, host: str = "127.0.0.1", root: Path | None = None, adb_port: int = ADB_SERVER_PORT
    ) -> None:
        self.host = host
        self.adb_port = adb_port
        self._root = root

    def browsers(self) -> list[tuple[str, str]]:
        found = []
        commands = [shutil.which(c) for c in BROWSER_COMMANDS] + [p for p in MAC_BROWSERS if Path(p).exists()]
        for command in dict.fromkeys(c for c in commands if c):
            try:
                done = subprocess.run([command, "--version"], capture_output=True, text=True, timeout=10)
            except (OSError, subprocess.SubprocessError):
                continue
            if done.returncode == 0:
                found.append((command, done.stdout))
        return found

    def browser_flags(self) -> list[tuple[str, list[str]]]:
        profiles = []
        for name, folder in _profile_dirs():
            try:
                state = json.loads((folder / "Local State").read_text())
            except (OSError, ValueError):
                continue
            flags = (state.get("browser") or {}).get("enabled_labs_experiments") or []
            profiles.append((f"{name} ({folder})", [str(flag) for flag in flags]))
        return profiles

    def adb_devices(self) -> list[ListedPhone] | None:
        request = b"host:devices-l"
        try:
            with socket.create_connection(("127.0.0.1", self.adb_port), timeout=TIMEOUT_S) as sock:
                sock.sendall(b"%04x" % len(request) + request)
                data = b""
                while chunk := sock.recv(65536):
                    data += chunk
        except OSError:
            return None
        if not data.startswith(b"OKAY"):
            return None
        devices = []
        for line in data[8:].decode(errors="replace").splitlines():
            parts = line.split()
            if len(parts) >= 2:
                usb = any(part.startswith("usb:") for part in parts[2:])
                devices.append(ListedPhone(parts[0], parts[1], usb))
        return devices

    def linux(self) -> bool:
        return sys.platform.startswith("linux")

    def usb_phones(self) -> list[UsbPhone]:
        phones = []
        for interface in sorted(Path("/sys/bus/usb/devices").glob("*:*")):
            try:
                kind = tuple(
                    (interface / name).read_text().strip()
                    for name in ("bInterfaceClass", "bInterfaceSubClass", "bInterfaceProtocol")
                )
                if kind != ADB_INTERFACE:
                    continue
                device = interface.parent
                bus, number = (int((device / n).read_text()) for n in ("busnum", "devnum"))
                vendor = (device / "idVendor").read_text().strip()
                named = device / "product"
                product = named.read_text().strip() if named.exists() else vendor
            except (OSError, ValueError):
                continue
            node = f"/dev/bus/usb/{bus:03d}/{number:03d}"
            phones.append(UsbPhone(product, node, vendor, os.access(node, os.R_OK | os.W_OK)))
        return phones

    def groups(self) -> set[str]:
        names = set()
        for gid in os.getgroups():
            try:
                names.add(grp.getgrgid(gid).gr_name)
            except KeyError:
                continue
        return names

    def port_holder(self, port: int) -> dict[str, object] | bool | None:
        from . import background, credentials

        try:
            socket.create_connection((background.connect_host(self.host), port), timeout=TIMEOUT_S).close()
        except OSError:
            return False
        found = background.probe(self.host, port, credentials.load_token())
        return dict(found.identity) if found.state == "ours" else None

    def page_root(self) -> Path:
        from .options import default_root

        return self._root or default_root()
