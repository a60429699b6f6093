"""One TCP connection to the simulated adbd: handshake, authentication and streams.

The connection runs adbd's state machine (``STATES`` below): CNXN negotiates the version (checksums
are skipped from 0x01000001 on) and the max payload (the smaller of both), AUTH challenges the host
with a random token and verifies its RSA signature, and once online OPEN/OKAY/WRTE/CLSE carry
streams with adb's flow control: one WRTE in flight per stream until the peer's OKAY, and every
received WRTE answered with OKAY once the service has taken it.

Whatever a peer sends, the worst outcome is that *this* connection is dropped (a bad header, an
oversize payload, a bad checksum, a close mid-message) or that a stream is closed (a WRTE or OKAY
for a stream that does not exist); the server and the other connections carry on.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import logging
import os
import struct
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Protocol

from phone_agent.adb.keys import TOKEN_SIZE, AdbKeyError, AdbPublicKey
from phone_agent.adb.packet import (
    MAX_PAYLOAD,
    VERSION,
    VERSION_MIN,
    VERSION_SKIP_CHECKSUM,
    AdbPacket,
    AdbPacketParser,
    AdbProtocolError,
    AuthType,
    Command,
)

log = logging.getLogger("phone_agent.sim")

HANDSHAKE_TIMEOUT = 60.0  # seconds a peer has to become online (or be waiting for approval)
WRITE_ACK_TIMEOUT = 60.0  # seconds we wait for the peer's OKAY to one WRTE
MAX_QUEUED_WRITES = 16  # WRTEs a peer may send on one stream without our OKAY before we close it
DELAYED_ACK_WINDOW = 32 * 1024 * 1024  # what we let a delayed-ack host send ahead (adb.h's value)
READ_SIZE = 1 << 20


class ConnectionState(enum.Enum):
    """Where a connection is in adbd's handshake."""

    WAITING_FOR_CONNECT = "offline"  # nothing valid received yet
    AUTHENTICATING = "authorizing"  # token sent, waiting for a good signature or a public key
    UNAUTHORIZED = "unauthorized"  # public key received, waiting for approval (--auth prompt)
    ONLINE = "device"
    CLOSED = "closed"


# Which packets each state acts on; anything else is ignored, as adbd ignores stream traffic on a
# transport that is not online (stale bytes from an earlier session must not open streams).
STATES: dict[ConnectionState, frozenset[int]] = {
    ConnectionState.WAITING_FOR_CONNECT: frozenset({Command.CNXN}),
    ConnectionState.AUTHENTICATING: frozenset({Command.CNXN, Command.AUTH}),
    ConnectionState.UNAUTHORIZED: frozenset({Command.CNXN, Command.AUTH}),
    ConnectionState.ONLINE: frozenset(
        {Command.CNXN, Command.AUTH, Command.OPEN, Command.OKAY, Command.WRTE, Command.CLSE}
    ),
    ConnectionState.CLOSED: frozenset(),
}


class StreamClosed(Exception):
    """The stream was closed (by the peer, or because the connection went away)."""


