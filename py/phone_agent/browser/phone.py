"""The page's phone: connect it (USB, a network adbd through the bridge, or the host's adb server),
show its state and a live view of its screen, and hand it to the tools as ``context.device``.

Which phone at load: ``?device=tcp:HOST:PORT`` wins; else a USB phone this page was allowed before
(no prompt); else the server's default (``phone-agent serve --sim`` names its simulated phone).

A link that drops by itself (the server restarted and its bridge closed, the phone went away and came
back, it sent garbage) is reconnected by itself, with backoff (a USB phone when it is plugged in again);
the card says why it dropped. Meanwhile ``context.device`` stays a ``PhoneLink`` that answers
``device_error`` with that reason (get_device_status: ``connected: false``), and a running agent task
ends at once, failed, with it. Only the Disconnect button or choosing another phone forgets the phone.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

import js  # type: ignore[import-not-found]
from pyodide.ffi import create_proxy, to_js  # type: ignore[import-not-found]

from ..adb.client import AdbClient, AdbError
from ..adb.device import AdbDevice
from ..adb.host import ConnectionState
from ..adb.smart_socket import AdbServerClient
from ..agent.settings import ScreenSettings
from ..context import McpServiceContext
from ..device import DeviceError, DeviceWrapper
from ..errors import ErrorCode, ToolError, no_device
from .adb_key import KEY_COMMENT, load_or_create_browser_key
from .adb_transports import (
    WebSocketAdbTransport,
    WebUsbAdbTransport,
    allowed_usb_devices,
    request_usb_device,
)
from .dom import PanelEvents
from .interop import is_nullish, to_js_json
from .scrcpy_view import TURNED_OFF, ScrcpyLiveView, ScrcpyLooks, server_options

ADB_SERVER_TARGET = "127.0.0.1:5037"
LIVE_VIEW_IDLE_S = 0.05
LIVE_VIEW_RETRY_S = 1.0
RECONNECT_FIRST_S = 0.5  # the first try after a drop; each failed try doubles the wait…
RECONNECT_MAX_S = 8.0  # …up to this
T = TypeVar("T")


def query_param(page_url: str, name: str) -> str | None:
    values = parse_qs(urlsplit(page_url).query).get(name)
    return values[0] if values else None


def parse_device_spec(spec: str) -> tuple[str, str]:
    """``tcp:HOST:PORT`` → ("tcp", "HOST:PORT"); ``adb-server:SERIAL`` → ("adb-server", SERIAL)."""
    kind, sep, rest = spec.partition(":")
    if not sep or kind not in ("tcp", "adb-server") or not rest:
        raise ValueError(f"unknown device {spec!r}: use tcp:HOST:PORT or adb-server:SERIAL")
    return kind, rest


def lost_message(reason: str) -> str:
    """What the page, the tools and the agent say about a link that dropped."""
    return f"The phone was disconnected ({reason.rstrip('.')})."


class _NoPhone:
    """Stands in for the phone while its link is down: every call fails at once with the reason."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
        async def call(*_args: Any, **_kwargs: Any) -> Any:
            raise DeviceError(
                f"{lost_message(self.reason)} The page is reconnecting by itself.",
                remedy="Wait a few seconds and call again (get_device_status says when the phone is "
                "back), or reconnect the phone in the phone-agent page.",
            )

        return call


