"""Fixtures for the simulated phone: a sim on a free port, an isolated Debian adb server, a raw host.

The virtual UI (``phone_agent.sim.android``) is built by another engineer at the same time; until it
handles ``screencap``/``input``/``uiautomator`` itself, ``HybridPhone`` answers those with a tiny
fake (a solid PNG whose colour changes on each tap). Once the real phone lists a command, the real
one answers it and the same tests check the real thing.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from PIL import Image

from phone_agent.adb.keys import AdbPrivateKey, generate_private_key
from phone_agent.sim import SimulatedPhoneServer
from phone_agent.sim.android import CommandResult, VirtualPhone
from tests.sim.raw_host import RawHost

ADB = shutil.which("adb") or "/usr/bin/adb"
FAKE_COMMANDS = frozenset({"screencap", "input", "uiautomator"})


class HybridPhone:
    """The real VirtualPhone, plus test-only stand-ins for the commands it does not handle yet."""

    def __init__(self) -> None:
        self.real = VirtualPhone()
        self.serial = self.real.serial
        self.props = self.real.props
        self.taps = 0

    def uses_fake(self, name: str) -> bool:
        return name not in self.real.command_names()

    def command_names(self) -> frozenset[str]:
        return self.real.command_names() | FAKE_COMMANDS

    def run(self, argv: list[str], stdin: bytes, fs) -> CommandResult:
        if not self.uses_fake(argv[0]):
            return self.real.run(argv, stdin, fs)
        if argv[0] == "input" and argv[1:2] == ["tap"]:
            self.taps += 1
            return CommandResult()
        if argv[0] == "screencap":
            image = Image.new("RGB", (1080, 2400), ((40 * self.taps) % 256, 120, 200))
            buffer = io.BytesIO()
            image.save(buffer, "PNG")
            if len(argv) > 1 and not argv[-1].startswith("-"):
                fs.write_file(argv[-1], buffer.getvalue())
                return CommandResult()
            return CommandResult(stdout=buffer.getvalue())
        if argv[0] == "uiautomator" and argv[1:2] == ["dump"]:
            path = argv[2] if len(argv) > 2 else "/sdcard/window_dump.xml"
            xml = "<?xml version='1.0' encoding='UTF-8' ?><hierarchy rotation=\"0\"></hierarchy>"
            fs.write_file(path, xml.encode())
            return CommandResult(stdout=f"UI hierchary dumped to: {path}\n".encode())
        return CommandResult(stderr=b"fake: unsupported\n", exit_code=1)

    def state(self) -> dict:
        return {**self.real.state(), "fake_taps": self.taps}

    def reset(self) -> None:
        self.taps = 0
        self.real.reset()


@pytest.fixture(scope="session")
def host_key() -> AdbPrivateKey:
    return generate_private_key()


@pytest.fixture
async def make_sim():
    """Start sims with the given options; all are closed at the end of the test."""
    started: list[SimulatedPhoneServer] = []

    async def make(auth: str = "accept", **options) -> SimulatedPhoneServer:
        server = SimulatedPhoneServer(
            "127.0.0.1", 0, auth=auth, control_port=0, phone=HybridPhone(), **options
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
