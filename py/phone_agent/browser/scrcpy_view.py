"""The live view from scrcpy: the phone's H.264 stream decoded by WebCodecs into a canvas, and the
phone's input through scrcpy's control socket while it runs.

``ScrcpyLiveView.run`` starts scrcpy on the connected phone (``ScrcpyClient``: pure Python over the
page's ADB link), swaps the ``<img id="screen">`` for a ``<canvas id="screen">`` (same id, same
place; ``data-source="scrcpy"``, ``data-fps`` the measured rate), hands each packet to a
``VideoDecoder`` through ``WebCodecsVideo`` (the thin adapter, ``avc1.PPCCLL`` from the stream's
SPS) and hands a ``ScrcpyDevice`` to ``install_device`` (the live view routes the tools' calls
through it). It returns the reason it stopped (scrcpy could not start, the stream ended or broke,
the decoder failed, the page was hidden) after putting everything back: the image, the plain device,
a closed decoder and destroyed proxies. The caller (the live view) then polls ``screencap`` and
shows the reason. ``restart`` ends a run at once (the
Settings changed the stream): ``run_while_possible`` starts the next with the new options.

``ScrcpyLooks`` offers the latest drawn frame to the agent (``tools.screen_source.LiveScreen``).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

import js  # type: ignore[import-not-found]
from pyodide.ffi import create_proxy, to_js  # type: ignore[import-not-found]

from ..adb.client import AdbError, ServiceOpener
from ..agent.settings import ScreenSettings
from ..device.interface import Device
from ..scrcpy.client import ScrcpyClient, ScrcpyClosed, ScrcpyStartError
from ..scrcpy.device import ScrcpyDevice
from ..scrcpy.h264 import avc_codec_string
from ..scrcpy.protocol import ScrcpyProtocolError, ScrcpyServerOptions, VideoPacket
from ..tools.screen_source import FrameState, oriented
from .canvas_codec import canvas_png
from .interop import is_nullish, to_js_json
from .scrcpy_record import PageStreamRecording

JAR_URL = "./static/vendor/scrcpy/scrcpy-server"
# Dispatched on the document whenever #live-source changes: the Settings card says what runs.
LIVE_SOURCE_EVENT = "phone-agent-live-source"
HIDDEN = "the page was hidden"
SCREEN_REPLACED = "live-screen-replaced"  # dispatched on document after #screen changes element
MAX_RESTARTS = 3  # a stream that breaks again and again without showing a frame: use screencap
RESTART_DELAY_S = 1.0
FPS_WINDOW_S = 3.0
MAX_DECODE_QUEUE = 30  # frames waiting in the decoder: past that the page cannot keep up
HIDDEN_POLL_S = 0.25
TURNED_OFF = "turned off in Settings"


def scrcpy_options(settings: ScreenSettings) -> ScrcpyServerOptions | None:
    """The stream the screen settings ask for (the page's URL already applied); None: scrcpy off."""
    if not settings.scrcpy:
        return None
    return ScrcpyServerOptions(max_size=settings.max_size, max_fps=settings.max_fps)


async def fetch_server_jar() -> bytes:
    """The vendored scrcpy-server, from the page's own origin."""
    response = await js.fetch(JAR_URL)
    if not response.ok:
        raise ScrcpyStartError(
            f"the page has no scrcpy server ({JAR_URL}: HTTP {response.status}); run scripts/setup"
        )
    return (await response.arrayBuffer()).to_bytes()


class WebCodecsVideo:
    """``VideoDecoder`` into a canvas: packets in, frames drawn; the decoder's failure kept.

    A frame is copied into one reused ``ImageData`` as RGBA (``VideoFrame.copyTo``) and put on the
    canvas, then closed. Not ``drawImage(frame)``: in a canvas without a GPU each frame drawn that way
    is converted through Blink's shared image decode cache and stays there (up to 64 MiB a renderer,
    ~1.8 MiB a frame at 464×1024) as it is never drawn again. Frames that come while one is being
    copied wait as one: the newest; the older is closed undrawn."""

    def __init__(self, canvas: Any, on_frame: Callable[[], None]) -> None:
        self.canvas = canvas
        self._context = canvas.getContext("2d")
        self._on_frame = on_frame
        self.error: str | None = None
        self.failed = asyncio.Event()
        self.codec: str | None = None
        self._pending: Any = None  # the newest frame not drawn yet
        self._drawing: asyncio.Future[None] | None = None
        self._pixels: Any = None  # the ImageData frames are copied into, while their size holds
        self._copy_options = to_js_json({"format": "RGBA", "colorSpace": "srgb"})
        self._copy_refused = False  # a browser without copyTo's RGBA conversion: drawImage
        self._output = create_proxy(self._draw)
        self._error = create_proxy(self._fail)
        self._decoder = js.VideoDecoder.new(_init(self._output, self._error))

    def _draw(self, frame: Any) -> None:
        """The decoder's output: the frame waits for the canvas (replacing an older one waiting)."""
        if self._pending is not None:
            self._pending.close()
        self._pending = frame
        if self._drawing is None or self._drawing.done():
            self._drawing = asyncio.ensure_future(self._draw_pending())

    async def _draw_pending(self) -> None:
        while (frame := self._pending) is not None:
            self._pending = None
            try:
                await self._put(frame)
            except Exception as exc:
                self._fail(exc)
                return
            finally:
                frame.close()
            self._on_frame()

    async def _put(self, frame: Any) -> None:
        rect = frame.visibleRect
        width, height = int(rect.width), int(rect.height)
        if self.canvas.width != width or self.canvas.height != height:
            self.canvas.width, self.canvas.height = width, height
        if not self._copy_refused:
            pixels = self._pixels
            if pixels is None or pixels.width != width or pixels.height != height:
                pixels = self._pixels = js.ImageData.new(width, height)
            try:
                await frame.copyTo(pixels.data, self._copy_options)
            except Exception:
                self._copy_refused = True
            else:
                self._context.putImageData(pixels, 0, 0)
                return
        self._context.drawImage(frame, 0, 0)

    def _fail(self, error: Any) -> None:
        self.error = f"the video decoder failed: {error.message if hasattr(error, 'message') else error}"
        self.failed.set()

    @property
    def queued(self) -> int:
        return int(self._decoder.decodeQueueSize)

    def decode(self, packet: VideoPacket) -> None:
        """Hand the packet to the decoder; a decoder that refuses it (it throws: closed, or a chunk
        it will not take) fails the run like its error callback does."""
        try:
            if self.codec is None:
                if not packet.key_frame:
                    return  # nothing to decode from until the first key frame (it carries the SPS)
                codec = avc_codec_string(packet.data)
                self._decoder.configure(to_js_json({"codec": codec, "optimizeForLatency": True}))
                self.codec = codec
            self._decoder.decode(js.EncodedVideoChunk.new(_chunk(packet)))
        except ValueError:
            raise  # a key frame without a usable SPS: the stream broke (the caller says so)
        except Exception as exc:
            self._fail(exc)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            if self._decoder.state != "closed":
                self._decoder.close()
        if self._pending is not None:
            self._pending.close()
            self._pending = None
        if self._drawing is not None:
            self._drawing.cancel()
        self._pixels = None
        self._output.destroy()
        self._error.destroy()


def _init(output: Any, error: Any) -> Any:
    """VideoDecoderInit; built by hand (not to_js_json): it holds the callback proxies."""
    init = js.Object.new()
    init.output = output
    init.error = error
    return init


def _chunk(packet: VideoPacket) -> Any:
    """EncodedVideoChunkInit with the packet's bytes copied into a Uint8Array."""
    init = js.Object.new()
    init.type = "key" if packet.key_frame else "delta"
    init.timestamp = packet.pts_us or 0
    init.data = to_js(packet.data)
    return init


class ScrcpyLiveView:
    """One run of scrcpy in the live view (see the module's docstring)."""

    def __init__(
        self,
        install_device: Callable[[Device | None], None],
        options: ScrcpyServerOptions | None = None,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.options = options or ScrcpyServerOptions()
        self._install_device = install_device
        self._say = say or (lambda _text: None)
        self._frames: list[float] = []
        self.device: ScrcpyDevice | None = None
        self.running = False
        self.started = False  # the last run got as far as a stream
        self.frames_total = 0
        self.fallback_reason: str | None = None
        # For the agent's looks: the canvas drawn into, when its last frame came, the phone's size.
        self.canvas: Any = None
        self.last_frame_at: float | None = None
        self.device_size: tuple[int, int] | None = None
        self._restart: asyncio.Event = asyncio.Event()
        self._restart_reason = ""
        self.recording = PageStreamRecording()  # start/stop_recording while the stream runs

    # ----- the Phone card's side

    async def run_while_possible(self, current: Callable[[], Any]) -> str:
        """Show ``current()``'s phone through scrcpy for as long as it works: restart after the page
        was hidden, or after a broken stream (up to MAX_RESTARTS in a row without a frame). Returns
        why it gave up, having marked the live view as screencap with that reason."""
        failures = 0
        while True:
            device = current()
            if device is None:
                return "no phone"
            if js.document.visibilityState != "visible":
                await asyncio.sleep(HIDDEN_POLL_S)
                continue
            info = await device.device_info()
            frames_before = self.frames_total
            self._restart.clear()
            reason = await self.run(device.opener, device, (info.screen_width, info.screen_height))
            if current() is not device:
                return reason
            if reason == HIDDEN:
                self.show_source("scrcpy paused while the page is hidden")
                continue
            if reason == self._restart_reason and self._restart.is_set():
                failures = 0  # asked for (the Settings changed the stream): at once, with the new options
                continue
            failures = 1 if self.frames_total > frames_before else failures + 1
            if not self.started or failures > MAX_RESTARTS:
                self.fall_back(reason)
                return reason
            self.show_source(f"scrcpy stopped ({reason}); restarting")
            await asyncio.sleep(RESTART_DELAY_S)

    def restart(self, reason: str) -> None:
        """End the running stream now; ``run_while_possible`` starts it again (with ``self.options``
        as they are then)."""
        self._restart_reason = reason
        self._restart.set()

    def fall_back(self, reason: str) -> None:
        """Mark the live view as screencap polling, saying why scrcpy is not used."""
        self.fallback_reason = reason
        image = js.document.getElementById("screen")
        if not is_nullish(image):
            image.dataset.source = "screencap"
            image.dataset.fallbackReason = reason
        self.show_source(f"screencap (scrcpy unavailable: {reason})")

    def show_source(self, text: str) -> None:
        """The line under the live view that says which source runs, and why."""
        node = js.document.getElementById("live-source")
        if is_nullish(node):
            node = js.document.createElement("p")
            node.id = "live-source"
            node.className = "live-source"
            node.setAttribute("role", "status")
            bar = js.document.querySelector(".screen-bar")
            if is_nullish(bar):
                return
            bar.after(node)
        node.textContent = f"Live view: {text}"
        js.document.dispatchEvent(js.CustomEvent.new(LIVE_SOURCE_EVENT))

    async def run(self, opener: ServiceOpener, plain: Device, screen_size: tuple[int, int]) -> str:
        """Show the phone through scrcpy until it stops; the reason it stopped."""
        client = ScrcpyClient(opener, fetch_server_jar, self.options)
        canvas = image = video = None
        self.started = False
        try:
            self.show_source("starting scrcpy…")
            await client.start()
            self.started = True
            image = js.document.getElementById("screen")
            canvas = self._canvas_for(image, client.video_size)
            video = WebCodecsVideo(canvas, self._count_frame)
            self.canvas, self.device_size, self.last_frame_at = canvas, screen_size, None
            self.device = ScrcpyDevice(plain, client, screen_size, on_fallback=self._say)
            self.device.recorder = self.recording
            self._install_device(self.device)
            canvas.dataset.deviceWidth, canvas.dataset.deviceHeight = str(screen_size[0]), str(screen_size[1])
            image.replaceWith(canvas)
            # The live view's input handlers (browser.live_controls) follow the element.
            js.document.dispatchEvent(js.Event.new(SCREEN_REPLACED))
            self.running = True
            self.show_source(
                f"scrcpy ({client.video_size[0]}×{client.video_size[1]} H.264, {video.codec or 'avc1'})"
            )
            return await self._pump(client, video)
        except ScrcpyStartError as exc:
            return str(exc)
        except (ScrcpyClosed, ScrcpyProtocolError, AdbError, ValueError) as exc:
            return f"the scrcpy stream broke: {exc}"
        finally:
            self.running = False
            self.canvas = self.last_frame_at = None
            if self.device is not None:
                self._install_device(None)
                self.device = None
            if video is not None:
                video.close()
            if canvas is not None and image is not None and canvas.isConnected:
                canvas.replaceWith(image)
                js.document.dispatchEvent(js.Event.new(SCREEN_REPLACED))
            await client.close()

    async def _pump(self, client: ScrcpyClient, video: WebCodecsVideo) -> str:
        failed = asyncio.ensure_future(video.failed.wait())
        restart = asyncio.ensure_future(self._restart.wait())
        reading: asyncio.Future[list[VideoPacket]] | None = None
        try:
            while True:
                if js.document.visibilityState != "visible":
                    return HIDDEN
                reading = asyncio.ensure_future(client.read_packets())
                done, _ = await asyncio.wait(
                    {reading, failed, restart}, return_when=asyncio.FIRST_COMPLETED
                )
                if failed in done:
                    return video.error or "the video decoder failed"
                if restart in done:
                    return self._restart_reason
                for packet in reading.result():
                    video.decode(packet)
                    self.recording.feed(packet, client.video_size)
                if video.queued > MAX_DECODE_QUEUE:
                    return f"the page could not decode fast enough ({video.queued} frames behind)"
        finally:
            failed.cancel()
            restart.cancel()
            if reading is not None and not reading.done():
                reading.cancel()

    def _canvas_for(self, image: Any, size: tuple[int, int]) -> Any:
        canvas = js.document.createElement("canvas")
        canvas.id = "screen"
        canvas.className = image.className
        canvas.width, canvas.height = size
        canvas.tabIndex = 0  # focusable: typing on the live view goes to the phone
        canvas.style.touchAction = "none"  # drags are the phone's, not the page's scrolling
        canvas.setAttribute("aria-label", image.getAttribute("alt") or "Live view of the phone's screen")
        canvas.dataset.source = "scrcpy"
        canvas.dataset.fps = "0"
        return canvas

    def _count_frame(self) -> None:
        self.frames_total += 1
        now = time.monotonic()
        self.last_frame_at = now
        self._frames = [t for t in self._frames if now - t < FPS_WINDOW_S] + [now]
        canvas = js.document.getElementById("screen")
        if len(self._frames) > 1 and not is_nullish(canvas):
            fps = (len(self._frames) - 1) / (self._frames[-1] - self._frames[0])
            canvas.dataset.fps = f"{fps:.1f}"
            fps_node = js.document.getElementById("fps")
            if not is_nullish(fps_node):
                fps_node.textContent = f"{fps:.1f} fps"


class ScrcpyLooks:
    """The agent's ``LiveScreen``: the live view's latest frame, when the Settings allow it."""

    def __init__(self, view: ScrcpyLiveView, enabled: Callable[[], bool]) -> None:
        self._view = view
        self._enabled = enabled

    def frame_state(self) -> FrameState:
        view = self._view
        running = view.running and view.canvas is not None and bool(view.canvas.isConnected)
        age = None if view.last_frame_at is None else time.monotonic() - view.last_frame_at
        size = view.device_size
        if size is not None and running:
            size = oriented(size, (int(view.canvas.width), int(view.canvas.height)))
        return FrameState(self._enabled(), running, age, size)

    async def frame_png(self) -> bytes:
        canvas = self._view.canvas
        if canvas is None:
            raise ScrcpyClosed("the stream stopped")
        return await canvas_png(canvas)
