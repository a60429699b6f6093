"""``DeviceSession``: the connected phone as the device tools use it, with what they remember about it.

A handler gets it from ``CallEnv.session()``; the page's service keeps one per phone (a new phone, a
new state: refs and the screen size belong to the phone they came from). Pure: no I/O of its own.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Protocol

from .. import errors
from ..device.interface import Device, UiNode, UiTree, read_ui_tree, settle_screen
from ..device.windows import screen_extent
from .locators import ScreenSnapshot
from .screen_source import LiveScreen

SETTLE_TIMEOUT_MS = 2_000  # the longest a look waits for the screen to settle after an action
DISPLAY_TRIES = 3  # looks that ask the display's size before the windows alone tell it
TREE_REUSE_MS = 5_000  # a tree read this recently, with no action since, resolves a target again


@dataclass
class SessionState:
    """What the tools remember about the connected phone: the latest screen handed out (its refs), the
    latest screen read (and how), the screen size, and how many actions have been sent (so a look
    knows whether the screen may still move, and a target whether the tree just read still holds).
    A new phone gets a new state."""

    snapshot: ScreenSnapshot | None = None
    screen_size: tuple[int, int] | None = None  # as the screen is turned now (device pixels)
    # The display's size in its natural orientation and the rotation it was read at (``screen_info``);
    # None until asked, () when the phone cannot say.
    display: tuple[int, int, int] | tuple[()] | None = None
    display_misses: int = 0
    actions: int = 0
    settled_actions: int = 0  # ``actions`` when a look last waited for the screen to settle
    latest: ScreenSnapshot | None = None  # the latest tree read, handed out or not
    latest_actions: int = -1  # ``actions`` when it was read
    latest_at_ms: float = 0.0
    tree_source: str = ""
    tree_note: str = ""

    def acted(self) -> None:
        """An action went to the phone: the screen may move, and the tree read before is history."""
        self.actions += 1


def _monotonic_ms() -> float:
    return time.monotonic() * 1000


class Pixels(Protocol):
    """Decoded pixels: ``width * height * 4`` bytes, RGBA (agent.ports.RgbaImage is one)."""

    width: int
    height: int
    data: bytes


class ScreenshotScaler(Protocol):
    """What the tools use of the host's image codec (agent.ports.ImageCodec is one): take_screenshot
    scales, the pipeline's screenshot step decodes to black out a secret's field."""

    async def scale(self, png: bytes, width: int, height: int, mime: str, quality: float) -> bytes: ...

    async def decode(self, image: bytes, width: int, height: int) -> Pixels: ...


@dataclass
class DeviceSession:
    """The phone as the device tools use it. ``verify_refs``: a ref is checked against a fresh UI
    dump before it is used (off for the page's agent, which acts on the screen it has just read)."""

    device: Device
    state: SessionState = field(default_factory=SessionState)
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    monotonic_ms: Callable[[], float] = _monotonic_ms
    image_codec: ScreenshotScaler | None = None  # for scaled screenshots (the page: canvas; tests: Pillow)
    live_screen: LiveScreen | None = None  # the page's scrcpy live view (take_screenshot "live")
    verify_refs: bool = True
    # Hides in place what a screen read shows of the secrets typed (named_secrets.SecretBook.redact_nodes):
    # every look, and every locator matched on it, sees the placeholder.
    redact_nodes: Callable[[list[UiNode]], None] | None = None

    async def screen(self, *, settle: bool = True) -> ScreenSnapshot:
        """The screen's tree read now (after it settled, if an action came since the last look) as a
        snapshot, not yet handed out (its refs are not the caller's)."""
        await self.settle(settle)
        tree = await read_ui_tree(self.device)
        if self.redact_nodes is not None:
            self.redact_nodes(tree.nodes)
        width, height = await self.true_size(tree)
        snapshot = ScreenSnapshot.from_nodes(tree.nodes, width, height)
        if snapshot.width and snapshot.height:
            self.state.screen_size = (snapshot.width, snapshot.height)
        state = self.state
        state.latest, state.latest_actions, state.latest_at_ms = snapshot, state.actions, self.monotonic_ms()
        state.tree_source, state.tree_note = tree.source, tree.note
        return snapshot

    def recent_screen(self) -> ScreenSnapshot | None:
        """The tree read last, if no action came after it and it is recent: a target resolves
        against it instead of reading the screen again."""
        state = self.state
        if state.latest is None or state.latest_actions != state.actions:
            return None
        if self.monotonic_ms() - state.latest_at_ms > TREE_REUSE_MS:
            return None
        return state.latest

    async def settle(self, enabled: bool = True, timeout_ms: int = SETTLE_TIMEOUT_MS) -> int:
        """Wait (at most ``timeout_ms``) for the screen to settle if an action came since the last
        look: the scrcpy stream quiet, or the hierarchy server idle. The milliseconds it waited."""
        state = self.state
        if state.settled_actions == state.actions or not enabled:
            state.settled_actions = state.actions
            return 0
        state.settled_actions = state.actions
        return await settle_screen(self.device, timeout_ms)

    async def _display(self) -> tuple[int, int, int] | tuple[()]:
        """The display's natural size and the rotation it was read at, asked once (``screen_info``:
        ``wm size`` and the display's rotation); () when the phone cannot say (asked again at the next
        look when its failure may pass)."""
        if self.state.display is None:
            try:
                info = await self.device.screen_info()
                width, height, rotation = (
                    int(info["width"]),
                    int(info["height"]),
                    int(info.get("rotation") or 0),
                )
            except errors.ToolError as exc:
                self.state.display_misses += 1
                if exc.retryable and self.state.display_misses < DISPLAY_TRIES:
                    return ()  # a failure that may pass: asked again at the next look
                width = height = rotation = 0
            except Exception:  # a phone (or a stand-in) that cannot say: the windows tell the size
                width = height = rotation = 0
            if width > 0 and height > 0:
                natural = (height, width) if rotation % 2 else (width, height)
                self.state.display = (*natural, rotation)
            else:
                self.state.display = ()
        return self.state.display

    async def true_size(self, tree: UiTree) -> tuple[int, int]:
        """The screen's size as it is turned now: the display's (turned by the dump's own rotation, else
        by the rotation read with it), else the union of the tree's windows — never its first node."""
        extent = screen_extent(tree.nodes)
        display = await self._display()
        if not display:
            return extent
        width, height, read_at = display
        rotation = tree.rotation if tree.rotation is not None else read_at
        if rotation % 2:
            width, height = height, width
        if extent[0] > width + 1 and extent[1] <= width + 1 and extent[0] <= height + 1:
            width, height = height, width  # the windows lie the other way: the phone turned since
        return width, height

    async def screen_size(self) -> tuple[int, int]:
        """The screen's size as it is turned now (device pixels): the latest look's, else the display's,
        else what the phone's info says, else a look's."""
        if self.state.screen_size is None:
            display = await self._display()
            if display:
                width, height, rotation = display
                self.state.screen_size = (height, width) if rotation % 2 else (width, height)
                return self.state.screen_size
            info = await self.device.info()
            width, height = int(info.get("screenWidth") or 0), int(info.get("screenHeight") or 0)
            if width <= 0 or height <= 0:
                snapshot = await self.screen()
                width, height = snapshot.width, snapshot.height
            self.state.screen_size = (width, height)
        return self.state.screen_size
