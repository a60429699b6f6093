"""The page's phone: connect it (USB, a network adbd through the bridge, the host's adb server, or the
server's simulated phone), show its state and a live view of its screen, and hand it to the tools as
``context.device``.

``PhonePanel`` is the connection's lifecycle; the card's DOM is ``phone_card.PhoneCard``, the live
view ``live_view.LiveView``, and what the tools hold ``page_device.PageDevice``. The kinds of
connection and how each comes back after a drop are the table ``adb.connection_kinds``; the panel
holds how it opens each kind (``_openers``) and how it carries out each way of reconnecting
(``_reconnects``).

Which phone at load: ``?device=tcp:HOST:PORT`` (or ``adb-server:SERIAL``) wins; else a USB phone this
page was allowed before (no prompt); else the server's default (``phone-agent serve --sim`` names its
simulated phone).

A link that drops by itself (the server restarted and its bridge closed, the phone went away and came
back, it sent garbage; for a phone held by the adb server, the server no longer listing it as
``device``, which the panel watches with ``host:track-devices``) is reconnected by itself, with backoff
(a USB phone when it is plugged in again; the simulated phone where the server says it is now); the
card says why it dropped. Meanwhile ``context.device`` stays a ``PageDevice`` that answers
``device_error`` with that reason (get_device_status: ``connected: false``), and a running agent task
ends at once, failed, with it. Only the Disconnect button or choosing another phone forgets the phone.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Awaitable, Callable
from typing import Any

import js  # type: ignore[import-not-found]
from pyodide.ffi import create_proxy  # type: ignore[import-not-found]

from ..adb.client import AdbClient, AdbError
from ..adb.connection import ConnectionState
from ..adb.connection_kinds import (
    ADB_SERVER,
    NETWORK,
    SIMULATED,
    USB,
    ConnectionKind,
    Reconnect,
    parse_device_spec,
    reconnect_delay_s,
)
from ..adb.device import AdbDevice
from ..adb.hierarchy import HierarchyUnavailable
from ..adb.smart_socket import AdbServerClient, AdbServerDeviceEntry
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
from .page_device import PageDevice, lost_message, query_param
from .phone_card import PhoneCard

ADB_SERVER_TARGET = "127.0.0.1:5037"
# Opens a phone of one kind at its target and adopts it; answers the target it reached (the serial the
# adb server chose); raises when it cannot.
Opener = Callable[[str], Awaitable[str]]
# Asks the server where its simulated phone is (starting it when none runs): its HOST:PORT.
LocateSim = Callable[[], Awaitable[str]]


HIERARCHY_JAR_URL = "./static/vendor/u2/u2.jar"


# The page takes the phone's own PNG (`screencap -p`), never its raw pixels (AdbDevice's faster way on a
# host): ~10 MB a screenshot would grow Pyodide's memory for good, and over the server's bridge the raw
# pixels came slower than the phone's PNG (bench_vs_mobile_mcp.py, realistic phone: 0.9 s against 0.6 s).
RAW_SCREENCAP = False
JAR_PIECE = 256 * 1024  # bytes of the jar in Python at a time
JAR_CHUNK_S = 30.0  # the page's own origin answers at once; a chunk this late means it is gone


class FetchedJar:
    """The jar's response body as it arrives (``adb.hierarchy.JarStream``): the page pushes it chunk by
    chunk and never holds all 3.7 MB of it in Python's memory (which only ever grows)."""

    def __init__(self, response: Any) -> None:
        self.size = int(response.headers.get("content-length") or 0)
        self._reader = response.body.getReader()
        self._pending: Any = None  # what the last chunk still holds (a Uint8Array), handed out in pieces
        self._offset = 0

    async def read(self) -> bytes | None:
        """The next piece, at most JAR_PIECE bytes: a body from this origin may come as one chunk."""
        if self._pending is None or self._offset >= int(self._pending.length):
            result = await asyncio.wait_for(self._reader.read(), JAR_CHUNK_S)
            if result.done:
                return None
            self._pending, self._offset = result.value, 0
        start, self._offset = self._offset, min(self._offset + JAR_PIECE, int(self._pending.length))
        return self._pending.subarray(start, self._offset).to_bytes()


async def fetch_hierarchy_jar() -> FetchedJar:
    """The vendored hierarchy server (u2.jar), from the page's own origin; fetched only when the phone
    does not have it yet."""
    response = await js.fetch(HIERARCHY_JAR_URL)
    if not response.ok:
        raise HierarchyUnavailable(
            f"the page has no u2.jar ({HIERARCHY_JAR_URL}: HTTP {response.status}); run scripts/setup"
        )
    return FetchedJar(response)


