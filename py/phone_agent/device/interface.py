"""The phone as tools and the agent use it: the ``Device`` interface and the values it speaks in (key
names, UI nodes, device info; shell results are ``shell_result.py``, device errors ``errors.py``).

The ADB implementation (``adb/``) provides a Device over any transport (WebUSB, the server's bridge,
TCP in CPython); the agent and the tools depend only on this interface. Pure: no I/O here. Parsing a
``uiautomator dump`` is ``adb/ui_dump.py``; wrapping a Device is ``wrapper.py``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from .key_codes import KEY_CODE_NUMBERS
from .shell_result import ShellResult

# Key names the agent's press_key accepts, mapped to Android key codes.
KEY_CODES: dict[str, str] = {
    "back": "KEYCODE_BACK",
    "home": "KEYCODE_HOME",
    "enter": "KEYCODE_ENTER",
    "recents": "KEYCODE_APP_SWITCH",
    "delete": "KEYCODE_DEL",
    "tab": "KEYCODE_TAB",
    "space": "KEYCODE_SPACE",
    "menu": "KEYCODE_MENU",
    "search": "KEYCODE_SEARCH",
    "power": "KEYCODE_POWER",
    "volume_up": "KEYCODE_VOLUME_UP",
    "volume_down": "KEYCODE_VOLUME_DOWN",
}


def key_code(key: str) -> str:
    """``back`` → ``KEYCODE_BACK``; Android's ``KEYCODE_…`` names (``key_codes.py``) and decimal codes
    pass through; anything else (a made-up ``KEYCODE_NOPE`` too) is a ValueError."""
    name = key.strip()
    if name.lower() in KEY_CODES:
        return KEY_CODES[name.lower()]
    if name.upper().startswith("KEYCODE_"):
        if name[8:].upper() in KEY_CODE_NUMBERS:
            return name.upper()
        raise ValueError(f"unknown key {key!r}: Android has no {name.upper()} (KeyEvent's KEYCODE_ names)")
    if name.isdigit():
        return name
    raise ValueError(
        f"unknown key {key!r}: use one of {', '.join(KEY_CODES)}, a KEYCODE_ name, or a key code number"
    )


@dataclass(frozen=True)
class Bounds:
    left: int
    top: int
    right: int
    bottom: int

    @property
    def center(self) -> tuple[int, int]:
        return (self.left + self.right) // 2, (self.top + self.bottom) // 2

    @property
    def width(self) -> int:
        return self.right - self.left

    @property
    def height(self) -> int:
        return self.bottom - self.top

    def contains(self, x: int, y: int) -> bool:
        return self.left <= x < self.right and self.top <= y < self.bottom


@dataclass
class UiNode:
    """One node of a uiautomator dump (attribute names in Python style)."""

    bounds: Bounds
    text: str = ""
    resource_id: str = ""
    class_name: str = ""
    package: str = ""
    content_desc: str = ""
    checkable: bool = False
    checked: bool = False
    clickable: bool = False
    enabled: bool = True
    focusable: bool = False
    focused: bool = False
    scrollable: bool = False
    long_clickable: bool = False
    password: bool = False
    selected: bool = False
    index: int = 0
    depth: int = 0
    # Not compared: two nodes are equal by their own attributes (comparing subtrees would recurse
    # through a hostile 100,000-deep tree).
    children: list[UiNode] = field(default_factory=list, repr=False, compare=False)

    @property
    def label(self) -> str:
        return self.text or self.content_desc


TREE_SERVER = "hierarchy-server"  # u2.jar's dumpWindowHierarchy, kept running on the phone
TREE_DUMP = "uiautomator-dump"  # a `uiautomator dump` process per look (the fallback)


@dataclass
class UiTree:
    """The screen's nodes and which source read them (``TREE_SERVER`` or ``TREE_DUMP``); ``note`` says
    why the server was restarted or not used, when it was."""

    nodes: list[UiNode]
    source: str = TREE_DUMP
    note: str = ""
    rotation: int | None = None  # the dump's own ``rotation`` (0-3), when it says it


async def read_ui_tree(device: Any) -> UiTree:
    """``device.ui_tree()`` where the Device has one, else its ``ui_nodes()`` (read by a dump)."""
    reader = getattr(device, "ui_tree", None)
    if reader is not None:
        return await reader()
    return UiTree(await device.ui_nodes())


async def wait_settled(device: Any, timeout_ms: int) -> bool | None:
    """``device.wait_settled(timeout_ms)`` where the Device can tell (True: settled, False: still moving
    at the limit), else None."""
    waiter = getattr(device, "wait_settled", None)
    return None if waiter is None else await waiter(timeout_ms)


def changed_since(device: Any, since: float) -> bool | None:
    """``device.changed_since(since)`` where the Device can tell whether the screen changed after
    ``since`` (the event loop's time; the live view's frames say it), else None."""
    teller = getattr(device, "changed_since", None)
    return None if teller is None else teller(since)


async def settle_screen(device: Any, timeout_ms: int) -> int:
    """Wait for the screen to settle after an action, at most ``timeout_ms`` (``wait_settled`` where
    the Device can tell; nothing where it cannot). The milliseconds it waited."""
    loop = asyncio.get_running_loop()
    started = loop.time()
    if timeout_ms > 0:
        try:
            async with asyncio.timeout(timeout_ms / 1000 + 1):
                await wait_settled(device, timeout_ms)
        except TimeoutError:
            pass
    return round((loop.time() - started) * 1000)


@dataclass(frozen=True)
class DeviceInfo:
    model: str
    brand: str
    manufacturer: str
    release: str
    sdk: str
    serial: str
    screen_width: int
    screen_height: int
    transport: str  # "usb", "tcp", "adb-server"

    def to_json(self) -> dict[str, Any]:
        """The fields get_device_status adds to ``connected: true`` (the seed's names first)."""
        return {
            "model": self.model,
            "brand": self.brand,
            "release": self.release,
            "sdk": self.sdk,
            "manufacturer": self.manufacturer,
            "serial": self.serial,
            "screenWidth": self.screen_width,
            "screenHeight": self.screen_height,
            "transport": self.transport,
        }


@dataclass(frozen=True)
class FileEntry:
    """One entry of a directory on the phone, as list_files answers it."""

    name: str
    type: str  # "file", "directory", "symlink" or "other"
    size: int
    mode: int  # the permission bits (st_mode & 0o7777)
    mtime: int  # seconds since the epoch

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "size": self.size,
            "mode": self.mode,
            "mtime": self.mtime,
        }


