"""One TCP connection to the simulated adbd: the asyncio driver of ``AdbConnection`` on the device side.

The protocol (handshake, authentication, version and checksums, streams and flow control) is the
pure core in ``adb/connection.py``; this module only moves bytes between the socket and the core,
runs a service task for each stream the host opens, and turns the core's events into what services
see: ``AdbdStream.read`` / ``write`` / ``close``. Authentication asks the adbd that accepted the
connection (``SimAdbd``: trusted keys, "Allow USB debugging?").

Whatever a peer sends, the worst outcome is that *this* connection is dropped (a bad header, an
oversize payload, a bad checksum, a close mid-message) or that a stream is closed (a WRTE or OKAY
for a stream that does not exist); the server and the other connections carry on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Protocol

from phone_agent.adb.connection import AdbConnection, AdbConnectionError, ConnectionState, Side, parse_banner
from phone_agent.adb.events import ConnectionReset, PacketIgnored, StreamData, StreamRequested
from phone_agent.adb.events import StreamClosed as StreamEnded
from phone_agent.adb.keys import AdbPublicKey

__all__ = [
    "AdbdConnection",
    "AdbdStream",
    "AdbdStreamClosedError",
    "ServiceHandler",
    "SimAdbd",
]

log = logging.getLogger("phone_agent.sim")

HANDSHAKE_TIMEOUT = 60.0  # seconds a peer has to become online (or be waiting for approval)
WRITE_ACK_TIMEOUT = 60.0  # seconds a write waits for the peer to take more (an OKAY)
CLOSE_ACK_TIMEOUT = 5.0  # without delayed ack, CLSE waits this long for the last WRTE's OKAY
READ_SIZE = 1 << 20
# What ``describe`` calls each state: adbd's own names, as ``adb devices`` shows them.
STATE_NAMES = {
    ConnectionState.IDLE: "offline",
    ConnectionState.CONNECTING: "offline",
    ConnectionState.AUTHENTICATING: "authorizing",
    ConnectionState.WAITING_FOR_USER: "unauthorized",
    ConnectionState.ONLINE: "device",
    ConnectionState.CLOSED: "closed",
}


class AdbdStreamClosedError(Exception):
    """The stream was closed (by the peer, or because the connection went away)."""


class AdbdStream:
    """One open service stream, as a service sees it: reads acknowledged as taken, writes as allowed."""

    def __init__(self, connection: AdbdConnection, local_id: int, service: str) -> None:
        self.connection = connection
        self.local_id = local_id
        self.service = service
        self.closed = False
        self._inbound: deque[bytes] = deque()
        self._readable = asyncio.Event()
        self._write_lock = asyncio.Lock()

    # ----- called by the connection

    def _on_data(self, data: bytes) -> None:
        self._inbound.append(data)
        self._readable.set()

    def _on_close(self) -> None:
        self.closed = True
        self._readable.set()

    # ----- used by services

    async def read(self) -> bytes:
        """The next chunk the peer wrote (acknowledged with OKAY as it is taken); b"" once closed."""
        while not self._inbound:
            if self.closed:
                return b""
            self._readable.clear()
            await self._readable.wait()
        data = self._inbound.popleft()
        if not self.closed:
            self.connection._acknowledge(self, len(data))
        return data

    async def write(self, data: bytes | bytearray | memoryview) -> None:
        """Send ``data`` as WRTEs of at most the negotiated payload, as flow control allows."""
        connection = self.connection
        async with self._write_lock:  # writers take turns
            if self.closed:
                raise AdbdStreamClosedError(self.service)
            try:
                connection.core.write(self.local_id, data)
            except AdbConnectionError:
                raise AdbdStreamClosedError(self.service) from None
            await connection.flush()
            await self._wait(lambda: not connection.core.pending_output(self.local_id), WRITE_ACK_TIMEOUT)

    async def _wait(self, done: Callable[[], bool], timeout: float) -> None:
        """Until ``done()`` or the stream closes; a ``timeout`` without progress closes the stream."""
        connection = self.connection
        while not done() and not self.closed:
            connection.progress.clear()
            try:
                await asyncio.wait_for(connection.progress.wait(), timeout)
            except TimeoutError:
                connection.close_stream(self)
                raise AdbdStreamClosedError(f"no OKAY for {self.service} in {timeout:.0f} s") from None
        if self.closed:
            raise AdbdStreamClosedError(self.service)

    async def close(self) -> None:
        """Close from our side (CLSE); without delayed ack, after the last WRTE's OKAY (bounded)."""
        if self.closed:
            return
        core = self.connection.core
        with contextlib.suppress(AdbdStreamClosedError):
            await self._wait(lambda: not core.awaiting_ack(self.local_id), CLOSE_ACK_TIMEOUT)
        self.connection.close_stream(self)