class PhoneLink(DeviceWrapper):
    """What ``context.device`` holds while a phone is chosen: the connected AdbDevice, or, while its
    link is down, a stand-in that answers ``device_error`` with why it dropped. The object stays the
    same across a drop, so a call in flight answers that reason instead of "No phone device
    connected."; get_device_status still answers ``connected: false``."""

    def __init__(self, device: AdbDevice) -> None:
        super().__init__(device)
        self.lost_reason: str | None = None
        self._watchers: list[Callable[[str], None]] = []

    def attach(self, device: AdbDevice) -> None:
        self.device, self.lost_reason = device, None

    def lose(self, reason: str) -> None:
        self.device, self.lost_reason = _NoPhone(reason), reason  # type: ignore[assignment]
        for watcher in list(self._watchers):
            with contextlib.suppress(Exception):
                watcher(reason)

    def watch(self, on_lost: Callable[[str], None]) -> Callable[[], None]:
        """Be told (once per drop) when the link drops; returns the function that stops it."""
        self._watchers.append(on_lost)
        return lambda: self._watchers.remove(on_lost) if on_lost in self._watchers else None

    async def info(self) -> dict[str, Any]:
        if self.lost_reason is not None:
            raise no_device()
        return await self.device.info()

    async def _around(self, call: Awaitable[T]) -> T:
        try:
            return await call
        except ToolError as exc:
            # The ADB client knows why the link ended: say it (device_error), not only "no phone".
            if exc.code is ErrorCode.NO_DEVICE and exc.details.get("reason"):
                raise DeviceError(lost_message(str(exc.details["reason"]))) from None
            raise


