"""The simulated scrcpy server's video socket: the phone's screen encoded as H.264 at the stream's
size, a frame when the screen changes and a repeat at least once a second, paced to max_fps.

For tests of bad input, ``VideoSender.inject`` sends a packet of the test's bytes next (a corrupt
frame for the client's decoder), or only its first bytes before hanging up (a truncated stream).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any

from phone_agent.scrcpy.protocol import CODEC_H264, ParsedOptions, encode_codec_meta, encode_packet
from phone_agent.sim.connection import AdbdStream, AdbdStreamClosedError

REPEAT_INTERVAL = 1.0  # seconds without a change before the same screen is sent again
DEFAULT_FPS = 60  # max_fps=0 (no limit): the fastest the sim looks for changes


class VideoSender:
    """One server's video: ``serve(stream)`` sends until the stream closes."""

    def __init__(
        self,
        phone: Any,
        run_blocking: Callable[..., Awaitable[Any]],
        options: ParsedOptions,
        size: tuple[int, int],
        stop: Callable[[], None],
    ) -> None:
        self.phone = phone
        self.run_blocking = run_blocking  # function(*args) in the sim's worker threads
        self.options = options
        self.width, self.height = size
        self.stop = stop  # ends the server process (after an injected packet cut short)
        self.frames_sent = 0
        # Where the video loop's time went (wall clock, for bench/bench_scrcpy.py): drawing and
        # encoding frames (a worker thread), and handing them to the client (flow control included).
        self.encode_seconds = 0.0
        self.write_seconds = 0.0
        self._injected: list[tuple[bytes, bool, int | None]] = []
        self._renderer: Any = None  # android.render.LayeredRenderer, made by the encoding thread
        self._due = 0.0  # when the last video frame was due (time.monotonic)

    def inject(self, data: bytes, *, key_frame: bool = False, cut_after: int | None = None) -> None:
        """Send ``data`` as the next video packet (frame header and all), instead of waiting for the
        screen to change; with ``cut_after``, only that many bytes of it, header included, and then
        the process ends (its sockets close) — a stream truncated inside a packet."""
        self._injected.append((data, key_frame, cut_after))

    def screen_key(self) -> object:
        """Changes whenever the picture may: the phone's version and its status-bar clock."""
        return (self.phone.version, self.phone.clock_text())

    async def _send_injected(self, stream: AdbdStream, pts: int) -> None:
        data, key_frame, cut_after = self._injected.pop(0)
        packet = encode_packet(data, pts, key_frame=key_frame) if self.options.send_frame_meta else data
        if cut_after is None:
            await stream.write(packet)
            return
        await stream.write(packet[:cut_after])
        await asyncio.sleep(0.05)  # the bytes leave before the hang-up
        self.stop()

    async def serve(self, stream: AdbdStream) -> None:
        """Send the codec meta, then frames, until ``stream`` closes."""
        from phone_agent.sim.screen_encoder import ScreenEncoder  # PyAV loads only when used

        fps = self.options.max_fps or DEFAULT_FPS
        encoder = await self.run_blocking(ScreenEncoder, self.width, self.height, fps)
        if self.options.send_codec_meta:
            await stream.write(encode_codec_meta(CODEC_H264, self.width, self.height))
        start = time.monotonic()
        interval = 1.0 / fps
        loop = asyncio.get_running_loop()
        changed = asyncio.Event()  # the phone changed its screen (any thread): look now

        def on_change() -> None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: nobody to wake
                loop.call_soon_threadsafe(changed.set)

        listeners = getattr(self.phone, "change_listeners", None)
        if listeners is not None:
            listeners.append(on_change)
        last_key: object = None
        last_sent = 0.0
        self._due = start - interval
        try:
            while not stream.closed:
                now = time.monotonic()
                if self._injected:
                    await self._send_injected(stream, int((now - start) * 1_000_000))
                    continue
                key = self.screen_key()
                if key != last_key or now - last_sent >= REPEAT_INTERVAL:
                    last_key, last_sent = key, now
                    pts = int((now - start) * 1_000_000)
                    packets = await self.run_blocking(self._encode, encoder, pts)
                    encoded = time.monotonic()
                    self.encode_seconds += encoded - now
                    data = b"".join(
                        encode_packet(p.data, pts, config=p.config, key_frame=p.key_frame)
                        if self.options.send_frame_meta
                        else p.data
                        for p in packets
                    )
                    if data:
                        await stream.write(data)
                        self.frames_sent += 1
                        self.write_seconds += time.monotonic() - encoded
                    await asyncio.sleep(self._pause(now, interval))
                else:
                    changed.clear()
                    await self._wait_for_change(changed, interval)
        except AdbdStreamClosedError:
            pass
        finally:
            if listeners is not None and on_change in listeners:
                listeners.remove(on_change)
            encoder.close()

    async def _wait_for_change(self, changed: asyncio.Event, interval: float) -> None:
        """Until the phone says its screen changed, or ``interval`` (the look after a pause catches
        the status-bar clock and the once-a-second repeat)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(changed.wait(), interval)

    def _pause(self, started: float, interval: float) -> float:
        """How long to wait after a frame begun at ``started``: paced by due times, not by a pause
        after each frame, so a wake-up that came late (a loaded machine) shortens the next pause
        instead of lowering the rate; at most max_fps on average (after a stall: one frame at once)."""
        self._due = max(self._due + interval, started)
        return max(0.0, self._due - time.monotonic())

    def _encode(self, encoder: Any, pts: int) -> list[Any]:
        # The node tree under the phone's lock (cached per version), the pixels outside it: a touch
        # arriving on the control socket must not wait for a frame being drawn. The renderer keeps
        # the windows below the first one that changed (a clock tick redraws the system bars only).
        if self._renderer is None:
            from phone_agent.sim.android.render import LayeredRenderer

            self._renderer = LayeredRenderer()
        image = self._renderer.render(self.phone.windows())
        compose = getattr(self.phone, "compose", None)  # --realistic: transitions, secure windows
        return encoder.encode(compose(image) if compose is not None else image, pts)
