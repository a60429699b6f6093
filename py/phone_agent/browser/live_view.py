"""The Phone card's live view of the screen, and the page's sources of the screen.

While the "Live view" box is ticked and a phone is connected, the view runs scrcpy
(``ScrcpyLiveView``: H.264 into ``canvas#screen``, input through its control socket, the tools'
calls routed through its ScrcpyDevice by the ``PageDevice``) for as long as it works, then polls
``screencap`` into ``img#screen`` and says why. While an agent task runs, the polling stops and the
view shows the agent's own screenshots (scrcpy's stream goes on: it costs the phone no screenshots).
The Settings' screen part restarts, stops or starts scrcpy (``apply_screen_settings``), and the
agent takes its looks from the latest drawn frame through ``looks()``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

import js  # type: ignore[import-not-found]
from pyodide.ffi import to_js  # type: ignore[import-not-found]

from ..adb.device import AdbDevice
from ..agent.settings import ScreenSettings
from ..device.interface import Device
from .dom import PanelEvents
from .interop import to_js_json
from .page_device import PageDevice, query_param
from .scrcpy_view import TURNED_OFF, ScrcpyLiveView, ScrcpyLooks, scrcpy_options

LIVE_VIEW_IDLE_S = 0.05
LIVE_VIEW_RETRY_S = 1.0


class LiveView:
    """The live view of ``current()``'s phone (see the module's docstring)."""

    def __init__(
        self,
        current: Callable[[], AdbDevice | None],
        link: Callable[[], PageDevice | None],
        screen: ScreenSettings | None,
        events: PanelEvents,
    ) -> None:
        self._doc = js.document
        self._current = current
        self._link = link
        self._events = events
        self._live: asyncio.Task[None] | None = None
        # While an agent task runs, the live view shows the agent's screenshots and takes none itself.
        self._agent_running = False
        self._live_wake = asyncio.Event()
        self._screen_url: str | None = None
        events.listen("live-toggle", "change", lambda _e: self.sync())
        # scrcpy first (off in Settings or ?scrcpy=0: never), else screencap polling; the Settings'
        # max_size and max_fps (the URL's when given) shape the stream.
        self._scrcpy_options = scrcpy_options((screen or ScreenSettings()).with_query(str(js.location.href)))
        self._scrcpy = ScrcpyLiveView(self._route, self._scrcpy_options, say=self._say_source)

    # -- the Phone card's side ----------------------------------------------------------------

    def _wanted(self) -> bool:
        return bool(self._doc.getElementById("live-toggle").checked)

    def sync(self) -> None:
        """Run the view when it is wanted and a phone is connected; stop it otherwise."""
        wanted = self._wanted() and self._current() is not None
        if wanted and (self._live is None or self._live.done()):
            self._live = asyncio.ensure_future(self._loop())
        elif not wanted and self._live is not None:
            self._live.cancel()
            self._live = None

    def forget(self) -> None:
        """The phone is gone: stop the view and clear the picture."""
        if self._live is not None:
            self._live.cancel()
            self._live = None
        self._set_screen(None)

    def agent_running(self, running: bool) -> None:
        """An agent task started or ended: the live view stops or resumes taking screenshots."""
        self._agent_running = running
        if self._wanted():
            self._doc.getElementById("fps").textContent = "the agent's view" if running else ""
        if not running:
            self._live_wake.set()

    def show_agent_frame(self, png: bytes) -> None:
        """A screenshot the agent took, shown in the live view when it is on."""
        if self._current() is not None and self._wanted():
            self._set_screen(png)

    def looks(self, enabled: Callable[[], bool]) -> ScrcpyLooks:
        """The live view's latest frame for the agent's looks (while ``enabled()`` says so)."""
        return ScrcpyLooks(self._scrcpy, enabled)

    def apply_screen_settings(self, screen: ScreenSettings) -> None:
        """The Settings changed: scrcpy restarts with the new stream, or stops, or starts (the page's
        URL parameters still win)."""
        options = scrcpy_options(screen.with_query(str(js.location.href)))
        if options == self._scrcpy_options:
            return
        self._scrcpy_options = options
        if options is not None:
            self._scrcpy.options = options
        if options is not None and self._scrcpy.running:
            self._scrcpy.restart("the Settings changed the stream")
        else:
            self._events.spawn(self._restart())

    # -- scrcpy ---------------------------------------------------------------------------------

    def _route(self, device: Device | None) -> None:
        """While scrcpy runs the tools' calls go through its ScrcpyDevice; after, the plain phone."""
        link, plain = self._link(), self._current()
        if link is not None and plain is not None:
            link.route_through(device if device is not None else plain)

    def _say_source(self, text: str) -> None:
        self._scrcpy.show_source(text)

    async def _restart(self) -> None:
        live, self._live = self._live, None
        if live is not None:
            live.cancel()
            await asyncio.wait({live}, timeout=5)  # its scrcpy run puts the image back and closes
        self.sync()

    # -- the loop -------------------------------------------------------------------------------

    async def _loop(self) -> None:
        if self._scrcpy_options is not None:
            await self._scrcpy.run_while_possible(self._current)
        elif query_param(str(js.location.href), "scrcpy") in ("0", "false", "off"):
            self._scrcpy.fall_back("turned off by ?scrcpy=0")
        else:
            self._scrcpy.fall_back(TURNED_OFF)
        frames: list[float] = []
        fps_node = self._doc.getElementById("fps")
        while (device := self._current()) is not None:
            if self._agent_running:
                fps_node.textContent = "the agent's view"
                self._live_wake.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._live_wake.wait(), LIVE_VIEW_RETRY_S)
                frames = []
                continue
            if js.document.visibilityState != "visible":
                await asyncio.sleep(LIVE_VIEW_RETRY_S)
                continue
            try:
                png = await device.screenshot_png()
            except asyncio.CancelledError:
                raise
            except Exception:
                await asyncio.sleep(LIVE_VIEW_RETRY_S)
                continue
            if self._current() is not device:
                return
            self._set_screen(png)
            now = time.monotonic()
            frames = [t for t in frames if now - t < 3.0] + [now]
            if len(frames) > 1:
                fps = (len(frames) - 1) / (frames[-1] - frames[0])
                fps_node.textContent = f"{fps:.1f} fps"
                self._doc.getElementById("screen").dataset.fps = f"{fps:.1f}"
            await asyncio.sleep(LIVE_VIEW_IDLE_S)

    def _set_screen(self, png: bytes | None) -> None:
        image = self._doc.getElementById("screen")
        if self._screen_url is not None:
            js.URL.revokeObjectURL(self._screen_url)
            self._screen_url = None
        if png is None:
            image.removeAttribute("src")
            self._doc.getElementById("fps").textContent = ""
            return
        blob = js.Blob.new(to_js([to_js(png)]), to_js_json({"type": "image/png"}))
        self._screen_url = js.URL.createObjectURL(blob)
        image.src = self._screen_url
