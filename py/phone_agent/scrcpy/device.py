"""``ScrcpyDevice``: the phone's Device with its input going through scrcpy's control socket.

Installed in place of the plain Device while scrcpy runs, so the tools and the agent need no change:
tap, long press and swipe become touch down/move/up in the video's coordinates (with the size the
stream reports), keys become key events, ASCII text is injected, other text goes through the
clipboard and PASTE (no ADBKeyBoard or Clipper needed; the device acknowledges the clipboard). An
action returns once its messages have left for the phone (scrcpy 2.5 has no side-effect-free
acknowledgement for the others; the server injects them at once). When the control socket fails,
the action falls back to the wrapped Device (``input``) and ``fallback_reason`` says why.
Everything else passes through unchanged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from phone_agent.adb.client import AdbError
from phone_agent.device.interface import Device, key_code
from phone_agent.device.key_codes import KEY_CODE_NUMBERS
from phone_agent.device.wrapper import DeviceWrapper
from phone_agent.scrcpy import control as ctl
from phone_agent.scrcpy.client import ScrcpyClient, ScrcpyClosed

# Android KeyEvent codes for the names key_code() gives: every one goes through the control socket.
KEYCODE_NUMBERS: dict[str, int] = {f"KEYCODE_{name}": code for name, code in KEY_CODE_NUMBERS.items()}
MOVE_STEP_S = 1 / 60  # a swipe's MOVE events, one per display frame
ACK_TIMEOUT = 3.0


def is_injectable_text(text: str) -> bool:
    """Text scrcpy's inject-text types key by key: printable ASCII (what every key map has)."""
    return all(0x20 <= ord(ch) < 0x7F for ch in text)


class ScrcpyDevice(DeviceWrapper):
    def __init__(
        self,
        device: Device,
        scrcpy: ScrcpyClient,
        screen_size: tuple[int, int],
        on_fallback: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__(device)
        self.scrcpy = scrcpy
        self.screen_width, self.screen_height = screen_size
        self.fallback_reason: str | None = None
        self._on_fallback = on_fallback
        self._lock = asyncio.Lock()  # one gesture at a time: touches of two gestures must not interleave

    @property
    def active(self) -> bool:
        return self.fallback_reason is None and not self.scrcpy.closed

    def _video_point(self, x: float, y: float) -> tuple[int, int, int, int]:
        width, height = self.scrcpy.video_size
        vx = round(min(max(x, 0), self.screen_width - 1) * width / self.screen_width)
        vy = round(min(max(y, 0), self.screen_height - 1) * height / self.screen_height)
        return min(vx, width - 1), min(vy, height - 1), width, height

    def touch(self, action: int, x: float, y: float) -> bytes:
        """A touch message at a point of the phone's screen (physical pixels)."""
        vx, vy, width, height = self._video_point(x, y)
        pressure = 0.0 if action == ctl.MOTION_UP else 1.0
        return ctl.inject_touch(action, vx, vy, width, height, pressure=pressure)

    async def _send(self, *messages: bytes) -> bool:
        """Send them in order; False (and the fallback noted) on failure."""
        if not self.active:
            return False
        try:
            for message in messages:
                await self.scrcpy.send(message)
            return True
        except (ScrcpyClosed, AdbError, ConnectionError) as exc:
            self._fall_back(f"the scrcpy control socket failed: {exc or type(exc).__name__}")
            return False

    def _fall_back(self, reason: str) -> None:
        if self.fallback_reason is None:
            self.fallback_reason = reason
            if self._on_fallback is not None:
                self._on_fallback(reason)

    async def _gesture(self, points: list[tuple[float, float]], duration_ms: int) -> bool:
        if not self.active:
            return False
        async with self._lock:
            try:
                await self.scrcpy.send(self.touch(ctl.MOTION_DOWN, *points[0]))
                steps = max(1, int(duration_ms / 1000 / MOVE_STEP_S)) if len(points) > 1 else 0
                (x1, y1), (x2, y2) = points[0], points[-1]
                for step in range(1, steps + 1):
                    await asyncio.sleep(MOVE_STEP_S)
                    t = step / steps
                    await self.scrcpy.send(
                        self.touch(ctl.MOTION_MOVE, x1 + (x2 - x1) * t, y1 + (y2 - y1) * t)
                    )
                if not steps and duration_ms:
                    await asyncio.sleep(duration_ms / 1000)
            except (ScrcpyClosed, AdbError, ConnectionError) as exc:
                self._fall_back(f"the scrcpy control socket failed: {exc or type(exc).__name__}")
                return False
            return await self._send(self.touch(ctl.MOTION_UP, *points[-1]))

    # ----- the Device calls that go through scrcpy

    async def tap(self, x: int, y: int) -> None:
        if not await self._gesture([(x, y)], 0):
            await self.device.tap(x, y)

    async def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        if not await self._gesture([(x, y)], duration_ms):
            await self.device.long_press(x, y, duration_ms)

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        if not await self._gesture([(x1, y1), (x2, y2)], duration_ms):
            await self.device.swipe(x1, y1, x2, y2, duration_ms)

    async def press_key(self, key: str) -> None:
        try:
            number = KEYCODE_NUMBERS.get(key_code(key))
            if number is None and key.strip().isdigit():
                number = int(key.strip())
        except ValueError:
            number = None  # the wrapped Device answers the error, in its words
        if number is None or not await self._send(ctl.key_press(number)):
            await self.device.press_key(key)

    async def type_text(self, text: str) -> str | None:
        if not text:
            return await self.device.type_text(text)
        if is_injectable_text(text):
            chunks = [
                text[i : i + ctl.INJECT_TEXT_MAX_BYTES]
                for i in range(0, len(text), ctl.INJECT_TEXT_MAX_BYTES)
            ]
            if await self._send(*(ctl.inject_text(chunk) for chunk in chunks)):
                return "scrcpy text"
        elif self.active:
            try:
                await self.scrcpy.set_clipboard(text, paste=True, timeout=ACK_TIMEOUT)
                return "scrcpy clipboard"
            except (ScrcpyClosed, AdbError, TimeoutError, ConnectionError) as exc:
                self._fall_back(f"the scrcpy control socket failed: {exc or type(exc).__name__}")
        return await self.device.type_text(text)
