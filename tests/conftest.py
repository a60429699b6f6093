"""Shared fixtures: the phone-agent server as a real subprocess, one Chromium for all browser tests,
an ADB host key, simulated phones on free ports, and an isolated Debian adb server.

Browser tests drive Debian's Chromium (/usr/bin/chromium) through Playwright with WebMCP switched on.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from phone_agent.adb.client import AdbClient
from phone_agent.adb.keys import AdbPrivateKey, generate_private_key
from phone_agent.server.adb_tcp import connect_adbd
from phone_agent.sim.server import SimulatedPhoneServer
from tests.support import (
    CHROMIUM,
    CHROMIUM_ARGS,
    ROOT,
    DebianAdbServer,
    ServedPhoneAgent,
    require,
    stop_leftover_servers,
)


@pytest.fixture(scope="session", autouse=True)
def phone_agent_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The session's own config and state directories (token, pairing secret, background servers'
    records and logs) for every phone-agent the tests start; any server still recorded at the end is
    stopped."""
    home = tmp_path_factory.mktemp("phone-agent-home")
    saved = {name: os.environ.get(name) for name in ("PHONE_AGENT_HOME", "PHONE_AGENT_TOKEN")}
    os.environ["PHONE_AGENT_HOME"] = str(home)
    os.environ.pop("PHONE_AGENT_TOKEN", None)
    try:
        yield home
    finally:
        stop_leftover_servers(home)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.fixture(scope="session")
def served() -> Iterator[ServedPhoneAgent]:
    if not (ROOT / "static" / "vendor" / "pyodide" / "pyodide.asm.wasm").exists():
        pytest.fail("the browser runtime is not vendored: run scripts/setup")
    server = ServedPhoneAgent()
    yield server
    server.stop()


@pytest.fixture(scope="session")
async def browser():
    require(CHROMIUM, "Debian's chromium")
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        await browser.close()


@pytest.fixture(scope="session")
def host_key() -> AdbPrivateKey:
    """One ADB host key for the tests' own clients."""
    return generate_private_key()


@pytest.fixture
async def make_sim() -> AsyncIterator[Callable[..., Awaitable[SimulatedPhoneServer]]]:
    """Start simulated phones (ports chosen by the OS, so outside the adb server's 5555–5585 scan),
    each with its control endpoint; all are closed at the end of the test."""
    started: list[SimulatedPhoneServer] = []

    async def make(auth: str = "accept", **options: Any) -> SimulatedPhoneServer:
        options.setdefault("control_port", 0)
        server = SimulatedPhoneServer("127.0.0.1", 0, auth=auth, **options)
        await server.start()
        started.append(server)
        return server

    try:
        yield make
    finally:
        for server in started:
            await server.close()


@pytest.fixture
async def client(sim, host_key) -> AsyncIterator[AdbClient]:
    """Our ADB client, online with the folder's own ``sim`` (a sim that trusts ``host_key``)."""
    connected = await connect_adbd("127.0.0.1", sim.port, host_key)
    try:
        yield connected
    finally:
        await connected.close()


@pytest.fixture(scope="session")
def debian_adb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DebianAdbServer]:
    """Debian's adb server, isolated (own port, own HOME and key), for the whole session."""
    server = DebianAdbServer(tmp_path_factory.mktemp("adb-home"))
    try:
        yield server
    finally:
        server.stop()