ServiceHandler = Callable[[AdbdStream], Awaitable[None]]


class SimAdbd(Protocol):
    """What a connection asks of the adbd that accepted it (``SimulatedPhoneServer`` is one)."""

    auth: str

    @property
    def features(self) -> tuple[str, ...]: ...
    def banner(self) -> str: ...
    def service_for(self, name: str, connection: AdbdConnection) -> ServiceHandler | None: ...
    def verify_key(self, token: bytes, signature: bytes) -> AdbPublicKey | None: ...
    def offer_key(self, key: AdbPublicKey, connection: AdbdConnection) -> bool: ...
    def forget(self, connection: AdbdConnection) -> None: ...


class _ServerAuthenticator:
    """The device's AUTH strategy: the server's trusted keys and its approval prompt."""

    def __init__(self, server: SimAdbd, connection: AdbdConnection) -> None:
        self.server = server
        self.connection = connection

    @property
    def required(self) -> bool:
        return self.server.auth != "none"

    def verify(self, token: bytes, signature: bytes) -> AdbPublicKey | None:
        return self.server.verify_key(token, signature)

    def offer(self, key: AdbPublicKey) -> bool:
        return self.server.offer_key(key, self.connection)


class AdbdConnection:
    """adbd's side of one transport. ``serve()`` runs until the peer goes or misbehaves."""

    def __init__(
        self,
        server: SimAdbd,
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
        self.core = AdbConnection(
            Side.DEVICE,
            features=server.features,
            properties=parse_banner(server.banner())[0],
            device_auth=_ServerAuthenticator(server, self),
        )
        self.progress = asyncio.Event()  # set whenever the core may have sent more or closed streams
        self._streams: dict[int, AdbdStream] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        self._closed = False

    @property
    def state(self) -> ConnectionState:
        return self.core.state

    @property
    def close_reason(self) -> str:
        return self.core.close_reason

    @property
    def max_payload(self) -> int:
        return self.core.max_payload

    # ----- info for the control interface

    def describe(self) -> dict[str, object]:
        """A JSON-able summary."""
        core = self.core
        return {
            "id": self.number,
            "peer": self.peer,
            "state": STATE_NAMES[core.state],
            "version": f"0x{core.version:08x}",
            "max_payload": core.max_payload,
            "host_features": sorted(core.peer_features),
            "delayed_ack": core.delayed_ack,
            "key": core.public_key.fingerprint if core.public_key else None,
            "streams": core.stream_services(),
        }

    # ----- I/O

    async def flush(self) -> None:
        """Write what the core has queued, and wait (bounded) for the socket to take it."""
        if not self._write_now():
            return
        try:
            await asyncio.wait_for(self.writer.drain(), WRITE_ACK_TIMEOUT)
        except (ConnectionError, TimeoutError) as exc:
            self.abort(f"write failed: {exc!r}")
            raise AdbdStreamClosedError("connection lost") from exc

    def _write_now(self) -> bool:
        """Hand the core's chunks to the socket; False when there was nothing (or no socket)."""
        chunks = self.core.data_to_send()
        if not chunks or self.writer.is_closing():
            return False
        # One write() per chunk: CPython 3.11's writelines() joins them, copying every payload.
        for chunk in chunks:
            self.writer.write(chunk)
        return True

    async def serve(self) -> None:
        """Read, parse and dispatch until EOF, a protocol error or ``abort``."""
        timer = asyncio.get_running_loop().call_later(HANDSHAKE_TIMEOUT, self._handshake_timeout)
        core = self.core
        try:
            while core.state is not ConnectionState.CLOSED:
                try:
                    data = await self.reader.read(READ_SIZE)
                except ConnectionError as exc:
                    core.abort(f"read failed: {exc!r}")
                    break
                try:
                    if data:
                        core.receive_data(data)
                    else:
                        core.receive_eof()
                except AdbConnectionError as exc:
                    log.warning("connection %d (%s) dropped: %s", self.number, self.peer, exc)
                self._dispatch()
                self._write_now()
                if not data:
                    break
        finally:
            timer.cancel()
            await self._shutdown()

    def _handshake_timeout(self) -> None:
        if self.core.state in (ConnectionState.IDLE, ConnectionState.AUTHENTICATING):
            self.abort("no successful handshake in time")

    def abort(self, reason: str) -> None:
        """Drop the connection now."""
        if self._closed:
            return
        self._closed = True
        self.core.abort(self.core.close_reason or reason)
        self._dispatch()
        self.writer.close()

    async def _shutdown(self) -> None:
        self._closed = True
        self.core.abort(self.core.close_reason or "closed")
        self._dispatch()
        for stream in list(self._streams.values()):
            stream._on_close()
        self._streams.clear()
        self._cancel_tasks()
        if self._tasks:
            await asyncio.wait(self._tasks, timeout=5.0)
        self.writer.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.writer.wait_closed(), 2.0)
        self.server.forget(self)

    def authorize(self) -> None:
        """Called by the server when the user approves this connection's key."""
        self.core.authorize()
        self._dispatch()
        self._write_now()

    # ----- the core's events

    def _dispatch(self) -> None:
        for event in self.core.events_received():
            if isinstance(event, StreamData):
                stream = self._streams.get(event.local_id)
                if stream is not None:
                    stream._on_data(event.data)
            elif isinstance(event, StreamRequested):
                self._start_service(event)
            elif isinstance(event, StreamEnded):
                stream = self._streams.pop(event.local_id, None)
                if stream is not None:
                    stream._on_close()
            elif isinstance(event, ConnectionReset):
                self._cancel_tasks()  # a new session: the old services end
            elif isinstance(event, PacketIgnored):
                log.debug("connection %d: %s", self.number, event)
        self.progress.set()

    def _start_service(self, request: StreamRequested) -> None:
        handler = self.server.service_for(request.service, self)
        if handler is None:
            log.debug("connection %d: no service %r", self.number, request.service)
            self.core.refuse(request.remote_id)
            return
        local_id = self.core.accept(request.remote_id)
        if local_id is None:
            return
        stream = AdbdStream(self, local_id, request.service)
        self._streams[local_id] = stream
        task = asyncio.get_running_loop().create_task(self._run_service(handler, stream))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run_service(self, handler: ServiceHandler, stream: AdbdStream) -> None:
        try:
            await handler(stream)
        except AdbdStreamClosedError:
            pass
        except Exception:
            log.exception("service %r failed", stream.service)
        finally:
            with contextlib.suppress(Exception):
                await stream.close()

    def _acknowledge(self, stream: AdbdStream, size: int) -> None:
        self.core.acknowledge(stream.local_id, size)
        self._write_now()

    def close_stream(self, stream: AdbdStream) -> None:
        """Close ``stream`` from our side (CLSE) unless it is closed already."""
        if self._streams.pop(stream.local_id, None) is not None:
            self.core.close(stream.local_id, discard=True)
            self._write_now()
        stream._on_close()
        self.progress.set()

    def _cancel_tasks(self) -> None:
        for task in list(self._tasks):
            task.cancel()
