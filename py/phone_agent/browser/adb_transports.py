"""Byte pipes from the page to a phone's adbd: WebUSB, and the server's WebSocket bridge.

Both are thin: the ADB protocol lives in the pure ``adb`` package, and neither reads a header. Each
``send`` is one chunk the core produced: WebUSB gets each header and each payload as its own transfer;
the bridge asks for whole packets (``capabilities.joins_packets``), one WebSocket message each, sent at once
(``send_nowait``). ``receive`` answers the next bytes from the phone; WebUSB's ``receive_at_most`` reads
exactly what the core says the current header or payload still needs. The bridge can also push: once
``AdbClient`` calls ``deliver``, each message goes from its event straight into the client (in the page
every trip through the event loop is a browser task of its own, ~0.3 ms or more when the machine is
busy). A closed link raises ``ConnectionError`` from both, at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import js  # type: ignore[import-not-found]
from pyodide.code import run_js  # type: ignore[import-not-found]
from pyodide.ffi import create_proxy, to_js  # type: ignore[import-not-found]

from ..adb.packet import HEADER_SIZE
from ..adb.transport import TransportCapabilities
from .interop import is_nullish, to_js_json

ADB_INTERFACE = {"classCode": 0xFF, "subclassCode": 0x42, "protocolCode": 0x01}

CONNECT_TIMEOUT_S = 10.0
IN_USE_MESSAGE = (
    "The phone is in use by another program (an adb server or Android Studio). "
    "Run `adb kill-server` and connect again."
)


# The bridge's messages wait in JavaScript until Python takes them: Python is called when it waits
# (``receive``: once per wait, and whatever queued up while it was busy comes over as one Uint8Array,
# in one copy), or, once the ADB client has asked for them pushed (``deliver``), with each message.
_INBOX_JS = """(socket, wake, push) => {
  const inbox = { parts: [], size: 0, waiting: false, pushing: false };
  const notify = () => { if (inbox.pushing || inbox.waiting) { inbox.waiting = false; wake(); } };
  socket.addEventListener("message", (event) => {
    if (typeof event.data === "string" || !event.data.byteLength) return;
    if (inbox.pushing && !inbox.size) { push(new Uint8Array(event.data)); return; }
    inbox.parts.push(event.data);
    inbox.size += event.data.byteLength;
    notify();
  });
  socket.addEventListener("close", notify);
  inbox.take = () => {
    const parts = inbox.parts;
    let bytes;
    if (parts.length === 1) {
      bytes = new Uint8Array(parts[0]);
    } else {
      bytes = new Uint8Array(inbox.size);
      let offset = 0;
      for (const part of parts) { bytes.set(new Uint8Array(part), offset); offset += part.byteLength; }
    }
    inbox.parts = [];
    inbox.size = 0;
    return bytes;
  };
  return inbox;
}"""
_inbox_factory: Any = None


def _inbox(socket: Any, wake: Any, push: Any) -> Any:
    global _inbox_factory
    if _inbox_factory is None:
        _inbox_factory = run_js(_INBOX_JS)
    return _inbox_factory(socket, wake, push)


class WebSocketAdbTransport:
    """adbd through ``ws://…/adb?target=HOST:PORT`` (the server relays the bytes to TCP)."""

    def __init__(self, url: str, description: str, *, adb_packets: bool = True) -> None:
        self.url = url
        self.description = description
        # True when the bytes are ADB packets (a direct adbd); False for the adb server's smart-socket
        # protocol, whose requests are raw strings that must go out as they are.
        self.adb_packets = adb_packets
        # Unlike USB, the bridge needs no separate header transfer: the ADB core hands each packet over
        # as one chunk, one WebSocket message (half the messages and hops).
        self.capabilities = TransportCapabilities(
            joins_packets=adb_packets, send_nowait=self.send_nowait, deliver=self.deliver
        )
        self._socket: Any = None
        self._js_send: Any = None
        self._inbox: Any = None
        self._waiter: asyncio.Future[None] | None = None
        self._on_bytes: Callable[[bytes], None] | None = None
        self._on_end: Callable[[str | None], None] | None = None
        self._closed = False
        self._close_reason = "the bridge closed"
        self._eof_is_clean = False
        self._proxies: list[Any] = []

    async def open(self) -> None:
        opened: asyncio.Future[None] = asyncio.get_event_loop().create_future()
        socket = js.WebSocket.new(self.url)
        socket.binaryType = "arraybuffer"

        def on_open(_event: Any) -> None:
            if not opened.done():
                opened.set_result(None)

        def on_close(event: Any) -> None:
            reason = str(event.reason or "") or f"code {event.code}"
            self._close_reason = f"the bridge to {self.description} closed ({reason})"
            self._closed = True
            # 1000: the device side ended normally (end of stream); anything else is a failure.
            self._eof_is_clean = int(event.code) == 1000
            if not opened.done():
                opened.set_exception(ConnectionError(self._close_reason))

        # The close handler goes first: the inbox wakes the reader on close, which must find it closed.
        for name, handler in (("open", on_open), ("close", on_close)):
            proxy = create_proxy(handler)
            self._proxies.append((name, proxy))
            socket.addEventListener(name, proxy)
        wake, push = create_proxy(self._wake), create_proxy(self._push_message)
        self._proxies += [("", wake), ("", push)]
        self._inbox = _inbox(socket, wake, push)
        self._socket = socket
        self._js_send = socket.send  # looked up once: half the cost of a send from Python
        try:
            await asyncio.wait_for(opened, CONNECT_TIMEOUT_S)
        except TimeoutError:
            await self.close()
            raise ConnectionError(
                f"the bridge to {self.description} did not open within {CONNECT_TIMEOUT_S:g}s"
            ) from None

    def send_nowait(self, chunk: bytes | memoryview) -> None:
        """Send at once: WebSocket.send only queues the bytes in the browser, it never waits."""
        # readyState 1 is OPEN; a closing socket would drop the bytes with a console error.
        if self._closed or self._socket is None or self._socket.readyState != 1:
            raise ConnectionError(self._close_reason)
        # to_js copies bytes far faster than a memoryview (PLATFORM.md): payloads may be views.
        self._js_send(to_js(chunk if isinstance(chunk, bytes) else bytes(chunk)))

    async def send(self, chunk: bytes | memoryview) -> None:
        self.send_nowait(chunk)

    def deliver(self, on_bytes: Callable[[bytes], None], on_end: Callable[[str | None], None]) -> None:
        """From now on, hand every arrival to ``on_bytes`` from the message event itself, and the end to
        ``on_end`` (``None`` when the device side ended normally) — what ``AdbClient`` asks for."""
        self._on_bytes, self._on_end = on_bytes, on_end
        if self._inbox is not None:
            self._inbox.pushing = True
        self._wake()  # what arrived before

    def _wake(self) -> None:
        if self._on_bytes is not None:
            self._push()
            return
        waiter, self._waiter = self._waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _push_message(self, data: Any) -> None:
        """One message, pushed straight from its event (nothing was waiting in the inbox)."""
        try:
            if self._on_bytes is not None:
                self._on_bytes(data.to_bytes())
        except Exception as exc:  # never an uncaught error in the page: the client fails instead
            on_end, self._on_end, self._on_bytes = self._on_end, None, None
            if on_end is not None:
                on_end(f"the connection to the phone failed: {exc!r}")

    def _push(self) -> None:
        inbox = self._inbox
        try:
            if inbox is not None and inbox.size and self._on_bytes is not None:
                self._on_bytes(inbox.take().to_bytes())
            if self._closed and self._on_end is not None:
                on_end, self._on_end, self._on_bytes = self._on_end, None, None
                on_end(None if self._eof_is_clean else self._close_reason)
        except Exception as exc:  # never an uncaught error in the page: the client fails instead
            on_end, self._on_end, self._on_bytes = self._on_end, None, None
            if on_end is not None:
                on_end(f"the connection to the phone failed: {exc!r}")

    async def receive(self) -> bytes:
        """The next bytes (all that arrived since the last call, in one piece); ``b""`` once the device
        side ended normally and everything it sent was taken; ConnectionError on failure."""
        inbox = self._inbox
        if inbox is None:
            raise ConnectionError(self._close_reason)
        while not inbox.size:
            if self._closed:
                if self._eof_is_clean:
                    return b""
                raise ConnectionError(self._close_reason)
            self._waiter = asyncio.get_running_loop().create_future()
            inbox.waiting = True
            await self._waiter
        return inbox.take().to_bytes()

    async def close(self) -> None:
        if self._socket is not None and not self._closed:
            self._socket.close()
        self._closed = True
        if self._inbox is not None:
            self._inbox.waiting = self._inbox.pushing = False  # the wake proxy goes below
        self._wake()  # a receive waiting now ends at once; a client pushed to hears of the end
        for name, proxy in self._proxies:
            if self._socket is not None and name:
                self._socket.removeEventListener(name, proxy)
            proxy.destroy()
        self._proxies.clear()


