"""Fixtures for the simulated phone: a sim that trusts the tests' key, and a raw host connection.
(``make_sim``, ``host_key`` and the isolated Debian adb server ``debian_adb`` are in tests/conftest.py.)

The sims run the real virtual phone (``phone_agent.sim.android.VirtualPhone``): screenshots, taps
and UI dumps in these tests are the real ones.
"""

from __future__ import annotations

import shutil

import pytest

from tests.sim.raw_host import RawHost

ADB = shutil.which("adb") or "/usr/bin/adb"


@pytest.fixture
async def sim(make_sim, host_key):
    """A sim (auth accept, control endpoint on) that already trusts ``host_key``."""
    server = await make_sim()
    server.trust_key(host_key.public_key("tests@sim"))
    return server


@pytest.fixture
async def raw_host(sim, host_key):
    """An online raw host connection to ``sim``."""
    host = await RawHost.connect(sim.port)
    await host.handshake(host_key)
    try:
        yield host
    finally:
        await host.close()