class PhonePanel:
    """Connection manager and the Phone card of the page."""

    def __init__(
        self, context: McpServiceContext, bridge_path: str | None, screen: ScreenSettings | None = None
    ) -> None:
        self.context = context
        self.bridge_path = bridge_path
        self._doc = js.document
        self._client: AdbClient | None = None
        self._transport: Any = None
        self._device: AdbDevice | None = None
        self._live: asyncio.Task[None] | None = None
        # While an agent task runs, the live view shows the agent's screenshots and takes none itself.
        self._agent_running = False
        self._live_wake = asyncio.Event()
        self._busy = False
        self._link: PhoneLink | None = None
        # What a dropped link reconnects to: ("tcp", "HOST:PORT") or ("usb", serial number).
        self._target: tuple[str, str] | None = None
        self._reconnecting: asyncio.Task[None] | None = None
        self._usb_plugged = asyncio.Event()
        self._screen_url: str | None = None
        self._events = PanelEvents()
        self._events.listen("connect-usb", "click", lambda _e: self._events.spawn(self.connect_usb_prompt()))
        self._events.listen("connect-tcp", "submit", self._on_tcp_submit)
        self._events.listen(
            "connect-adb-server", "click", lambda _e: self._events.spawn(self.connect_adb_server())
        )
        self._events.listen(
            "disconnect", "click", lambda _e: self._events.spawn(self.disconnect("Disconnected."))
        )
        self._events.listen("live-toggle", "change", lambda _e: self._sync_live_view())
        if is_nullish(getattr(js.navigator, "usb", None)):
            button = self._doc.getElementById("connect-usb")
            button.disabled = True
            button.title = "This browser has no WebUSB: use Chrome or Edge on a desktop"
        else:
            self._usb_connect_proxy = create_proxy(lambda _event: self._usb_plugged.set())
            js.navigator.usb.addEventListener("connect", self._usb_connect_proxy)
        if not bridge_path:
            for element_id in ("connect-tcp-button", "connect-adb-server"):
                node = self._doc.getElementById(element_id)
                node.disabled = True
                node.title = "Needs the page to be served by phone-agent (its ADB bridge)"
        # ?adbServer=HOST:PORT when the host's adb server is not on its usual port.
        self.adb_server_target = query_param(str(js.location.href), "adbServer") or ADB_SERVER_TARGET
        # The live view tries scrcpy first (off in Settings or ?scrcpy=0: never) and falls back to
        # screencap polling; the Settings' max_size and max_fps (the URL's when given) shape it.
        self._scrcpy_options = server_options((screen or ScreenSettings()).with_query(str(js.location.href)))
        self._scrcpy = ScrcpyLiveView(
            self._use_scrcpy_device, self._scrcpy_options, say=self._say_live_source
        )

    @property
    def device(self) -> AdbDevice | None:
        """The connected phone, or None."""
        return self._device

    # -- wiring -------------------------------------------------------------------------------

    def _on_tcp_submit(self, event: Any) -> None:
        event.preventDefault()
        target = str(self._doc.getElementById("tcp-target").value).strip()
        self._events.spawn(self.connect_tcp(target))

    def _say(self, text: str, kind: str = "") -> None:
        node = self._doc.getElementById("device-state")
        node.textContent = text
        node.className = f"device-state device-state--{kind}" if kind else "device-state"

    def _bridge_url(self, target: str) -> str:
        location = js.location
        scheme = "wss" if location.protocol == "https:" else "ws"
        query = js.encodeURIComponent(target)
        return f"{scheme}://{location.host}{self.bridge_path}?target={query}"

    # -- at load ------------------------------------------------------------------------------

    async def connect_at_load(self, server_device: str | None) -> None:
        spec = query_param(str(js.location.href), "device")
        if spec is None:
            for usb in await allowed_usb_devices():
                await self.connect_usb(usb)
                if self._device is not None:
                    return
            spec = server_device
        if spec is None:
            return
        try:
            kind, rest = parse_device_spec(spec)
        except ValueError as exc:
            self._say(str(exc), "error")
            return
        if kind == "tcp":
            await self.connect_tcp(rest)
        else:
            await self.connect_adb_server(rest)

    # -- connecting ---------------------------------------------------------------------------

    async def connect_usb_prompt(self) -> None:
        usb = await request_usb_device()
        if usb is None:
            self._say("No phone chosen. Plug it in with USB debugging on, then choose it in the list.")
            return
        await self.connect_usb(usb)

    async def connect_usb(self, usb: Any) -> None:
        await self._connect(self._usb_transport(usb), "usb", "USB phone", str(usb.serialNumber or ""))

    def _usb_transport(self, usb: Any) -> WebUsbAdbTransport:
        return WebUsbAdbTransport(usb, on_disconnect=lambda: self._on_lost("the phone was unplugged"))

    async def connect_tcp(self, target: str) -> None:
        if not target or ":" not in target:
            self._say("Give the device as HOST:PORT, e.g. 127.0.0.1:5555.", "error")
            return
        if not self.bridge_path:
            self._say("Network devices need the page to be served by phone-agent.", "error")
            return
        transport = WebSocketAdbTransport(self._bridge_url(target), target)
        await self._connect(transport, "tcp", target, target)

    async def _connect(self, transport: Any, kind: str, description: str, target: str) -> None:
        if self._busy:
            return
        self._busy = True
        try:
            await self.disconnect(None)
            self._say(f"Connecting to {description}…", "busy")
            await self._open(transport, kind, description)
            self._target = (kind, target)
        except (AdbError, ToolError, ConnectionError, OSError, TimeoutError) as exc:
            self._say(f"Could not connect to {description}: {exc}", "error")
        finally:
            self._busy = False

    async def _open(self, transport: Any, kind: str, description: str) -> None:
        """Open the transport, shake hands, adopt the phone; on failure everything is dropped again."""
        try:
            key, created = await load_or_create_browser_key()
            if created:
                js.console.log("[ADB] made this browser's ADB key (phone-agent@browser)")
            await transport.open()
            client = AdbClient(transport, key, key_name=KEY_COMMENT, on_state=self._on_state)
            self._client, self._transport = client, transport
            await client.connect()
            serial = getattr(transport, "serial", "") or ""
            await self._adopt(AdbDevice(client, transport=kind, serial=serial), description)
        except BaseException:
            await self._drop()
            raise

    async def connect_adb_server(self, serial: str | None = None) -> None:
        if self._busy or not self.bridge_path:
            return
        self._busy = True
        try:
            await self.disconnect(None)
            self._say("Asking the adb server on this computer for its phones…", "busy")

            async def open_pipe() -> WebSocketAdbTransport:
                pipe = WebSocketAdbTransport(
                    self._bridge_url(self.adb_server_target), "the adb server", adb_packets=False
                )
                await pipe.open()
                return pipe

            server = AdbServerClient(open_pipe)
            entries = [entry for entry in await server.devices() if entry.state == "device"]
            if serial is not None:
                entries = [entry for entry in entries if entry.serial == serial]
            if not entries:
                wanted = f" named {serial}" if serial else ""
                self._say(f"The adb server has no usable phone{wanted} (check `adb devices`).", "error")
                return
            chosen = entries[0].serial
            opener = await server.device(chosen)
            device = AdbDevice(opener, transport="adb-server", serial=chosen)
            await self._adopt(device, f"{chosen} (adb server)")
        except (AdbError, ToolError, ConnectionError, OSError, TimeoutError) as exc:
            self._say(f"Could not use the adb server: {exc}", "error")
        finally:
            self._busy = False

    async def _adopt(self, device: AdbDevice, description: str) -> None:
        info = await device.device_info()
        self._device = device
        if self._link is None:
            self._link = PhoneLink(device)
        else:  # back after a drop: the same link, but refs and screen facts start afresh
            self._link.attach(device)
            self.context.device = None
        self.context.device = self._link
        self._say(f"Connected: {info.model} ({description})", "ok")
        facts = self._doc.getElementById("device-facts")
        facts.replaceChildren()
        for label, value in (
            ("Model", f"{info.brand} {info.model}"),
            ("Android", f"{info.release} (SDK {info.sdk})"),
            ("Serial", info.serial),
            ("Screen", f"{info.screen_width}×{info.screen_height}"),
            ("Link", info.transport),
        ):
            term = self._doc.createElement("dt")
            term.textContent = label
            detail = self._doc.createElement("dd")
            detail.textContent = value
            facts.append(term, detail)
        self._doc.documentElement.dataset.phone = "connected"
        self._doc.getElementById("disconnect").hidden = False
        self._sync_live_view()

    # -- losing it ----------------------------------------------------------------------------

    def _on_state(self, state: ConnectionState) -> None:
        if state is ConnectionState.WAITING_FOR_USER:
            self._say("Accept the prompt on your phone (Allow USB debugging?).", "busy")
        elif state is ConnectionState.CLOSED and self._device is not None:
            client = self._client
            reason = (client.failure if client is not None else None) or "the link closed"
            self._on_lost(reason)

    def _on_lost(self, reason: str) -> None:
        """The link dropped by itself (not by the Disconnect button): say why and reconnect."""
        if self._device is None or self._link is None:
            return
        js.console.warn(f"[ADB] {lost_message(reason)}")
        self._device = None
        self._link.lose(reason)  # tools answer why from now on; a running task ends at once
        self._events.spawn(self._reconnect(reason))

    async def _reconnect(self, reason: str) -> None:
        await self._forget_screen()
        lost = lost_message(reason)
        if self._target is None:
            self._say(lost)
            return
        self._reconnecting = asyncio.current_task()  # type: ignore[assignment]
        kind, target = self._target
        delay = RECONNECT_FIRST_S
        attempt = 0
        try:
            while self._device is None:
                attempt += 1
                try:
                    if kind == "usb":
                        self._usb_plugged.clear()
                        usb = await self._usb_phone(target)
                        if usb is None:  # unplugged: only its `connect` event brings it back
                            self._say(f"{lost} Plug it in again: the page reconnects by itself.")
                            await self._usb_plugged.wait()
                            continue
                        self._say(f"{lost} Reconnecting…", "busy")
                        await self._open(self._usb_transport(usb), "usb", "USB phone")
                    else:
                        self._say(f"{lost} Reconnecting to {target} (try {attempt})…", "busy")
                        transport = WebSocketAdbTransport(self._bridge_url(target), target)
                        await self._open(transport, kind, target)
                    break
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # WebUSB rejects with DOMExceptions: keep trying all the same
                    self._say(f"{lost} Reconnecting: {exc} (try {attempt}; next in {delay:g} s)", "error")
                await asyncio.sleep(delay)
                delay = min(delay * 2, RECONNECT_MAX_S)
        finally:
            if self._reconnecting is asyncio.current_task():
                self._reconnecting = None

    @staticmethod
    async def _usb_phone(serial: str) -> Any:
        """The allowed USB phone with this serial number when the browser lists it, else None."""
        for usb in await allowed_usb_devices():
            if str(usb.serialNumber or "") == serial:
                return usb
        return None

    def _stop_reconnecting(self) -> None:
        task, self._reconnecting = self._reconnecting, None
        if task is not None and task is not asyncio.current_task():
            task.cancel()

    async def disconnect(self, message: str | None) -> None:
        """Forget the phone: the tools answer "No phone device connected." from now on."""
        was_connected = self._device is not None or (self._link is not None and bool(self._link.lost_reason))
        self._stop_reconnecting()
        self._target = None
        self._device = None
        self.context.device = None
        if self._link is not None and self._link.lost_reason is None:
            self._link.lose("disconnected in the page")
        self._link = None
        await self._forget_screen()
        if message is not None and (was_connected or message == "Disconnected."):
            self._say(message if was_connected else "No phone connected.")

    async def _forget_screen(self) -> None:
        if self._live is not None:
            self._live.cancel()
            self._live = None
        await self._drop()
        self._doc.documentElement.dataset.phone = "none"
        self._doc.getElementById("disconnect").hidden = self._link is None
        self._doc.getElementById("device-facts").replaceChildren()
        self._set_screen(None)

    async def _drop(self) -> None:
        client, transport = self._client, self._transport
        self._client = self._transport = None
        try:
            if client is not None:
                await asyncio.wait_for(client.close(), 5)
            elif transport is not None:
                await asyncio.wait_for(transport.close(), 5)
        except Exception:
            pass

    # -- the live view ------------------------------------------------------------------------

    def _sync_live_view(self) -> None:
        wanted = bool(self._doc.getElementById("live-toggle").checked) and self._device is not None
        if wanted and (self._live is None or self._live.done()):
            self._live = asyncio.ensure_future(self._live_loop())
        elif not wanted and self._live is not None:
            self._live.cancel()
            self._live = None

    def agent_running(self, running: bool) -> None:
        """An agent task started or ended: the live view stops or resumes taking screenshots."""
        self._agent_running = running
        if bool(self._doc.getElementById("live-toggle").checked):
            self._doc.getElementById("fps").textContent = "the agent's view" if running else ""
        if not running:
            self._live_wake.set()

    def show_agent_frame(self, png: bytes) -> None:
        """A screenshot the agent took, shown in the live view when it is on."""
        if self._device is not None and bool(self._doc.getElementById("live-toggle").checked):
            self._set_screen(png)

    def _use_scrcpy_device(self, device: Any) -> None:
        """While scrcpy runs the tools' device is its ScrcpyDevice; after, the plain one again."""
        if self._device is not None:
            self.context.device = device if device is not None else self._device

    def _say_live_source(self, text: str) -> None:
        self._scrcpy.show_source(text)

    def looks(self, enabled: Callable[[], bool]) -> ScrcpyLooks:
        """The live view's latest frame for the agent's looks (while ``enabled()`` says so)."""
        return ScrcpyLooks(self._scrcpy, enabled)

    def apply_screen_settings(self, screen: ScreenSettings) -> None:
        """The Settings changed: scrcpy restarts with the new stream, or stops, or starts (the page's
        URL parameters still win)."""
        options = server_options(screen.with_query(str(js.location.href)))
        if options == self._scrcpy_options:
            return
        self._scrcpy_options = options
        if options is not None:
            self._scrcpy.options = options
        if options is not None and self._scrcpy.running:
            self._scrcpy.restart("the Settings changed the stream")
        else:
            self._events.spawn(self._restart_live())

    async def _restart_live(self) -> None:
        live, self._live = self._live, None
        if live is not None:
            live.cancel()
            await asyncio.wait({live}, timeout=5)  # its scrcpy run puts the image back and closes
        self._sync_live_view()

    async def _live_loop(self) -> None:
        if self._scrcpy_options is not None:
            await self._scrcpy.run_while_possible(lambda: self._device)
        elif query_param(str(js.location.href), "scrcpy") in ("0", "false", "off"):
            self._scrcpy.fall_back("turned off by ?scrcpy=0")
        else:
            self._scrcpy.fall_back(TURNED_OFF)
        frames: list[float] = []
        fps_node = self._doc.getElementById("fps")
        while self._device is not None:
            device = self._device
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
            if self._device is not device:
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
