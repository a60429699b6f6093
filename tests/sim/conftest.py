"""Fixtures for the simulated phone: a sim on a free port, an isolated Debian adb server, a raw host.

The sims run the real virtual phone (``phone_agent.sim.android.VirtualPhone``): screenshots, taps
and UI dumps in these tests are the real ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from phone_agent.adb.keys import AdbPrivateKey, generate_private_key
from phone_agent.sim import SimulatedPhoneServer
from phone_agent.sim.android import VirtualPhone
from tests.sim.raw_host import RawHost

ADB = shutil.which("adb") or "/usr/bin/adb"


@pytest.fixture(scope="session")
def host_key() -> AdbPrivateKey:
    return generate_private_key()


@pytest.fixture
async def make_sim():
    """Start sims with the given options; all are closed at the end of the test."""
    started: list[SimulatedPhoneServer] = []

    async def make(auth: str = "accept", **options) -> SimulatedPhoneServer:
        server = SimulatedPhoneServer(
            "127.0.0.1", 0, auth=auth, control_port=0, phone=VirtualPhone(), **options
        )
        await server.start()
        started.append(server)
        return server

    try:
        yield make
    finally:
        for server in started:
            await server.close()


@pytest.fixture
async def sim(make_sim, host_key):
    """A sim (auth accept, control endpoint on) that already trusts ``host_key``."""
    server = await make_sim()
    server.trust_key(host_key.public_key("tests@sim"))
    return server


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class AdbHost:
    """A Debian adb server of our own: own port, own HOME (so its own fresh key), killed at the end."""

    port: int
    home: Path
    process: subprocess.Popen

    @property
    def env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANDROID_", "ADB_"))}
        env["HOME"] = str(self.home)
        return env

    async def run(
        self, *args: str, timeout: float = 30.0, stdin: bytes | None = None
    ) -> tuple[int, bytes, bytes]:
        """Run ``adb -P PORT ARGS``; returns (exit code, stdout, stderr)."""
        process = await asyncio.create_subprocess_exec(
            ADB, "-P", str(self.port), *args,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=self.env,
        )  # fmt: skip
        try:
            out, err = await asyncio.wait_for(process.communicate(stdin), timeout)
        except TimeoutError:
            process.kill()
            await process.wait()
            raise
        return process.returncode or 0, out, err

    async def state_of(self, serial: str) -> str | None:
        """The state ``adb devices`` shows for ``serial`` (device, unauthorized, offline…)."""
        _, out, _ = await self.run("devices")
        for line in out.decode().splitlines()[1:]:
            parts = line.split()
            if len(parts) >= 2 and parts[0] == serial:
                return parts[1]
        return None

    async def wait_for_state(self, serial: str, wanted: str, timeout: float = 15.0) -> str | None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        state = None
        while loop.time() < deadline:
            state = await self.state_of(serial)
            if state == wanted:
                return state
            await asyncio.sleep(0.2)
        return state


@pytest.fixture(scope="session")
def adb_host(tmp_path_factory):
    if not os.path.exists(ADB):
        pytest.skip("Debian's adb is not installed (apt-get install adb)")
    home = tmp_path_factory.mktemp("adb-home")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANDROID_", "ADB_"))}
    env["HOME"] = str(home)
    log = open(home / "adb-server.log", "wb")  # closed in the finally below
    process = subprocess.Popen(
        [ADB, "-P", str(port), "nodaemon", "server"], env=env, stdout=log, stderr=subprocess.STDOUT
    )
    host = AdbHost(port, home, process)
    try:
        for _ in range(100):  # up to 10 s for the server to listen
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
                break
            if process.poll() is not None:
                pytest.fail(f"adb server exited: {(home / 'adb-server.log').read_text()}")
            import time

            time.sleep(0.1)
        yield host
    finally:
        subprocess.run([ADB, "-P", str(port), "kill-server"], env=env, timeout=10, capture_output=True)
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        log.close()


@pytest.fixture
async def raw_host(sim, host_key):
    """An online raw host connection to ``sim``."""
    host = await RawHost.connect(sim.port)
    await host.handshake(host_key)
    try:
        yield host
    finally:
        await host.close()
