"""Fixtures for the scrcpy tests: the vendored server jar and a sim trusting the tests' key (our client
online with it, ``client``, is in tests/conftest.py)."""

from __future__ import annotations

import pytest

from phone_agent.sim.server import SimulatedPhoneServer
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
