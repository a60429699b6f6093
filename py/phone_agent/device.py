"""The phone as tools and the agent use it: the ``Device`` interface and UI nodes (errors: errors.py).

The ADB implementation (``adb/``) provides a Device over any transport (WebUSB, the server's bridge,
TCP in CPython); the agent and the tools depend only on this interface. Pure: no I/O here.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar
from xml.etree import ElementTree

from .errors import DeviceError
from .shell_result import ShellResult

T = TypeVar("T")

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
    """``back`` → ``KEYCODE_BACK``; ``KEYCODE_…`` names and decimal codes pass through; else ValueError."""
    name = key.strip()
    if name.lower() in KEY_CODES:
        return KEY_CODES[name.lower()]
    if name.upper().startswith("KEYCODE_") and name[8:].replace("_", "").isalnum() and len(name) > 8:
        return name.upper()
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
    children: list[UiNode] = field(default_factory=list, repr=False)

    @property
    def label(self) -> str:
        return self.text or self.content_desc


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

    async def open_app(self, package: str) -> None: ...

    async def list_apps(self, third_party_only: bool = False) -> list[str]: ...

    async def current_app(self) -> str | None:
        """``package/activity`` of the focused window, or None."""
        ...

    async def ui_nodes(self) -> list[UiNode]:
        """The current screen's uiautomator nodes, flattened in document order."""
        ...

    async def shell(self, command: str, timeout_ms: int = 10_000) -> ShellResult: ...


class DeviceWrapper:
    """A Device that passes every call to ``device`` through ``_around`` (which only awaits it here):
    subclasses watch or time the calls without restating the interface."""

    def __init__(self, device: Device) -> None:
        self.device = device

    async def _around(self, call: Awaitable[T]) -> T:
        return await call

    async def info(self) -> dict[str, Any]:
        return await self._around(self.device.info())

    async def screenshot_png(self) -> bytes:
        return await self._around(self.device.screenshot_png())

    async def tap(self, x: int, y: int) -> None:
        await self._around(self.device.tap(x, y))

    async def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        await self._around(self.device.long_press(x, y, duration_ms))

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        await self._around(self.device.swipe(x1, y1, x2, y2, duration_ms))

    async def type_text(self, text: str) -> str | None:
        return await self._around(self.device.type_text(text))

    async def press_key(self, key: str) -> None:
        await self._around(self.device.press_key(key))

    async def open_app(self, package: str) -> None:
        await self._around(self.device.open_app(package))

    async def list_apps(self, third_party_only: bool = False) -> list[str]:
        return await self._around(self.device.list_apps(third_party_only))

    async def current_app(self) -> str | None:
        return await self._around(self.device.current_app())

    async def ui_nodes(self) -> list[UiNode]:
        return await self._around(self.device.ui_nodes())

    async def shell(self, command: str, timeout_ms: int = 10_000) -> ShellResult:
        return await self._around(self.device.shell(command, timeout_ms))


class ScreenshotTap(DeviceWrapper):
    """A Device that passes every call through and also hands each screenshot it takes to
    ``on_frame``: the page's live view shows the agent's own screenshots while a task runs instead of
    taking its own (on a real phone a screenshot takes 1–3 s: two takers would halve the agent's).
    A failing ``on_frame`` never fails the call."""

    def __init__(self, device: Device, on_frame: Callable[[bytes], None]) -> None:
        super().__init__(device)
        self.on_frame = on_frame

    async def screenshot_png(self) -> bytes:
        png = await super().screenshot_png()
        try:
            self.on_frame(png)
        except Exception:  # a display's trouble is not the caller's
            pass
        return png


_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")


def parse_bounds(text: str) -> Bounds:
    match = _BOUNDS.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"not uiautomator bounds: {text!r}")
    left, top, right, bottom = (int(value) for value in match.groups())
    return Bounds(left, top, right, bottom)


def parse_ui_dump(xml_text: str) -> list[UiNode]:
    """The nodes of a ``uiautomator dump`` XML, flattened in document order (children kept too).

    Raises DeviceError when the text is not a dump (uiautomator prints errors such as "could not get
    idle state" instead of writing XML).
    """
    start = xml_text.find("<hierarchy")
    if start < 0:
        raise DeviceError(f"the phone gave no UI dump: {xml_text.strip()[:200] or 'empty answer'}")
    try:
        root = ElementTree.fromstring(xml_text[start:].strip())
    except ElementTree.ParseError as exc:
        raise DeviceError(f"the phone's UI dump is not valid XML: {exc}") from None
    flat: list[UiNode] = []

    def walk(element: ElementTree.Element, depth: int) -> list[UiNode]:
        nodes = []
        for child in element:
            if child.tag != "node":
                continue
            attrs = child.attrib
            try:
                bounds = parse_bounds(attrs.get("bounds", ""))
            except ValueError:
                bounds = Bounds(0, 0, 0, 0)
            node = UiNode(
                bounds=bounds,
                text=attrs.get("text", ""),
                resource_id=attrs.get("resource-id", ""),
                class_name=attrs.get("class", ""),
                package=attrs.get("package", ""),
                content_desc=attrs.get("content-desc", ""),
                checkable=attrs.get("checkable") == "true",
                checked=attrs.get("checked") == "true",
                clickable=attrs.get("clickable") == "true",
                enabled=attrs.get("enabled", "true") == "true",
                focusable=attrs.get("focusable") == "true",
                focused=attrs.get("focused") == "true",
                scrollable=attrs.get("scrollable") == "true",
                long_clickable=attrs.get("long-clickable") == "true",
                password=attrs.get("password") == "true",
                selected=attrs.get("selected") == "true",
                index=int(attrs.get("index", "0") or 0),
                depth=depth,
            )
            flat.append(node)
            node.children = walk(child, depth + 1)
            nodes.append(node)
        return nodes

    walk(root, 0)
    return flat