class NoPhoneThere(AdbError):
    """The target answers but has no usable phone (the adb server lists none, or not that one)."""


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
        # What a dropped link reconnects to: its kind and its target (HOST:PORT, a serial).
        self._target: tuple[ConnectionKind, str] | None = None
        self._reconnecting: asyncio.Task[None] | None = None
        self._watching: asyncio.Future[Any] | None = None  # the adb server's list of phones
        self._locate_sim: LocateSim | None = None
        self._usb_plugged = asyncio.Event()
        # How the page opens each kind of connection at a target (adb.connection_kinds).
        self._openers: dict[str, Opener] = {
            USB.name: self._open_usb,
            NETWORK.name: functools.partial(self._open_network, NETWORK),
            ADB_SERVER.name: self._open_adb_server,
            SIMULATED.name: functools.partial(self._open_network, SIMULATED),
        }
        # How it carries out each way of coming back after a drop.
        self._reconnects: dict[Reconnect, Callable[[ConnectionKind, str, str, int], Awaitable[bool]]] = {
            Reconnect.WHEN_PLUGGED_IN: self._when_plugged_in,
            Reconnect.SAME_TARGET: self._same_target,
            Reconnect.ASK_THE_SERVER: self._ask_the_server,
        }
        # What ``?device=KIND:TARGET`` (and the server's default phone) connects with.
        self._by_spec: dict[str, Callable[[str], Awaitable[None]]] = {
            NETWORK.name: self.connect_tcp,
            ADB_SERVER.name: self.connect_adb_server,
        }
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
        await self._by_spec[kind.name](rest)

    # -- connecting ---------------------------------------------------------------------------

    async def connect_usb_prompt(self) -> None:
        usb = await request_usb_device()
        if usb is None:
            self._say("No phone chosen. Plug it in with USB debugging on, then choose it in the list.")
            return
        await self.connect_usb(usb)

    async def connect_usb(self, usb: Any) -> None:
        await self._connect(USB, "USB phone", lambda: self._open_usb_device(usb))

    async def connect_tcp(self, target: str) -> None:
        if self._network_target_refused(target):
            return
        await self._connect(NETWORK, target, lambda: self._openers[NETWORK.name](target))

    async def connect_simulated(self, target: str, locate: LocateSim) -> None:
        """The server's simulated phone at ``target``; after a drop, ``locate`` says where it is then."""
        if self._network_target_refused(target):
            return
        self._locate_sim = locate
        await self._connect(SIMULATED, target, lambda: self._openers[SIMULATED.name](target))

    async def connect_adb_server(self, serial: str | None = None) -> None:
        """The phone ``serial`` (None: the first usable one) of the adb server on this computer."""
        if not self.bridge_path:
            return
        await self._connect(
            ADB_SERVER,
            "the adb server",
            lambda: self._open_adb_server(serial),
            asking="Asking the adb server on this computer for its phones…",
            failure="Could not use the adb server",
        )

    def _network_target_refused(self, target: str) -> bool:
        if not target or ":" not in target:
            self._say("Give the device as HOST:PORT, e.g. 127.0.0.1:5555.", "error")
            return True
        if not self.bridge_path:
            self._say("Network devices need the page to be served by phone-agent.", "error")
            return True
        return False

    async def _connect(
        self,
        kind: ConnectionKind,
        description: str,
        opening: Callable[[], Awaitable[str]],
        *,
        asking: str = "",
        failure: str = "",
    ) -> None:
        """Forget the phone held now, open the one ``opening`` opens, and keep its kind and target to
        reconnect to."""
        if self._busy:
            return
        self._busy = True
        try:
            await self.disconnect(None)
            self._say(asking or f"Connecting to {description}…", "busy")
            self._target = (kind, await opening())
        except NoPhoneThere as exc:
            self._say(str(exc), "error")
        except (AdbError, ToolError, ConnectionError, OSError, TimeoutError) as exc:
            self._say(f"{failure or f'Could not connect to {description}'}: {exc}", "error")
        finally:
            self._busy = False

    # -- opening each kind --------------------------------------------------------------------

    def _usb_transport(self, usb: Any) -> WebUsbAdbTransport:
        return WebUsbAdbTransport(usb, on_disconnect=lambda: self._on_lost("the phone was unplugged"))

    async def _open_usb_device(self, usb: Any) -> str:
        await self._open(self._usb_transport(usb), USB, "USB phone")
        return str(usb.serialNumber or "")

    async def _open_usb(self, serial: str) -> str:
        usb = await self._usb_phone(serial)
        if usb is None:
            raise ConnectionError(f"the browser does not list the USB phone {serial or '(no serial)'}")
        return await self._open_usb_device(usb)

    async def _open_network(self, kind: ConnectionKind, target: str) -> str:
        await self._open(WebSocketAdbTransport(self._bridge_url(target), target), kind, target)
        return target

    async def _open(self, transport: Any, kind: ConnectionKind, description: str) -> None:
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
            device = AdbDevice(
                client,
                transport=kind.transport,
                serial=serial,
                hierarchy_jar=fetch_hierarchy_jar,
                raw_screencap=RAW_SCREENCAP,
            )
            await self._adopt(device, description)
        except BaseException:
            await self._drop()
            raise

    async def _adb_server_pipe(self) -> WebSocketAdbTransport:
        pipe = WebSocketAdbTransport(
            self._bridge_url(self.adb_server_target), "the adb server", adb_packets=False
        )
        await pipe.open()
        return pipe

    async def _open_adb_server(self, serial: str | None) -> str:
        """The adb server's phone ``serial`` (None: its first usable one), adopted and then watched."""
        server = AdbServerClient(self._adb_server_pipe)
        entries = [entry for entry in await server.devices() if _usable(entry, serial)]
        if not entries:
            wanted = f" named {serial}" if serial else ""
            raise NoPhoneThere(f"The adb server has no usable phone{wanted} (check `adb devices`).")
        chosen = entries[0].serial
        opener = await server.device(chosen)
        device = AdbDevice(
            opener,
            transport=ADB_SERVER.transport,
            serial=chosen,
            hierarchy_jar=fetch_hierarchy_jar,
            raw_screencap=RAW_SCREENCAP,
        )
        await self._adopt(device, f"{chosen} (adb server)")
        self._stop_watching()
        self._watching = self._events.spawn(self._watch_adb_server(server, chosen))
        return chosen

    async def _watch_adb_server(self, server: AdbServerClient, serial: str) -> None:
        """A phone held by the adb server has no link of ours to drop: the server's list of phones says
        when it went (unplugged, ``adb disconnect``, offline), and its end when the server did."""
        reason = "the adb server closed the connection"
        try:
            async with contextlib.aclosing(server.track_devices()) as updates:
                async for entries in updates:
                    state = next((entry.state for entry in entries if entry.serial == serial), None)
                    if state != "device":
                        said = "no longer lists it" if state is None else f"says it is {state}"
                        reason = f"the adb server {said}"
                        break
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the bridge or the server went away
            reason = str(exc) or type(exc).__name__
        if self._watching is asyncio.current_task():
            self._watching = None
            self._on_lost(reason)

    def _stop_watching(self) -> None:
        watching, self._watching = self._watching, None
        if watching is not None and watching is not asyncio.current_task():
            watching.cancel()

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
        reconnect = self._reconnects[kind.reconnect]
        attempt = failures = 0
        try:
            while self._device is None:
                attempt += 1
                try:
                    if await reconnect(kind, target, lost, attempt):
                        break  # (False: it waited for the phone to come back; look again at once)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # WebUSB rejects with DOMExceptions: keep trying all the same
                    failures += 1
                    delay = reconnect_delay_s(failures)
                    self._say(f"{lost} Reconnecting: {exc} (try {attempt}; next in {delay:g} s)", "error")
                    await asyncio.sleep(delay)
        finally:
            if self._reconnecting is asyncio.current_task():
                self._reconnecting = None

    # -- the ways of coming back (adb.connection_kinds.Reconnect): True once the phone is back ------

    async def _when_plugged_in(self, kind: ConnectionKind, target: str, lost: str, attempt: int) -> bool:
        self._usb_plugged.clear()
        if await self._usb_phone(target) is None:  # unplugged: only its `connect` event brings it back
            self._say(f"{lost} Plug it in again: the page reconnects by itself.")
            await self._usb_plugged.wait()
            return False
        self._say(f"{lost} Reconnecting…", "busy")
        await self._openers[kind.name](target)
        return True

    async def _same_target(self, kind: ConnectionKind, target: str, lost: str, attempt: int) -> bool:
        self._say(f"{lost} Reconnecting to {target} (try {attempt})…", "busy")
        await self._openers[kind.name](target)
        return True

    async def _ask_the_server(self, kind: ConnectionKind, target: str, lost: str, attempt: int) -> bool:
        if self._locate_sim is not None:
            self._say(f"{lost} Asking the server for its simulated phone (try {attempt})…", "busy")
            target = await self._locate_sim()
            self._target = (kind, target)
        return await self._same_target(kind, target, lost, attempt)

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
        self._stop_watching()
        client, transport = self._client, self._transport
        self._client = self._transport = None
        try:
            if client is not None:
                await asyncio.wait_for(client.close(), 5)
            elif transport is not None:
                await asyncio.wait_for(transport.close(), 5)
        except Exception:
            pass


def _usable(entry: AdbServerDeviceEntry, serial: str | None) -> bool:
    return entry.state == "device" and (serial is None or entry.serial == serial)