class AdbStream:
    """One open service stream: reads acknowledged with OKAY as taken, writes under adb's flow control.

    Without delayed ack, one WRTE is in flight until the peer's OKAY. With delayed ack (both sides
    list ``delayed_ack``), the peer's OPEN gives a byte budget, each WRTE spends its size, each
    OKAY carries an int32 of bytes the peer consumed and adds it back; we may send while the budget
    is positive (it can go negative by the last WRTE, as in adbd's sockets.cpp).
    """

    def __init__(
        self,
        connection: AdbdConnection,
        local_id: int,
        remote_id: int,
        service: str,
        send_budget: int | None = None,
    ) -> None:
        self.connection = connection
        self.local_id = local_id
        self.remote_id = remote_id
        self.service = service
        self.closed = False
        self.send_budget = send_budget  # None: no delayed ack
        self._inbound: deque[bytes] = deque()
        self._inbound_bytes = 0
        self._readable = asyncio.Event()
        self._writable = asyncio.Event()
        if send_budget is None or send_budget > 0:
            self._writable.set()
        self._write_lock = asyncio.Lock()

    @property
    def delayed_ack(self) -> bool:
        return self.send_budget is not None

    # ----- called by the connection

    def _on_write(self, data: bytes) -> bool:
        """Queue received data; False when the peer ignores flow control (too much unacknowledged)."""
        if self.closed:
            return True
        self._inbound.append(data)
        self._inbound_bytes += len(data)
        self._readable.set()
        if self.delayed_ack:
            return self._inbound_bytes <= DELAYED_ACK_WINDOW
        return len(self._inbound) <= MAX_QUEUED_WRITES

    def _on_okay(self, acked_bytes: int | None) -> None:
        if self.send_budget is None:
            self._writable.set()
            return
        self.send_budget += acked_bytes or 0
        if self.send_budget > 0:
            self._writable.set()

    def _on_close(self) -> None:
        self.closed = True
        self._readable.set()
        self._writable.set()

    # ----- used by services

    async def read(self) -> bytes:
        """The next chunk the peer wrote (acknowledged with OKAY as it is taken); b"" once closed."""
        while not self._inbound:
            if self.closed:
                return b""
            self._readable.clear()
            await self._readable.wait()
        data = self._inbound.popleft()
        self._inbound_bytes -= len(data)
        if not self.closed:
            ack = struct.pack("<I", len(data)) if self.delayed_ack else b""
            self.connection.send(AdbPacket(Command.OKAY, self.local_id, self.remote_id, ack))
        return data

    async def write(self, data: bytes | bytearray | memoryview) -> None:
        """Send ``data`` as WRTEs of at most the negotiated payload, as flow control allows."""
        view = memoryview(data)
        limit = self.connection.max_payload
        async with self._write_lock:  # writers take turns: flow control counts every WRTE
            for offset in range(0, len(view), limit):
                await self._wait_writable()
                chunk = view[offset : offset + limit]
                if self.send_budget is None:
                    self._writable.clear()
                else:
                    self.send_budget -= len(chunk)
                    if self.send_budget <= 0:
                        self._writable.clear()
                self.connection.send(AdbPacket(Command.WRTE, self.local_id, self.remote_id, chunk))
                await self.connection.drain()

    async def _wait_writable(self) -> None:
        if not self._writable.is_set():
            try:
                await asyncio.wait_for(self._writable.wait(), WRITE_ACK_TIMEOUT)
            except TimeoutError:
                self.connection.close_stream(self)
                raise StreamClosed(f"no OKAY for {self.service} in {WRITE_ACK_TIMEOUT:.0f} s") from None
        if self.closed:
            raise StreamClosed(self.service)

    async def close(self) -> None:
        """Close from our side (CLSE); without delayed ack, after the last WRTE's OKAY (bounded)."""
        if self.closed:
            return
        if not self.delayed_ack:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._writable.wait(), 5.0)
        self.connection.close_stream(self)


ServiceHandler = Callable[[AdbStream], Awaitable[None]]


class AdbdHost(Protocol):
    """What a connection asks of the adbd that accepted it (``SimulatedPhoneServer`` is one)."""

    auth: str

    @property
    def features(self) -> tuple[str, ...]: ...
    def banner(self) -> str: ...
    def _service(self, name: str, connection: AdbdConnection) -> ServiceHandler | None: ...
    def _verify(self, token: bytes, signature: bytes) -> AdbPublicKey | None: ...
    def _offer_key(self, key: AdbPublicKey, connection: AdbdConnection) -> bool: ...
    def _forget(self, connection: AdbdConnection) -> None: ...


