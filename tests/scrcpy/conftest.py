"""Fixtures for the scrcpy tests: the vendored server jar, a sim trusting the tests' key, our client."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from phone_agent.adb.client import AdbClient
from phone_agent.server.adb_tcp import connect_adbd
from phone_agent.sim import SimulatedPhoneServer
from tests.support import ROOT

JAR_PATH = ROOT / "static" / "vendor" / "scrcpy" / "scrcpy-server"


@pytest.fixture(scope="session")
def jar() -> bytes:
    if not JAR_PATH.exists():
        pytest.fail("the scrcpy server is not vendored: run scripts/setup")
    return JAR_PATH.read_bytes()


@pytest.fixture
async def sim(make_sim, host_key) -> SimulatedPhoneServer:
    server = await make_sim(scrcpy=True)
    server.trust_key(host_key.public_key("tests@scrcpy"))
    return server


@pytest.fixture
async def client(sim, host_key) -> AsyncIterator[AdbClient]:
    connected = await connect_adbd("127.0.0.1", sim.port, host_key)
    try:
        yield connected
    finally:
        await connected.close()