def file_type(st_mode: int) -> str:
    """``st_mode``'s kind as list_files names it."""
    kind = st_mode & 0o170000
    return {0o100000: "file", 0o040000: "directory", 0o120000: "symlink"}.get(kind, "other")


class ChunkStream(Protocol):
    """Bytes that arrive in chunks (a file streamed from the MCP client's machine): ``size`` in all,
    ``read`` answers the next chunk or None at the end."""

    size: int

    async def read(self) -> bytes | None: ...


# Receives a pulled file's bytes as they come (may wait: the receiving end sets the pace).
ChunkWriter = Callable[[bytes | memoryview], Awaitable[None]]


class Device(Protocol):
    """What the tools and the agent may ask of a phone. Every call is bounded in time."""

    async def info(self) -> dict[str, Any]:
        """``DeviceInfo.to_json()`` of the phone."""
        ...

    async def screenshot_png(self) -> bytes: ...

    async def tap(self, x: int, y: int) -> None: ...

    async def long_press(self, x: int, y: int, duration_ms: int = 800) -> None: ...

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None: ...

    async def type_text(self, text: str) -> str | None:
        """ASCII through ``input text``; other text through ADBKeyBoard or the clipboard, else
        DeviceError. Answers the way it typed (``input text``, ``ADBKeyBoard``, ``clipboard``)."""
        ...

    async def press_key(self, key: str) -> None:
        """A name of ``KEY_CODES``, a ``KEYCODE_`` name or a number."""
        ...

    async def delete_chars(self, count: int) -> None:
        """Move to the end of the focused field and delete ``count`` characters back from there."""
        ...

    async def open_app(self, package: str) -> None: ...

    async def stop_app(self, package: str) -> None:
        """Force-stop an installed app (DeviceError when the phone refuses)."""
        ...

    async def open_url(self, url: str) -> None:
        """Open a URL in the app the phone chooses for it (DeviceError when no app takes it)."""
        ...

    async def list_apps(self, third_party_only: bool = False) -> list[str]: ...

    async def current_app(self) -> str | None:
        """``package/activity`` of the focused window, or None."""
        ...

    async def ui_nodes(self) -> list[UiNode]:
        """The current screen's uiautomator nodes, flattened in document order. A Device may also
        have ``ui_tree()`` (the nodes and which source read them), ``wait_settled(timeout_ms)``
        (the screen stopped moving) and ``changed_since(t)`` (the screen changed after a moment);
        ``read_ui_tree``, ``wait_settled`` and ``changed_since`` above use them if so."""
        ...

    async def screen_info(self) -> dict[str, Any]:
        """The screen as get_screen_info answers it: ``width`` and ``height`` (device pixels as the
        screen is turned now), ``density`` (dpi), ``orientation`` (``portrait`` or ``landscape``),
        ``rotation`` (0–3) and ``screenOn``. DeviceError when the phone does not say its size."""
        ...

    async def set_orientation(self, orientation: str) -> None:
        """Lock the screen in ``portrait`` or ``landscape`` (auto-rotate off)."""
        ...

    async def shell(self, command: str, timeout_ms: int = 10_000) -> ShellResult: ...

    # ----- the developer's loop (files over sync, apps, clipboard, multi-touch, recording)

    async def push_file(
        self,
        data: bytes | ChunkStream,
        path: str,
        mode: int = 0o644,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        """Write ``data`` (bytes, or a ChunkStream pushed as it arrives) to ``path`` on the phone
        (file_not_found / permission_denied / DeviceError); ``progress(sent, total)`` is told as the
        bytes go."""
        ...

    async def pull_file(self, path: str, limit: int, into: ChunkWriter | None = None) -> bytes:
        """The bytes of the file at ``path``; DeviceError when it is larger than ``limit``. With ``into``
        the bytes are handed to it as they arrive (never held whole) and the answer is empty."""
        ...

    async def list_files(self, path: str) -> list[FileEntry]:
        """The entries of the directory at ``path`` (without ``.`` and ``..``); a file lists itself."""
        ...

    async def install_apk(
        self,
        data: bytes,
        replace: bool = True,
        grant_permissions: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        """Install the APK ``data`` (install_failed with Android's reason when the phone refuses)."""
        ...

    async def get_clipboard(self) -> str:
        """The phone's clipboard text (unsupported when this connection cannot read it)."""
        ...

    async def set_clipboard(self, text: str, paste: bool = False) -> str:
        """Put ``text`` on the clipboard (and paste it into the focused field); answers the way it went."""
        ...

    async def pinch(self, x: int, y: int, scale: float, duration_ms: int = 400) -> None:
        """Two fingers about ``(x, y)`` moving apart (scale > 1) or together (unsupported without
        multi-touch injection)."""
        ...

    async def start_recording(self, max_seconds: int) -> str:
        """Start recording the screen; answers how (``screenrecord``)."""
        ...

    async def stop_recording(self) -> bytes:
        """Stop the recording and answer its MP4 bytes."""
        ...
