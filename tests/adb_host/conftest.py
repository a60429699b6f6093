"""Fixtures for the ADB host tests: a key, simulated phones on free ports, an isolated adb server,
and an in-memory transport with a scripted device for the bad-input cases."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from phone_agent.adb.client import AdbClient
from phone_agent.adb.keys import AdbPrivateKey, generate_private_key
from phone_agent.adb.packet import AdbPacket, AdbPacketParser
from phone_agent.server.adb_tcp import connect_adbd
from phone_agent.sim import SimulatedPhoneServer
from tests.support import free_port

ADB = shutil.which("adb") or "/usr/bin/adb"


@pytest.fixture(scope="session")
def host_key() -> AdbPrivateKey:
    return generate_private_key()


@pytest.fixture
async def make_sim() -> AsyncIterator[Callable[..., Awaitable[SimulatedPhoneServer]]]:
    """Start simulated phones (port chosen by the OS, outside the adb server's 5555–5585 scan)."""
    started: list[SimulatedPhoneServer] = []

    async def make(auth: str = "accept", control: bool = False) -> SimulatedPhoneServer:
        server = SimulatedPhoneServer("127.0.0.1", 0, auth=auth, control_port=0 if control else None)
        await server.start()
        started.append(server)
        return server

    try:
        yield make
    finally:
        for server in started:
            await server.close()


@pytest.fixture
async def sim(make_sim, host_key) -> SimulatedPhoneServer:
    """A simulated phone that already trusts ``host_key``."""
    server = await make_sim()
    server.trust_key(host_key.public_key("tests@adb_host"))
    return server


@pytest.fixture
async def client(sim, host_key) -> AsyncIterator[AdbClient]:
    """Our client, online with ``sim``."""
    connected = await connect_adbd("127.0.0.1", sim.port, host_key)
    try:
        yield connected
    finally:
        await connected.close()


# ----- Debian's adb server, isolated -------------------------------------------------------------


@dataclass
class AdbServer:
    """An adb server of our own: own port, own HOME (its own key), killed at the end."""

    port: int
    home: Path

    @property
    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANDROID_", "ADB_"))}
        env["HOME"] = str(self.home)
        return env

    async def run(self, *args: str, timeout: float = 30.0) -> tuple[int, bytes, bytes]:
        process = await asyncio.create_subprocess_exec(
            ADB, "-P", str(self.port), *args,
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env,
        )  # fmt: skip
        try:
            out, err = await asyncio.wait_for(process.communicate(), timeout)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise
        return process.returncode or 0, out, err


@pytest.fixture(scope="session")
def adb_server(tmp_path_factory) -> AsyncIterator[AdbServer]:
    if not os.path.exists(ADB):
        if os.environ.get("CI"):
            pytest.fail("Debian's adb is not installed (apt-get install adb)")
        pytest.skip("Debian's adb is not installed (apt-get install adb)")
    home = tmp_path_factory.mktemp("adb-home")
    server = AdbServer(free_port(), home)
    started = subprocess.run(
        [ADB, "-P", str(server.port), "start-server"], env=server.env, capture_output=True, timeout=30
    )
    if started.returncode != 0:
        pytest.fail(f"adb start-server failed: {started.stderr.decode(errors='replace')}")
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", server.port), 0.5):
                break
            time.sleep(0.1)
        yield server
    finally:
        subprocess.run(
            [ADB, "-P", str(server.port), "kill-server"], env=server.env, capture_output=True, timeout=15
        )
        _make_sure_it_is_gone(server.port)


def _make_sure_it_is_gone(port: int) -> None:
    """If our server still listens after kill-server, end that one process (found by its own port)."""
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
        except OSError:
            return
        time.sleep(0.1)
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if argv and argv[0].endswith(b"adb") and f"tcp:{port}".encode() in argv:
            with contextlib.suppress(OSError):
                os.kill(int(entry.name), 15)


# ----- an in-memory transport and a scripted device ---------------------------------------------


class MemoryTransport:
    """``AdbTransport`` whose other end is a test script (``device_*`` methods)."""

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
