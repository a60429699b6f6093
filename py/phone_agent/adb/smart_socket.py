"""The adb server's smart-socket protocol (port 5037): for a phone held by a running adb server.

A request is a 4-hex-digit length + the service (``host:version``, ``host:devices-l``,
``host:transport:SERIAL`` …); the server answers ``OKAY`` or ``FAIL`` + 4-hex length + message.
``host:`` queries then send one length-prefixed string. After ``host:transport:SERIAL`` → OKAY, the
same connection carries one device service (``shell,v2,raw:…``, ``exec:…``, ``sync:``): a second
request, OKAY, then raw bytes until either side closes. So every service needs a new connection,
which ``AdbServerDevice`` makes through a ``connect`` factory (TCP in CPython, the server's WebSocket
bridge in the page). The codec is pure; the async part runs over ``AdbTransport``-shaped pipes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

from phone_agent.adb.client import OPEN_TIMEOUT, AdbConnectionLost, AdbError, AdbTimeoutError, AdbTransport
from phone_agent.adb.transport import PLAIN_STREAM

MAX_REQUEST = 0xFFFF


class AdbServerError(AdbError):
    """The adb server answered FAIL (its message is the exception's)."""


def encode_request(service: str) -> bytes:
    """``000chost:version``: the length in 4 hex digits, then the service."""
    raw = service.encode()
    if len(raw) > MAX_REQUEST:
        raise ValueError(f"smart-socket request of {len(raw)} bytes is too long")
    return f"{len(raw):04x}".encode() + raw


@dataclass(frozen=True)
class AdbServerDeviceEntry:
    """One line of ``host:devices-l``."""

    serial: str
    state: str  # device, unauthorized, offline, …
    properties: dict[str, str] = field(default_factory=dict)

    @property
    def model(self) -> str:
        return self.properties.get("model", "")


def parse_devices(text: str) -> list[AdbServerDeviceEntry]:
    """``SERIAL  device product:x model:y device:z transport_id:1`` lines → entries."""
    entries = []
    for line in text.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        serial, rest = parts[0], parts[1:]
        # The state may be several words ("no permissions (…)"); properties are key:value words.
        state_words: list[str] = []
        properties: dict[str, str] = {}
        for word in rest:
            key, sep, value = word.partition(":")
            if sep and key.replace("_", "").isalnum() and key.islower():
                properties[key] = value
            elif not properties:
                state_words.append(word)
        entries.append(AdbServerDeviceEntry(serial, " ".join(state_words), properties))
    return entries


class SmartSocketReader:
    """Buffered reads over a transport for the status and length-prefixed answers."""

    def __init__(self, transport: AdbTransport, timeout: float | None) -> None:
        self.transport = transport
        self.timeout = timeout
        self.buffer = bytearray()

    async def read_exact(self, size: int) -> bytes:
        while len(self.buffer) < size:
            try:
                async with asyncio.timeout(self.timeout):
                    chunk = await self.transport.receive()
            except TimeoutError:
                raise AdbTimeoutError(f"the adb server sent nothing for {self.timeout:g} s") from None
            if not chunk:
                raise AdbError("the adb server closed the connection")
            self.buffer += chunk
        data = bytes(self.buffer[:size])
        del self.buffer[:size]
        return data

    async def read_string(self) -> str:
        length_text = await self.read_exact(4)
        try:
            length = int(length_text, 16)
        except ValueError:
            raise AdbError(f"the adb server sent a bad length {length_text!r}") from None
        return (await self.read_exact(length)).decode("utf-8", "replace")

    async def read_status(self, request: str) -> None:
        status = await self.read_exact(4)
        if status == b"OKAY":
            return
        if status == b"FAIL":
            raise AdbServerError(f"{request}: {await self.read_string()}")
        raise AdbError(f"{request}: the adb server answered {status!r}, not OKAY/FAIL")


class SmartSocketStream:
    """A device service through the adb server: the rest of the connection, raw."""

    capabilities = PLAIN_STREAM

    def __init__(self, transport: AdbTransport, leftover: bytes, service: str) -> None:
        self.transport = transport
        self.service = service
        self.closed = False
        self._leftover = leftover

    async def read(self, timeout: float | None = None) -> bytes:
        if self._leftover:
            data, self._leftover = self._leftover, b""
            return data
        if self.closed:
            return b""
        wait = 30.0 if timeout is None else timeout
        try:
            async with asyncio.timeout(wait):
                data = await self.transport.receive()
        except TimeoutError:
            raise AdbTimeoutError(f"{self.service}: the phone sent nothing for {wait:g} s") from None
        except Exception as exc:
            raise AdbError(f"{self.service}: the adb server connection failed: {exc}") from exc
        if not data:
            self.closed = True
        return data

    async def write(self, data: bytes) -> None:
        if self.closed:
            raise AdbError(f"{self.service}: the stream is closed")
        try:
            async with asyncio.timeout(30.0):
                await self.transport.send(bytes(data))
        except Exception as exc:
            raise AdbError(f"{self.service}: sending through the adb server failed: {exc}") from exc

    async def close(self) -> None:
        self.closed = True
        with contextlib.suppress(Exception):
            async with asyncio.timeout(5.0):
                await self.transport.close()


Connect = Callable[[], Awaitable[AdbTransport]]
TRACK_DEVICES = "host:track-devices"


class AdbServerClient:
    """Talks to an adb server; ``connect`` opens one new pipe to it (each request needs its own)."""

    def __init__(self, connect: Connect, timeout: float = OPEN_TIMEOUT) -> None:
        self._connect = connect
        self.timeout = timeout

    async def _open(self) -> AdbTransport:
        try:
            async with asyncio.timeout(self.timeout):
                return await self._connect()
        except TimeoutError:
            raise AdbTimeoutError(
                f"the adb server did not accept a connection in {self.timeout:g} s"
            ) from None
        except OSError as exc:
            raise AdbConnectionLost(
                f"cannot reach the adb server: {exc} (is `adb start-server` running?)"
            ) from exc

    async def query(self, request: str) -> str:
        """A ``host:…`` request that answers one string (``host:version``, ``host:devices-l`` …)."""
        transport = await self._open()
        try:
            reader = SmartSocketReader(transport, self.timeout)
            await transport.send(encode_request(request))
            await reader.read_status(request)
            return await reader.read_string()
        finally:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(5.0):
                    await transport.close()

    async def version(self) -> int:
        """The server's protocol version (``host:version``: 41 for adb 1.0.41)."""
        text = await self.query("host:version")
        try:
            return int(text, 16)
        except ValueError:
            raise AdbError(
                f"the adb server answered host:version with {text[:40]!r}, not a version"
            ) from None

    async def devices(self) -> list[AdbServerDeviceEntry]:
        return parse_devices(await self.query("host:devices-l"))

    async def track_devices(self) -> AsyncIterator[list[AdbServerDeviceEntry]]:
        """``host:track-devices``: the server's phones now, then again each time the list changes. It
        waits as long as the list stays the same: it ends when the server closes the connection
        (``AdbConnectionLost``) or the caller stops iterating (the connection is closed then)."""
        transport = await self._open()
        try:
            reader = SmartSocketReader(transport, self.timeout)
            await transport.send(encode_request(TRACK_DEVICES))
            await reader.read_status(TRACK_DEVICES)
            reader.timeout = None  # a list that does not change is no failure
            while True:
                try:
                    text = await reader.read_string()
                except (AdbError, ConnectionError, OSError) as exc:
                    raise AdbConnectionLost(f"the adb server stopped telling its phones: {exc}") from exc
                yield parse_devices(text)
        finally:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(5.0):
                    await transport.close()

    async def open_service(
        self, serial: str, service: str, timeout: float | None = None
    ) -> SmartSocketStream:
        """``host:transport:SERIAL`` then ``service`` on one new connection; the rest is the stream."""
        transport = await self._open()
        reader = SmartSocketReader(transport, timeout or self.timeout)
        try:
            request = f"host:transport:{serial}"
            await transport.send(encode_request(request))
            try:
                await reader.read_status(request)
            except AdbServerError as exc:
                if "not found" in str(exc) or "offline" in str(exc):
                    raise AdbConnectionLost(str(exc)) from None  # unplugged, or the server lost it
                raise
            await transport.send(encode_request(service))
            await reader.read_status(service)
        except BaseException:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(5.0):
                    await transport.close()
            raise
        return SmartSocketStream(transport, bytes(reader.buffer), service)

    async def device(self, serial: str) -> AdbServerDevice:
        """A ``ServiceOpener`` for ``serial``, with its features read from the server."""
        text = await self.query(f"host-serial:{serial}:features")
        return AdbServerDevice(self, serial, frozenset(f for f in text.strip().split(",") if f))


class AdbServerDevice:
    """One phone behind an adb server, as a ``ServiceOpener`` for services.py and AdbDevice."""

    def __init__(self, server: AdbServerClient, serial: str, features: frozenset[str]) -> None:
        self.server = server
        self.serial = serial
        self._features = features

    @property
    def features(self) -> frozenset[str]:
        return self._features

    async def open_stream(self, service: str, timeout: float = OPEN_TIMEOUT) -> SmartSocketStream:
        return await self.server.open_service(self.serial, service, timeout)