class AdbdConnection:
    """adbd's side of one transport. ``serve()`` runs until the peer goes or misbehaves."""

    def __init__(
        self,
        server: AdbdHost,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        number: int,
    ) -> None:
        self.server = server
        self.reader = reader
        self.writer = writer
        self.number = number
        peer = writer.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else str(peer)
        self.state = ConnectionState.WAITING_FOR_CONNECT
        self.version = VERSION_MIN
        self.max_payload = MAX_PAYLOAD
        self.host_banner = ""
        self.host_features: frozenset[str] = frozenset()
        self.delayed_ack = False
        self.public_key: AdbPublicKey | None = None
        self.close_reason = ""
        self._parser = AdbPacketParser(max_payload=MAX_PAYLOAD)
        self._token: bytes | None = None
        self._streams: dict[int, AdbStream] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._next_id = 1

    # ----- info for the control interface

    def describe(self) -> dict[str, object]:
        """A JSON-able summary."""
        return {
            "id": self.number,
            "peer": self.peer,
            "state": self.state.value,
            "version": f"0x{self.version:08x}",
            "max_payload": self.max_payload,
            "host_features": sorted(self.host_features),
            "delayed_ack": self.delayed_ack,
            "key": self.public_key.fingerprint if self.public_key else None,
            "streams": [s.service for s in self._streams.values()],
        }

    # ----- I/O

    def send(self, packet: AdbPacket) -> None:
        """Queue one packet on the socket (header and payload written separately: no 1 MiB concat)."""
        if self.state is ConnectionState.CLOSED or self.writer.is_closing():
            return
        # CNXN and AUTH always carry a checksum: the host verifies them before it knows our version.
        with_checksum = self.version < VERSION_SKIP_CHECKSUM or packet.command in (Command.CNXN, Command.AUTH)
        self.writer.write(packet.header(with_checksum=with_checksum))
        if packet.payload:
            self.writer.write(packet.payload)

    async def drain(self) -> None:
        try:
            await asyncio.wait_for(self.writer.drain(), WRITE_ACK_TIMEOUT)
        except (ConnectionError, TimeoutError) as exc:
            self.abort(f"write failed: {exc!r}")
            raise StreamClosed("connection lost") from exc

    async def serve(self) -> None:
        """Read, parse and dispatch until EOF, a protocol error or ``abort``."""
        timer = asyncio.get_running_loop().call_later(HANDSHAKE_TIMEOUT, self._handshake_timeout)
        try:
            while self.state is not ConnectionState.CLOSED:
                try:
                    data = await self.reader.read(READ_SIZE)
                except ConnectionError as exc:
                    self.close_reason = f"read failed: {exc!r}"
                    break
                if not data:
                    try:
                        self._parser.receive_eof()
                        self.close_reason = self.close_reason or "peer closed"
                    except AdbProtocolError as exc:
                        self.close_reason = str(exc)
                        log.warning("connection %d (%s): %s", self.number, self.peer, exc)
                    break
                try:
                    self._parser.receive_data(data)
                    for packet in self._parser.packets_received():
                        self._handle(packet)
                except AdbProtocolError as exc:
                    self.close_reason = str(exc)
                    log.warning("connection %d (%s) dropped: %s", self.number, self.peer, exc)
                    break
        finally:
            timer.cancel()
            await self._shutdown()

    def _handshake_timeout(self) -> None:
        if self.state in (ConnectionState.WAITING_FOR_CONNECT, ConnectionState.AUTHENTICATING):
            self.abort("no successful handshake in time")

    def abort(self, reason: str) -> None:
        """Drop the connection now."""
        if self.state is ConnectionState.CLOSED:
            return
        self.close_reason = self.close_reason or reason
        self.state = ConnectionState.CLOSED
        self.writer.close()

    async def _shutdown(self) -> None:
        self.state = ConnectionState.CLOSED
        for stream in list(self._streams.values()):
            stream._on_close()
        self._streams.clear()
        for task in list(self._tasks):
            task.cancel()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=5.0)
        self.writer.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.writer.wait_closed(), 2.0)
        self.server._forget(self)

    # ----- packet dispatch (the state table decides what is acted on)

    def _handle(self, packet: AdbPacket) -> None:
        if packet.command not in STATES[self.state]:
            log.debug("connection %d: ignoring %r in state %s", self.number, packet, self.state.name)
            return
        handler = {
            Command.CNXN: self._on_connect,
            Command.AUTH: self._on_auth,
            Command.OPEN: self._on_open,
            Command.OKAY: self._on_okay,
            Command.WRTE: self._on_write,
            Command.CLSE: self._on_close,
        }[packet.command]
        handler(packet)

    def _on_connect(self, packet: AdbPacket) -> None:
        if self.state is not ConnectionState.WAITING_FOR_CONNECT:
            self._reset_streams()  # a new CNXN starts the transport over, as adbd does
        self.version = max(VERSION_MIN, min(packet.arg0, VERSION))
        self.max_payload = max(256, min(packet.arg1, MAX_PAYLOAD))
        self._parser.verify_checksum = self.version < VERSION_SKIP_CHECKSUM
        self._parser.max_payload = self.max_payload
        self.host_banner = packet.payload.split(b"\x00", 1)[0].decode("utf-8", "replace")
        self.host_features = _banner_features(self.host_banner)
        self.delayed_ack = "delayed_ack" in self.host_features and "delayed_ack" in self.server.features
        if self.server.auth == "none":
            self._go_online()
        else:
            self.state = ConnectionState.AUTHENTICATING
            self._send_token()

    def _send_token(self) -> None:
        self._token = os.urandom(TOKEN_SIZE)
        self.send(AdbPacket(Command.AUTH, AuthType.TOKEN, 0, self._token))

    def _on_auth(self, packet: AdbPacket) -> None:
        online = self.state is ConnectionState.ONLINE
        if online and packet.arg0 in (AuthType.SIGNATURE, AuthType.RSAPUBLICKEY):
            return  # already authorized
        if packet.arg0 == AuthType.SIGNATURE:
            if self._token is None:
                return
            token, self._token = self._token, None
            key = self.server._verify(token, packet.payload)
            if key is not None:
                self.public_key = key
                self._go_online()
            else:
                self._send_token()  # a wrong signature gets a new token
        elif packet.arg0 == AuthType.RSAPUBLICKEY:
            try:
                key = AdbPublicKey.decode(packet.payload)
            except AdbKeyError as exc:
                log.warning("connection %d: unusable public key: %s", self.number, exc)
                return
            self.public_key = key
            if self.server._offer_key(key, self):
                self._go_online()
            else:
                self.state = ConnectionState.UNAUTHORIZED
        else:
            # adbd takes an unknown AUTH type as the end of the session: offline until a new CNXN.
            self._reset_streams()
            self.state = ConnectionState.WAITING_FOR_CONNECT
            self._token = None

    def authorize(self) -> None:
        """Called by the server when the user approves this connection's key."""
        if self.state in (ConnectionState.UNAUTHORIZED, ConnectionState.AUTHENTICATING):
            self._go_online()

    def _go_online(self) -> None:
        self.state = ConnectionState.ONLINE
        self._token = None
        banner = self.server.banner().encode()
        # Like adbd's send_connect: our highest version (the host takes the minimum itself) and
        # the negotiated max payload.
        self.send(AdbPacket(Command.CNXN, VERSION, self.max_payload, banner))
        log.info("connection %d (%s) online, version 0x%08x", self.number, self.peer, self.version)

    def _on_open(self, packet: AdbPacket) -> None:
        remote_id = packet.arg0
        if remote_id == 0:
            return
        if self.delayed_ack != bool(packet.arg1):
            # arg1 is the host's delayed-ack window: non-zero exactly when both sides list
            # delayed_ack; adbd refuses the OPEN otherwise.
            self.send(AdbPacket(Command.CLSE, 0, remote_id))
            return
        name = packet.payload.split(b"\x00", 1)[0].decode("utf-8", "replace")
        handler = self.server._service(name, self)
        if handler is None:
            log.info("connection %d: no service %r", self.number, name)
            self.send(AdbPacket(Command.CLSE, 0, remote_id))
            return
        local_id = self._next_id
        self._next_id = self._next_id % 0x7FFFFFFF + 1
        stream = AdbStream(self, local_id, remote_id, name, packet.arg1 if self.delayed_ack else None)
        self._streams[local_id] = stream
        window = struct.pack("<I", DELAYED_ACK_WINDOW) if self.delayed_ack else b""
        self.send(AdbPacket(Command.OKAY, local_id, remote_id, window))
        task = asyncio.get_running_loop().create_task(self._run_service(handler, stream))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run_service(self, handler: ServiceHandler, stream: AdbStream) -> None:
        try:
            await handler(stream)
        except StreamClosed:
            pass
        except Exception:
            log.exception("service %r failed", stream.service)
        finally:
            with contextlib.suppress(Exception):
                await stream.close()

    def _stream_for(self, packet: AdbPacket) -> AdbStream | None:
        stream = self._streams.get(packet.arg1)
        if stream is None or (packet.arg0 != 0 and packet.arg0 != stream.remote_id):
            return None
        return stream

    def _on_okay(self, packet: AdbPacket) -> None:
        if packet.arg0 == 0 or packet.arg1 == 0:
            return
        stream = self._stream_for(packet)
        if stream is None:
            self.send(AdbPacket(Command.CLSE, packet.arg1, packet.arg0))
            return
        # With delayed ack every OKAY carries an int32 of bytes consumed, without it none; adbd
        # ignores an OKAY whose payload does not match (and so do we).
        if len(packet.payload) not in (0, 4) or stream.delayed_ack != (len(packet.payload) == 4):
            log.warning(
                "connection %d: OKAY with a %d-byte payload ignored", self.number, len(packet.payload)
            )
            return
        acked = struct.unpack("<i", packet.payload)[0] if packet.payload else None
        stream._on_okay(acked)

    def _on_write(self, packet: AdbPacket) -> None:
        stream = self._stream_for(packet)
        if stream is None:
            # adbd drops such a WRTE silently; we also tell the host its stream has no peer here,
            # so a confused host learns it at once instead of waiting for an OKAY (harmless to a
            # correct host: it ignores a CLSE for a socket it has already closed).
            if packet.arg0 != 0:
                self.send(AdbPacket(Command.CLSE, 0, packet.arg0))
        elif not stream._on_write(packet.payload):
            log.warning("connection %d: %s ignores flow control, closing it", self.number, stream.service)
            self.close_stream(stream)

    def _on_close(self, packet: AdbPacket) -> None:
        # adbd answers a CLSE with its own (local_socket_close shuts the remote socket down, which
        # sends CLSE); hosts such as adb-shell wait for it. A CLSE for a gone stream is ignored.
        stream = self._stream_for(packet)
        if stream is not None:
            self.close_stream(stream)

    def close_stream(self, stream: AdbStream) -> None:
        """Close ``stream`` from our side (CLSE) unless it is closed already."""
        if self._streams.pop(stream.local_id, None) is not None:
            self.send(AdbPacket(Command.CLSE, stream.local_id, stream.remote_id))
        stream._on_close()

    def _reset_streams(self) -> None:
        for stream in list(self._streams.values()):
            stream._on_close()
        self._streams.clear()
        for task in list(self._tasks):
            task.cancel()


def _banner_features(banner: str) -> frozenset[str]:
    _, _, props = banner.partition("::")
    for item in props.split(";"):
        key, _, value = item.partition("=")
        if key == "features":
            return frozenset(f for f in value.split(",") if f)
    return frozenset()
