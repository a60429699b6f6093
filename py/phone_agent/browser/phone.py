"""The page's phone: connect it (USB, a network adbd through the bridge, or the host's adb server),
show its state and a live view of its screen, and hand it to the tools as ``context.device``.

``PhonePanel`` is the connection's lifecycle; the card's DOM is ``phone_card.PhoneCard``, the live
view ``live_view.LiveView``, and what the tools hold ``page_device.PageDevice``.

Which phone at load: ``?device=tcp:HOST:PORT`` wins; else a USB phone this page was allowed before
(no prompt); else the server's default (``phone-agent serve --sim`` names its simulated phone).

A link that drops by itself (the server restarted and its bridge closed, the phone went away and came
back, it sent garbage) is reconnected by itself, with backoff (a USB phone when it is plugged in again);
the card says why it dropped. Meanwhile ``context.device`` stays a ``PageDevice`` that answers
``device_error`` with that reason (get_device_status: ``connected: false``), and a running agent task
ends at once, failed, with it. Only the Disconnect button or choosing another phone forgets the phone.
"""

from __future__ import annotations

import asyncio
from typing import Any

import js  # type: ignore[import-not-found]
from pyodide.ffi import create_proxy  # type: ignore[import-not-found]

from ..adb.client import AdbClient, AdbError
from ..adb.connection import ConnectionState
from ..adb.device import AdbDevice
from ..adb.hierarchy import HierarchyUnavailable
from ..adb.smart_socket import AdbServerClient
from ..agent.settings import ScreenSettings
from ..errors import ToolError
from ..tools.dispatch import ToolDispatcher
from .adb_key import KEY_COMMENT, load_or_create_browser_key
from .adb_transports import (
    WebSocketAdbTransport,
    WebUsbAdbTransport,
    allowed_usb_devices,
    request_usb_device,
)
from .dom import PanelEvents
from .interop import is_nullish
from .live_view import LiveView
from .page_device import PageDevice, lost_message, parse_device_spec, query_param
from .phone_card import PhoneCard

ADB_SERVER_TARGET = "127.0.0.1:5037"
RECONNECT_FIRST_S = 0.5  # the first try after a drop; each failed try doubles the wait…
RECONNECT_MAX_S = 8.0  # …up to this


HIERARCHY_JAR_URL = "./static/vendor/u2/u2.jar"


async def fetch_hierarchy_jar() -> bytes:
    """The vendored hierarchy server (u2.jar), from the page's own origin; fetched only when the phone
    does not have it yet."""
    response = await js.fetch(HIERARCHY_JAR_URL)
    if not response.ok:
        raise HierarchyUnavailable(
            f"the page has no u2.jar ({HIERARCHY_JAR_URL}: HTTP {response.status}); run scripts/setup"
        )
    return (await response.arrayBuffer()).to_bytes()


class PhonePanel:
    """The phone's connection lifecycle: connect, adopt, lose and reconnect, forget; it tells the
    card (``card``) what to show and the live view (``live``) when to run."""

    def __init__(
        self, context: ToolDispatcher, bridge_path: str | None, screen: ScreenSettings | None = None
    ) -> None:
        self.context = context
        self.bridge_path = bridge_path
        self.card = PhoneCard()
        self._client: AdbClient | None = None
        self._transport: Any = None
        self._device: AdbDevice | None = None
        self._busy = False
        self._link: PageDevice | None = None
        # What a dropped link reconnects to: ("tcp", "HOST:PORT") or ("usb", serial number).
        self._target: tuple[str, str] | None = None
        self._reconnecting: asyncio.Task[None] | None = None
        self._usb_plugged = asyncio.Event()
        self._events = PanelEvents()
        self._events.listen("connect-usb", "click", lambda _e: self._events.spawn(self.connect_usb_prompt()))
        self._events.listen("connect-tcp", "submit", self._on_tcp_submit)
        self._events.listen(
            "connect-adb-server", "click", lambda _e: self._events.spawn(self.connect_adb_server())
        )
        self._events.listen(
            "disconnect", "click", lambda _e: self._events.spawn(self.disconnect("Disconnected."))
        )
        if is_nullish(getattr(js.navigator, "usb", None)):
            self.card.no_usb()
        else:
            self._usb_connect_proxy = create_proxy(lambda _event: self._usb_plugged.set())
            js.navigator.usb.addEventListener("connect", self._usb_connect_proxy)
        if not bridge_path:
            self.card.no_bridge()
        # ?adbServer=HOST:PORT when the host's adb server is not on its usual port.
        self.adb_server_target = query_param(str(js.location.href), "adbServer") or ADB_SERVER_TARGET
        self.live = LiveView(lambda: self._device, lambda: self._link, screen, self._events)

    @property
    def device(self) -> AdbDevice | None:
        """The connected phone, or None."""
        return self._device

    # -- wiring -------------------------------------------------------------------------------

    def _on_tcp_submit(self, event: Any) -> None:
        event.preventDefault()
        self._events.spawn(self.connect_tcp(self.card.tcp_target()))

    def _say(self, text: str, kind: str = "") -> None:
        self.card.say(text, kind)

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
            device = AdbDevice(client, transport=kind, serial=serial, hierarchy_jar=fetch_hierarchy_jar)
            await self._adopt(device, description)
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
            device = AdbDevice(
                opener, transport="adb-server", serial=chosen, hierarchy_jar=fetch_hierarchy_jar
            )
            await self._adopt(device, f"{chosen} (adb server)")
        except (AdbError, ToolError, ConnectionError, OSError, TimeoutError) as exc:
            self._say(f"Could not use the adb server: {exc}", "error")
        finally:
            self._busy = False

    async def _adopt(self, device: AdbDevice, description: str) -> None:
        info = await device.device_info()
        self._device = device
        if self._link is None:
            self._link = PageDevice(device)
        else:  # back after a drop: the same link, but refs and screen facts start afresh
            self._link.attach(device)
            self.context.device = None
        self.context.device = self._link
        self.card.show_phone(info, description)
        self.live.sync()

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
        self.live.forget()
        await self._drop()
        self.card.show_no_phone(chosen=self._link is not None)

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
