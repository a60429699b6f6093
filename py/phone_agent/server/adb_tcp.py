"""CPython TCP transports for the ADB host: straight to a network adbd, or through an adb server.

Sockets live here (server/ is CPython only); the protocol stays in ``phone_agent.adb``. Used by the
tests and benchmarks, and by anything in CPython that wants the phone: ``connect_adbd`` gives a
connected ``AdbClient`` (wrap it in ``AdbDevice(client, transport="tcp")``), ``adb_server_client``
an ``AdbServerClient`` for 127.0.0.1:5037.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from collections import deque
from collections.abc import Callable

from phone_agent.adb.client import AdbClient, AdbError
from phone_agent.adb.connection import ConnectionState
from phone_agent.adb.keys import AdbPrivateKey
from phone_agent.adb.smart_socket import AdbServerClient
from phone_agent.adb.transport import PLAIN_TRANSPORT

QUEUE_LIMIT = 8 * 1024 * 1024  # received bytes queued before we stop reading the socket
CONNECT_TIMEOUT = 10.0


class _ByteQueue(asyncio.Protocol):
    """Received bytes as the loop hands them over (no StreamReader copy), with flow control both ways."""

    def __init__(self) -> None:
        self.chunks: deque[bytes] = deque()
        self.queued = 0
        self.eof = False
        self.transport: asyncio.Transport | None = None
        self._readable: asyncio.Future[None] | None = None
        self._writable: asyncio.Future[None] | None = None
        self._reading_paused = False
        self.closed = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)
        self.queued += len(data)
        if self.queued > QUEUE_LIMIT and not self._reading_paused and self.transport is not None:
            self.transport.pause_reading()
            self._reading_paused = True
        self._wake_reader()

    def eof_received(self) -> bool:
        self.eof = True
        self._wake_reader()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.eof = True
        self._wake_reader()
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)
        if not self.closed.done():
            self.closed.set_result(None)

    def pause_writing(self) -> None:
        self._writable = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self._writable is not None and not self._writable.done():
            self._writable.set_result(None)
        self._writable = None

    def _wake_reader(self) -> None:
        if self._readable is not None and not self._readable.done():
            self._readable.set_result(None)

    async def next_chunk(self) -> bytes:
        while not self.chunks:
            if self.eof:
                return b""
            self._readable = asyncio.get_running_loop().create_future()
            await self._readable
        data = self.chunks.popleft()
        self.queued -= len(data)
        if self._reading_paused and self.queued <= QUEUE_LIMIT // 2 and self.transport is not None:
            self.transport.resume_reading()
            self._reading_paused = False
        return data

    async def wait_writable(self) -> None:
        if self._writable is not None:
            await self._writable


class TcpTransport:
    """``AdbTransport`` over a TCP connection (chunks as the event loop reads them)."""

    capabilities = PLAIN_TRANSPORT

    def __init__(self, transport: asyncio.Transport, queue: _ByteQueue) -> None:
        self.transport = transport
        self._queue = queue

    @classmethod
    async def open(cls, host: str, port: int, timeout: float = CONNECT_TIMEOUT) -> TcpTransport:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport, queue = await loop.create_connection(_ByteQueue, host, port)
        except TimeoutError:
            raise AdbError(f"{host}:{port} did not accept a connection within {timeout:g} s") from None
        except OSError as exc:
            raise AdbError(f"cannot connect to {host}:{port}: {exc.strerror or exc}") from exc
        return cls(transport, queue)

    @property
    def closed(self) -> bool:
        return self.transport.is_closing()

    async def send(self, chunk: bytes) -> None:
        if self.transport.is_closing():
            raise ConnectionError("the TCP connection is closed")
        self.transport.write(chunk)
        await self._queue.wait_writable()

    async def receive(self) -> bytes:
        return await self._queue.next_chunk()

    async def close(self) -> None:
        self.transport.close()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(2.0):
                await self._queue.closed


async def connect_adbd(
    host: str,
    port: int,
    keys: list[AdbPrivateKey] | AdbPrivateKey,
    *,
    timeout: float = CONNECT_TIMEOUT,
    auth_timeout: float = 60.0,
    on_state: Callable[[ConnectionState], None] | None = None,
    **options,
) -> AdbClient:
    """An ``AdbClient`` connected (handshake done) to the adbd at ``host:port``."""
    transport = await TcpTransport.open(host, port, timeout)
    client = AdbClient(transport, keys, on_state=on_state, **options)
    await client.connect(timeout=timeout, auth_timeout=auth_timeout)
    return client


def adb_server_client(
    host: str = "127.0.0.1", port: int = 5037, timeout: float = CONNECT_TIMEOUT
) -> AdbServerClient:
    """An ``AdbServerClient`` whose every request opens a new TCP connection to the adb server."""

    async def connect() -> TcpTransport:
        return await TcpTransport.open(host, port, timeout)

    return AdbServerClient(connect, timeout)
