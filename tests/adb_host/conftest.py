"""Fixtures for the ADB host tests: the page's dispatch on the test's phone (``ctx``), and an in-memory
transport with a scripted device for the bad-input cases. (The test's simulated phone ``sim``,
``make_sim``, ``host_key``, the client online with ``sim`` and the isolated Debian adb server
``debian_adb`` are in tests/conftest.py.)"""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator

import pytest

from phone_agent.adb.client import AdbClient
from phone_agent.adb.device import AdbDevice
from phone_agent.adb.packet import AdbPacket, AdbPacketParser
from phone_agent.adb.transport import PLAIN_TRANSPORT
from phone_agent.tools.dispatch import ToolDispatcher
from tests.agent.pillow_codec import PillowCodec

ADB = shutil.which("adb") or "/usr/bin/adb"


@pytest.fixture
def ctx(client: AdbClient) -> ToolDispatcher:
    """The page's one dispatch on the test's ``sim``, over our ADB client, with the Pillow image codec."""
    service = ToolDispatcher()
    service.device = AdbDevice(client, transport="tcp")
    service.image_codec = PillowCodec()
    return service


# ----- an in-memory transport and a scripted device ---------------------------------------------


class MemoryTransport:
    """``AdbTransport`` whose other end is a test script (``device_*`` methods)."""

    capabilities = PLAIN_TRANSPORT

    def __init__(self) -> None:
        self.to_device: asyncio.Queue[bytes] = asyncio.Queue()
        self.to_host: asyncio.Queue[bytes] = asyncio.Queue()
        self.chunks: list[bytes] = []
        self.closed = False
        self.clients: list[AdbClient] = []  # closed by the fixture
        self._parser = AdbPacketParser()
        self._parser.verify_checksum = False

    # host side
    async def send(self, chunk: bytes) -> None:
        if self.closed:
            raise ConnectionError("transport closed")
        self.chunks.append(chunk)
        await self.to_device.put(chunk)

    async def receive(self) -> bytes:
        return await self.to_host.get()

    async def close(self) -> None:
        self.closed = True
        self.to_host.put_nowait(b"")

    # device side
    def device_send(self, data: bytes | AdbPacket, checksum: bool = True) -> None:
        if isinstance(data, AdbPacket):
            data = data.encode(with_checksum=checksum)
        self.to_host.put_nowait(data)

    def device_eof(self) -> None:
        self.to_host.put_nowait(b"")

    async def device_receive(self, timeout: float = 5.0) -> AdbPacket:
        async with asyncio.timeout(timeout):
            while True:
                packets = self._parser.packets_received()
                if packets:
                    self._pending = getattr(self, "_pending", []) + packets
                pending = getattr(self, "_pending", [])
                if pending:
                    return pending.pop(0)
                self._parser.receive_data(await self.to_device.get())


@pytest.fixture
async def memory_transport() -> AsyncIterator[MemoryTransport]:
    transport = MemoryTransport()
    yield transport
    for client in transport.clients:
        await client.close()
