"""``DeviceSession``: the connected phone as the device tools use it, with what they remember about it.

A handler gets it from ``CallEnv.session()``; the page's service keeps one per phone (a new phone, a
new state: refs and the screen size belong to the phone they came from). Pure: no I/O of its own.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..device.interface import Device
from .locators import ScreenSnapshot


@dataclass
class SessionState:
    """What the tools remember about the connected phone: the latest screen handed out (its refs) and
    the screen size. A new phone gets a new state."""

    snapshot: ScreenSnapshot | None = None
    screen_size: tuple[int, int] | None = None


def _monotonic_ms() -> float:
    return time.monotonic() * 1000


@dataclass
class DeviceSession:
    """The phone as the device tools use it. ``verify_refs``: a ref is checked against a fresh UI
    dump before it is used (off for the page's agent, which acts on the screen it has just read)."""

    device: Device
    state: SessionState = field(default_factory=SessionState)
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    monotonic_ms: Callable[[], float] = _monotonic_ms
    image_codec: Any = None  # agent.ports.ImageCodec, for scaled screenshots
    live_screen: Any = None  # screen_source.LiveScreen: the page's scrcpy live view (take_screenshot "live")
    verify_refs: bool = True

    async def screen(self) -> ScreenSnapshot:
        """A fresh UI dump as a snapshot (not yet handed out: its refs are not the caller's)."""
        snapshot = ScreenSnapshot.from_nodes(await self.device.ui_nodes())
        if snapshot.width and snapshot.height:
            self.state.screen_size = (snapshot.width, snapshot.height)
        return snapshot

    async def screen_size(self) -> tuple[int, int]:
        if self.state.screen_size is None:
            info = await self.device.info()
            width, height = int(info.get("screenWidth") or 0), int(info.get("screenHeight") or 0)
            if width <= 0 or height <= 0:
                snapshot = await self.screen()
                width, height = snapshot.width, snapshot.height
            self.state.screen_size = (width, height)
        return self.state.screen_size