def _find_adb_interface(device: Any) -> tuple[int, int, int, Any, Any]:
    """(configuration, interface, alternate, IN endpoint, OUT endpoint) of the ADB interface, searched
    across every configuration and alternate setting."""
    for configuration in device.configurations:
        for interface in configuration.interfaces:
            for alternate in interface.alternates:
                if (
                    alternate.interfaceClass == ADB_INTERFACE["classCode"]
                    and alternate.interfaceSubclass == ADB_INTERFACE["subclassCode"]
                    and alternate.interfaceProtocol == ADB_INTERFACE["protocolCode"]
                ):
                    endpoint_in = endpoint_out = None
                    for endpoint in alternate.endpoints:
                        if endpoint.type != "bulk":
                            continue
                        if endpoint.direction == "in":
                            endpoint_in = endpoint
                        elif endpoint.direction == "out":
                            endpoint_out = endpoint
                    if endpoint_in is not None and endpoint_out is not None:
                        return (
                            int(configuration.configurationValue),
                            int(interface.interfaceNumber),
                            int(alternate.alternateSetting),
                            endpoint_in,
                            endpoint_out,
                        )
    raise ConnectionError("this USB device has no ADB interface: is USB debugging on?")


class WebUsbAdbTransport:
    """adbd over WebUSB. Reads exactly one header, then exactly its payload, as adbd writes them: the
    ADB core says how many bytes each read must ask for (``receive_at_most``)."""

    def __init__(self, device: Any, on_disconnect: Callable[[], None] | None = None) -> None:
        self.device = device
        self.description = f"{device.manufacturerName or 'USB'} {device.productName or 'phone'}".strip()
        self.serial = str(device.serialNumber or "")
        self._in: Any = None
        self._out: Any = None
        self._interface = 0
        self._closed = False
        self._on_disconnect = on_disconnect
        self._disconnect_proxy: Any = None
        self.capabilities = TransportCapabilities(receive_at_most=self.receive_at_most)

    async def open(self) -> None:
        device = self.device
        configuration, interface, alternate, endpoint_in, endpoint_out = _find_adb_interface(device)
        await device.open()
        try:
            active = device.configuration
            if is_nullish(active) or int(active.configurationValue) != configuration:
                await device.selectConfiguration(configuration)
            try:
                await device.claimInterface(interface)
            except Exception as exc:
                raise ConnectionError(IN_USE_MESSAGE) from exc
            if alternate:
                await device.selectAlternateInterface(interface, alternate)
        except BaseException:
            await self._quiet_close()
            raise
        self._interface = interface
        self._in, self._out = endpoint_in, endpoint_out

        def on_disconnect(event: Any) -> None:
            if event.device == self.device:
                self._closed = True
                if self._on_disconnect is not None:
                    self._on_disconnect()

        self._disconnect_proxy = create_proxy(on_disconnect)
        js.navigator.usb.addEventListener("disconnect", self._disconnect_proxy)

    async def send(self, chunk: bytes | memoryview) -> None:
        if self._closed:
            raise ConnectionError("the phone was disconnected")
        try:
            await self._transfer_out(chunk)
            if chunk and len(chunk) % int(self._out.packetSize) == 0:
                await self._transfer_out(b"")  # a zero-length packet ends a transfer of whole packets
        except ConnectionError:
            raise
        except Exception as exc:
            raise ConnectionError(f"USB write failed: {exc}") from exc

    async def _transfer_out(self, data: bytes | memoryview) -> None:
        payload = data if isinstance(data, bytes) else bytes(data)  # to_js is fastest on bytes
        result = await self.device.transferOut(self._out.endpointNumber, to_js(payload))
        if result.status != "ok":
            raise ConnectionError(f"USB write failed: {result.status}")

    async def _transfer_in(self, length: int) -> bytes:
        if self._closed:
            raise ConnectionError("the phone was disconnected")
        try:
            result = await self.device.transferIn(self._in.endpointNumber, length)
        except Exception as exc:
            self._closed = True
            raise ConnectionError(f"the phone was disconnected ({exc})") from exc
        if result.status != "ok":
            raise ConnectionError(f"USB read failed: {result.status}")
        view = result.data
        return js.Uint8Array.new(view.buffer, view.byteOffset, view.byteLength).to_bytes()

    async def receive_at_most(self, size: int) -> bytes:
        """One IN transfer of at most ``size`` bytes (never more than the current header or payload)."""
        return await self._transfer_in(size)

    async def receive(self) -> bytes:
        """Without a size from the core: a header's worth at most, which never reads past a packet."""
        return await self._transfer_in(HEADER_SIZE)

    async def _quiet_close(self) -> None:
        try:
            await self.device.close()
        except Exception:
            pass

    async def close(self) -> None:
        if self._disconnect_proxy is not None:
            js.navigator.usb.removeEventListener("disconnect", self._disconnect_proxy)
            self._disconnect_proxy.destroy()
            self._disconnect_proxy = None
        was_closed, self._closed = self._closed, True
        if not was_closed:
            await self._release()

    async def _release(self) -> None:
        try:
            await self.device.releaseInterface(self._interface)
        except Exception:
            pass
        await self._quiet_close()


async def request_usb_device() -> Any:
    """Ask the person to pick a phone (needs a click); None when they cancel."""
    try:
        return await js.navigator.usb.requestDevice(to_js_json({"filters": [ADB_INTERFACE]}))
    except Exception:
        return None


async def allowed_usb_devices() -> list[Any]:
    """Phones this page was allowed before: reconnect without a prompt."""
    if is_nullish(getattr(js.navigator, "usb", None)):
        return []
    devices = await js.navigator.usb.getDevices()
    return [device for device in devices if _has_adb_interface(device)]


def _has_adb_interface(device: Any) -> bool:
    try:
        _find_adb_interface(device)
    except ConnectionError:
        return False
    return True
