"""The simulated scrcpy server's control socket: control messages (touches, keys, text, scroll,
clipboard) applied to the virtual phone as ``input`` would, and the replies (clipboard, acks).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from phone_agent.scrcpy import control as ctl
from phone_agent.sim.connection import AdbdStream

log = logging.getLogger(__name__)


class ControlReceiver:
    """One server's control socket: ``serve(stream)`` applies what arrives until it closes."""

    def __init__(
        self,
        phone: Any,
        run_blocking: Callable[..., Awaitable[Any]],
        video_size: tuple[int, int],
        screen_size: tuple[int, int],
    ) -> None:
        self.phone = phone
        self.run_blocking = run_blocking  # function(*args) in the sim's worker threads
        self.video_width, self.video_height = video_size  # the size touches are given in
        self.screen_width, self.screen_height = screen_size
        self.messages = 0
        self._touch: tuple[float, float, float] | None = None  # down point (physical) and time
        self._touch_last: tuple[float, float] = (0.0, 0.0)
        self._scroll_at_down = 0  # --realistic: where the list stood when the finger went down

    async def serve(self, stream: AdbdStream) -> None:
        """Read and apply messages until the stream ends or sends something that is not one."""
        decoder = ctl.ControlMessageDecoder()
        while True:
            data = await stream.read()
            if not data:
                return
            try:
                messages = decoder.receive_data(data)
            except ctl.ControlProtocolError as error:
                log.warning("scrcpy control: %s", error)  # the real server stops reading too
                return
            for message in messages:
                self.messages += 1
                reply = await self._apply_soon(message)
                if reply:
                    await stream.write(reply)

    async def _apply_soon(self, message: ctl.ControlMessage) -> bytes:
        """Apply at once when the phone is free (a touch is a state change of microseconds, the
        point of scrcpy's input); in a worker thread when a command holds the phone."""
        with self.phone.locked(wait=False) as held:
            if held:
                return self._apply(message)
        return await self.run_blocking(self._apply_locked, message)

    def _apply_locked(self, message: ctl.ControlMessage) -> bytes:
        with self.phone.locked():
            return self._apply(message)

    def _apply(self, message: ctl.ControlMessage) -> bytes:
        """Apply one message to the phone (the caller holds the phone)."""
        from phone_agent.sim.android import keys
        from phone_agent.sim.android.commands.input import press_key

        phone = self.phone
        kind = message.type
        if kind == ctl.INJECT_TOUCH_EVENT:
            point = self._physical(message)
            if point is None:
                return b""
            realistic = getattr(phone, "motion", None) is not None
            if message.action == ctl.MOTION_DOWN:
                self._touch = (*point, time.monotonic())
                self._touch_last = point
                self._scroll_at_down = phone.catalog_scroll if realistic else 0
            elif message.action == ctl.MOTION_MOVE:
                self._touch_last = point
                if realistic and self._touch is not None:  # --realistic: the list follows the finger
                    phone.follow_finger(self._touch[0], self._touch[1], *point, self._scroll_at_down)
            elif message.action == ctl.MOTION_UP and self._touch is not None:
                x0, y0, t0 = self._touch
                self._touch = None
                elapsed_ms = int((time.monotonic() - t0) * 1000)
                if realistic:  # the list is where the finger left it: it flings on from there
                    phone.swipe(x0, y0, point[0], point[1], elapsed_ms, followed=True)
                else:
                    phone.swipe(x0, y0, point[0], point[1], elapsed_ms)
        elif kind == ctl.INJECT_KEYCODE:
            if message.action == ctl.KEY_DOWN and message.repeat == 0:
                press_key(phone, message.keycode)
        elif kind == ctl.INJECT_TEXT:
            typed = "".join(ch for ch in message.text if keys.typeable(ch))  # others are skipped
            if typed:
                phone.type_text(typed)
        elif kind == ctl.INJECT_SCROLL_EVENT:
            point = self._physical(message)
            if point is not None and message.vscroll:
                x, y = point
                phone.swipe(x, y, x, y + message.vscroll * 200, 100)
        elif kind == ctl.BACK_OR_SCREEN_ON:
            if message.action == ctl.KEY_DOWN:
                press_key(phone, keys.BACK)
        elif kind == ctl.SET_CLIPBOARD:
            phone.set_clipboard(message.text)
            if message.paste:
                press_key(phone, keys.PASTE)
            if message.sequence:
                return ctl.encode_ack_clipboard(message.sequence)
        elif kind == ctl.GET_CLIPBOARD:
            return ctl.encode_clipboard(phone.clipboard)
        return b""

    def _physical(self, message: ctl.ControlMessage) -> tuple[float, float] | None:
        """Video coordinates to the screen's; None for a size that is not the stream's (the real
        server ignores such an event: the screen may have rotated since it was generated)."""
        if (message.screen_width, message.screen_height) != (self.video_width, self.video_height):
            log.warning("Ignore touch event, it was generated for a different device size")
            return None
        return (
            message.x * self.screen_width / self.video_width,
            message.y * self.screen_height / self.video_height,
        )
