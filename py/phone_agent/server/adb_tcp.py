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
from collections.abc import Callable

from phone_agent.adb.client import AdbClient, AdbError
from phone_agent.adb.host import ConnectionState
from phone_agent.adb.keys import AdbPrivateKey
from phone_agent.adb.smart_socket import AdbServerClient

READ_SIZE = 1024 * 1024
CONNECT_TIMEOUT = 10.0


class TcpTransport:
    """``AdbTransport`` over an asyncio stream pair."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    @classmethod
    async def open(cls, host: str, port: int, timeout: float = CONNECT_TIMEOUT) -> TcpTransport:
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(host, port, limit=READ_SIZE * 2)
        except TimeoutError:
            raise AdbError(f"{host}:{port} did not accept a connection within {timeout:g} s") from None
        except OSError as exc:
            raise AdbError(f"cannot connect to {host}:{port}: {exc.strerror or exc}") from exc
        return cls(reader, writer)

    async def send(self, chunk: bytes) -> None:
        self.writer.write(chunk)
        if self.writer.transport.get_write_buffer_size() > 4 * READ_SIZE:
            await self.writer.drain()

    async def receive(self) -> bytes:
        try:
            return await self.reader.read(READ_SIZE)
        except ConnectionError:
            return b""

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(Exception):
            async with asyncio.timeout(2.0):
                await self.writer.wait_closed()


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
