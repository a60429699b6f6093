"""Shared fixtures: the phone-agent server as a real subprocess, one Chromium for all browser tests,
an ADB host key, simulated phones on free ports (``sim``: the one of a test), and an isolated Debian
adb server.

Browser tests drive Debian's Chromium (/usr/bin/chromium) through Playwright with WebMCP switched on.
"""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from phone_agent.adb.client import AdbClient
from phone_agent.adb.keys import AdbPrivateKey, generate_private_key
from phone_agent.server.adb_tcp import connect_adbd
from phone_agent.sim.server import SimulatedPhoneServer
from tests import shared_chromium
from tests.shared_chromium import BrowserHandle, SharedChromium
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
async def browser(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[BrowserHandle]:
    """The session's Chromium (see tests/shared_chromium.py): its log kept in the base temp dir, its
    crashes reported as the failures of the tests they happened in, and a new Chromium for the next
    test after one."""
    require(CHROMIUM, "Debian's chromium")
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        chromium = SharedChromium(
            playwright, CHROMIUM, CHROMIUM_ARGS, tmp_path_factory.getbasetemp() / "chromium"
        )
        await chromium.launch()
        shared_chromium.ACTIVE = chromium
        try:
            yield BrowserHandle(chromium)
        finally:
            await chromium.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    """A Chromium crash while a test ran is that test's failure, told with the renderer's last words."""
    report = yield
    chromium = shared_chromium.ACTIVE
    crashes = chromium.crashes_between(call.start, call.stop) if chromium is not None else []
    if crashes:
        chromium.settle_now()  # the renderer's status comes a moment after the page's crash event
        told = "\n".join(str(crash) for crash in crashes)
        words = chromium.last_words(crashes[0])
        text = f"{told}\n\nChromium's last words ({chromium.log_path}):\n{words}"
        dumps = chromium.minidumps(since=crashes[0].at - 5)
        if dumps:
            text += f"\n\nIts crash handler's minidumps ({chromium.minidump_dir}):\n"
            text += "\n".join(str(dump) for dump in dumps)
            if any(dump.samplers for dump in dumps):
                text += "\n(a renderer that ran an allocation sampler: docs/chromium.md, issue 25)"
        report.sections.append((f"Chromium crashed during {call.when}", text))
        if report.passed:
            report.outcome = "failed"
            report.longrepr = f"Chromium crashed while the test ran:\n{text}"
    return report


def pytest_terminal_summary(terminalreporter) -> None:
    chromium = shared_chromium.ACTIVE
    if chromium is not None and chromium.crashes:
        terminalreporter.section("Chromium crashes")
        for crash in chromium.crashes:
            terminalreporter.line(f"{time.strftime('%H:%M:%S', time.localtime(crash.at))} {crash}")
        terminalreporter.line(f"{chromium.launches} launches; the log: {chromium.log_path}")


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
def sim_options(request: pytest.FixtureRequest) -> dict[str, Any]:
    """What ``sim`` is started with: keyword arguments of ``SimulatedPhoneServer`` (``{"scrcpy": True}``,
    ``{"realistic": RealisticProfile(7)}``). A module sets them as ``SIM_OPTIONS``; a folder whose phones
    all need one overrides this fixture."""
    return dict(getattr(request.module, "SIM_OPTIONS", {}))


@pytest.fixture
async def sim(make_sim, host_key, sim_options: dict[str, Any]) -> SimulatedPhoneServer:
    """The simulated phone of a test (``sim_options``): it trusts ``host_key``, and its status-bar clock
    stays at 12:00 (screenshots compare byte for byte)."""
    server = await make_sim(**sim_options)
    server.trust_key(host_key.public_key("tests@sim"))
    server.phone.clock = lambda: "12:00"
    return server


@pytest.fixture
async def client(sim, host_key) -> AsyncIterator[AdbClient]:
    """Our ADB client, online with the folder's own ``sim`` (a sim that trusts ``host_key``)."""
    connected = await connect_adbd("127.0.0.1", sim.port, host_key)
    try:
        yield connected
    finally:
        await connected.close()


@pytest.fixture
async def adb_serial(sim, debian_adb: DebianAdbServer) -> AsyncIterator[str]:
    """The test's ``sim`` held by the isolated Debian adb server: its serial there."""
    async with debian_adb.holding(sim.port) as serial:
        yield serial


@pytest.fixture(scope="session")
def debian_adb(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DebianAdbServer]:
    """Debian's adb server, isolated (own port, own HOME and key), for the whole session."""
    server = DebianAdbServer(tmp_path_factory.mktemp("adb-home"))
    try:
        yield server
    finally:
        server.stop()
