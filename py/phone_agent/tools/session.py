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
from ..device.interface import (
    Device,
    UiNode,
    UiTree,
    changed_since,
    read_ui_tree,
    settle_screen,
    wait_settled,
)
from ..device.windows import APP, DIALOG, screen_extent
from .locators import ScreenSnapshot
from .screen_source import LiveScreen

SETTLE_TIMEOUT_MS = 2_000  # the longest a look waits for the screen to settle after an action
DISPLAY_TRIES = 3  # looks that ask the display's size before the windows alone tell it
TREE_REUSE_MS = 5_000  # a tree read this recently, with no action since, resolves a target again
# The hierarchy server's wait for idle ends once no accessibility event came for this long (UiDevice's
# QUIET_TIME_TO_BE_CONSIDERD_IDLE_STATE): an idle answer this soon after a read began covers the read.
IDLE_QUIET_S = 0.5


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
    settled_actions: int = 0  # ``actions`` when a look last settled (its tree read for them)
    # ``actions`` when a wait for the screen to stop moving last ended: a look that took a new window's
    # tree during its transition leaves the pixels unsettled, so a screenshot after it still waits.
    still_actions: int = 0
    latest: ScreenSnapshot | None = None  # the latest tree read, handed out or not
    latest_actions: int = -1  # ``actions`` when it was read
    latest_at_ms: float = 0.0
    tree_source: str = ""
    tree_note: str = ""
    latest_focus: str | None = None  # the focused app read with ``latest`` (when ``focus_read``)
    focus_read: bool = False

    def acted(self) -> None:
        """An action went to the phone: the screen may move, and the tree read before is history."""
        self.actions += 1


def _monotonic_ms() -> float:
    return time.monotonic() * 1000


@dataclass(frozen=True)
class ScreenLook:
    """One look: the screen's snapshot, the focused app (None when not read or not said), how long
    the look waited for the screen to settle beyond its first read, and how many trees it read."""

    snapshot: ScreenSnapshot
    focus: str | None
    settled_ms: int
    reads: int = 1


def _new_window(
    before: ScreenSnapshot, before_focus: str | None, now: ScreenSnapshot, focus: str | None
) -> bool:
    """The tree shows the action's new window: another window than before has the focus, the tree
    holds that app's nodes, and most of the app's elements are not the ones read before the action
    (a window that only gained the focus while the old one's tree is still read is not new)."""
    if not focus or not before_focus or focus == before_focus:
        return False
    package = focus.split("/", 1)[0]
    if not any(node.package == package for node in now.nodes):
        return False
    old = {element.identity() for element in before.elements if element.window in (APP, DIALOG)}
    new = [element.identity() for element in now.elements if element.window in (APP, DIALOG)]
    return bool(new) and 2 * sum(key in old for key in new) < len(new)


async def current_app_or_none(device: Device) -> str | None:
    """The focused app, or None when the phone cannot say (an answer without it, not a failure)."""
    try:
        return await device.current_app()
    except errors.DeviceError:
        return None


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
        """The screen's tree read now (settled, if an action came since the last look: ``look``) as a
        snapshot, not yet handed out (its refs are not the caller's)."""
        return (await self.look(settle)).snapshot

    async def look(self, settle: bool = True, *, focus: bool = False) -> ScreenLook:
        """The screen now as a snapshot not yet handed out, with the focused app (when ``focus``, or
        read anyway). With no action since the last look (or ``settle`` false): one read at once.

        After an action the read starts at once (no wait before it) and stands as soon as it shows the
        action's new window: the tree differs from the one read before the action, and the focus moved
        to another window whose app the tree holds (a window transition's pixels still move, its tree
        does not). Otherwise it stands once the settle wait shows the screen did not change after the
        read began (the live view's frames since then, else an idle answer whose quiet covers it); when
        the wait cannot show that, the screen is read a second time, settled (the focus is read beside
        every read after an action)."""
        state = self.state
        if not settle or state.settled_actions == state.actions:
            state.settled_actions = state.actions
            if not settle:
                state.still_actions = state.actions
            return ScreenLook(*await self._read(focus), 0)
        state.settled_actions = state.actions
        before = state.latest if state.latest_actions == state.actions - 1 else None
        before_focus = state.latest_focus if state.focus_read else None
        loop = asyncio.get_running_loop()
        began = loop.time()
        snapshot, app = await self._read(True)
        if before is not None and _new_window(before, before_focus, snapshot, app):
            return ScreenLook(snapshot, app, 0)
        # The signals look back (the frames' times, the idle wait's quiet since the last event): asked
        # after the read, they cover it without a second call contending with it for the server.
        steady = await self._steady_since(began)
        state.still_actions = state.actions
        waited = round((loop.time() - began) * 1000)
        if steady:
            return ScreenLook(snapshot, app, waited)
        return ScreenLook(*await self._read(True), waited, reads=2)

    async def _steady_since(self, began: float) -> bool:
        """Wait (bounded) for the screen to settle; whether it is known not to have changed since
        ``began``: no video after it, or (without a live view) the idle answer's quiet covers it;
        True also when nothing on the phone can tell (no wait ever helped such a phone)."""
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(SETTLE_TIMEOUT_MS / 1000 + 1):
                settled = await wait_settled(self.device, SETTLE_TIMEOUT_MS)
        except TimeoutError:
            settled = False
        changed = changed_since(self.device, began)
        if changed is not None:
            return settled is not False and not changed
        if settled is None:  # nothing on the phone can tell: the read after the action is the look
            return True
        return settled and loop.time() - began <= IDLE_QUIET_S

    async def _read(self, focus: bool) -> tuple[ScreenSnapshot, str | None]:
        """One read of the tree (and the focused app beside it, with ``focus``), kept as the latest."""
        if focus:
            snapshot, app = await asyncio.gather(self._read_tree(), current_app_or_none(self.device))
        else:
            snapshot, app = await self._read_tree(), None
        self.state.latest_focus, self.state.focus_read = app, focus
        return snapshot, app

    async def _read_tree(self) -> ScreenSnapshot:
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
        wait for it (a look that read a new window during its transition did not wait): the scrcpy
        stream quiet, or the hierarchy server idle. The milliseconds it waited."""
        state = self.state
        waiting = enabled and state.still_actions != state.actions
        state.settled_actions = state.still_actions = state.actions
        return await settle_screen(self.device, timeout_ms) if waiting else 0

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
