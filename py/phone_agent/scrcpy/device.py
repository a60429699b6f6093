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
from collections.abc import Awaitable, Callable
from typing import Protocol

from phone_agent import errors
from phone_agent.adb.client import AdbError
from phone_agent.device.interface import Device, key_code
from phone_agent.device.key_codes import KEY_CODE_NUMBERS
from phone_agent.device.wrapper import DeviceWrapper
from phone_agent.errors import DeviceError
from phone_agent.scrcpy import control as ctl
from phone_agent.scrcpy.client import ScrcpyClient, ScrcpyClosed

# Android KeyEvent codes for the names key_code() gives: every one goes through the control socket.
KEYCODE_NUMBERS: dict[str, int] = {f"KEYCODE_{name}": code for name, code in KEY_CODE_NUMBERS.items()}
MOVE_STEP_S = 1 / 60  # a swipe's MOVE events, one per display frame
QUIET_S = 0.1  # the video stream quiet this long after the latest action and frame: the screen settled
FIRST_FRAME_S = 0.3  # after an action, a frame showing its change is awaited this long (encode latency)
ACK_TIMEOUT = 3.0


def is_injectable_text(text: str) -> bool:
    """Text scrcpy's inject-text types key by key: printable ASCII (what every key map has)."""
    return all(0x20 <= ord(ch) < 0x7F for ch in text)


class StreamRecording(Protocol):
    """The page's recording of the scrcpy stream into MP4 (``browser/scrcpy_record.py``)."""

    @property
    def recording(self) -> bool: ...

    def start(self, max_seconds: int) -> None: ...

    def stop(self) -> Awaitable[bytes]: ...


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
        # Set by the page: start/stop_recording mux the stream itself instead of running screenrecord.
        self.recorder: StreamRecording | None = None
        self.acted_at = 0.0  # the event loop's time of the latest message sent

    async def wait_settled(self, timeout_ms: int) -> bool | None:
        """Settled when the video stream has been quiet for ``QUIET_S`` since the latest frame after
        the latest action (or no frame came ``FIRST_FRAME_S`` after it: nothing changed), or when the
        wrapped Device says so first (the hierarchy server's wait for idle)."""
        if not self.active:
            return await super().wait_settled(timeout_ms)
        quiet = asyncio.ensure_future(self._quiet(timeout_ms / 1000))
        inner = asyncio.ensure_future(super().wait_settled(timeout_ms))
        try:
            pending = {quiet, inner}
            while pending:
                done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)
                for task in done:
                    if task.exception() is None and task.result() is not None:
                        return task.result()
            return None
        finally:
            for task in (quiet, inner):
                task.cancel()
            await asyncio.gather(quiet, inner, return_exceptions=True)

    async def _quiet(self, limit_s: float) -> bool:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + limit_s
        while True:
            now = loop.time()
            frame, acted = self.scrcpy.last_video_at, self.acted_at
            # no frame since the action yet: its change may still be on its way (or change nothing)
            due = frame + QUIET_S if frame > acted else acted + FIRST_FRAME_S
            if due <= now:
                return True
            if now >= deadline:
                return False
            await asyncio.sleep(min(due, deadline) - now)  # until the stream has been quiet long enough

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
            self.acted_at = asyncio.get_running_loop().time()
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
            if len(points) == 1 and not duration_ms:  # a tap: down and up leave together, in one write
                return await self._send(
                    self.touch(ctl.MOTION_DOWN, *points[0]) + self.touch(ctl.MOTION_UP, *points[0])
                )
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

    # ----- clipboard and multi-touch, which only scrcpy offers

    async def get_clipboard(self) -> str:
        if self.active:
            try:
                return await self.scrcpy.get_clipboard(timeout=ACK_TIMEOUT)
            except (ScrcpyClosed, AdbError, TimeoutError, ConnectionError) as exc:
                self._fall_back(f"the scrcpy control socket failed: {exc or type(exc).__name__}")
        return await self.device.get_clipboard()

    async def set_clipboard(self, text: str, paste: bool = False) -> str:
        if self.active:
            try:
                await self.scrcpy.set_clipboard(text, paste=paste, timeout=ACK_TIMEOUT)
                return "scrcpy"
            except (ScrcpyClosed, AdbError, TimeoutError, ConnectionError) as exc:
                self._fall_back(f"the scrcpy control socket failed: {exc or type(exc).__name__}")
        return await self.device.set_clipboard(text, paste)

    def _finger(self, action: int, x: float, y: float, pointer: int) -> bytes:
        vx, vy, width, height = self._video_point(x, y)
        pressure = 0.0 if action == ctl.MOTION_UP else 1.0
        return ctl.inject_touch(action, vx, vy, width, height, pointer_id=pointer, pressure=pressure)

    async def pinch(self, x: int, y: int, scale: float, duration_ms: int = 400) -> None:
        """Two fingers on a horizontal line through ``(x, y)``, from a spread to ``scale`` times it
        (apart for scale > 1, together for scale < 1), as scrcpy's own Ctrl+drag pinch does."""
        if not self.active:
            await self.device.pinch(x, y, scale, duration_ms)
            return
        short = min(self.screen_width, self.screen_height)
        start = short * (0.12 if scale >= 1 else 0.35)
        end = min(max(start * scale, 20.0), short * 0.45)
        fingers = (ctl.POINTER_ID_GENERIC_FINGER, ctl.POINTER_ID_VIRTUAL_FINGER)
        steps = max(2, int(duration_ms / 1000 / MOVE_STEP_S))

        def both(action: int, half: float) -> list[bytes]:
            return [
                self._finger(action, x + side * half, y, pointer)
                for side, pointer in zip((-1, 1), fingers, strict=True)
            ]

        async with self._lock:
            try:
                for message in both(ctl.MOTION_DOWN, start):
                    await self.scrcpy.send(message)
                for step in range(1, steps + 1):
                    await asyncio.sleep(MOVE_STEP_S)
                    for message in both(ctl.MOTION_MOVE, start + (end - start) * step / steps):
                        await self.scrcpy.send(message)
                for message in both(ctl.MOTION_UP, end):
                    await self.scrcpy.send(message)
            except (ScrcpyClosed, AdbError, ConnectionError) as exc:
                self._fall_back(f"the scrcpy control socket failed: {exc or type(exc).__name__}")
                raise DeviceError(f"the pinch was cut short: {exc or type(exc).__name__}") from None

    # ----- recording: the stream itself, muxed by the page, when it can

    async def start_recording(self, max_seconds: int) -> str:
        if self.recorder is None or not self.active:
            return await self.device.start_recording(max_seconds)
        if self.recorder.recording:
            raise errors.invalid_argument(
                "start_recording",
                "maxSeconds",
                "cannot start a second recording while one runs",
                "Call stop_recording first.",
            )
        self.recorder.start(max_seconds)
        return "scrcpy"

    async def stop_recording(self) -> bytes:
        if self.recorder is not None and self.recorder.recording:
            return await self.recorder.stop()
        return await self.device.stop_recording()
