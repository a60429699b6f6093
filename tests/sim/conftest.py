"""Fixtures for the simulated phone: a raw host connection. (The test's phone ``sim``, ``make_sim``,
``host_key`` and the isolated Debian adb server ``debian_adb`` are in tests/conftest.py.)

The sims run the real virtual phone (``phone_agent.sim.android.VirtualPhone``): screenshots, taps
and UI dumps in these tests are the real ones.
"""

from __future__ import annotations

import shutil

import pytest

from tests.sim.raw_host import RawHost

ADB = shutil.which("adb") or "/usr/bin/adb"


@pytest.fixture
async def raw_host(sim, host_key):
    """An online raw host connection to ``sim``."""
    host = await RawHost.connect(sim.port)
    await host.handshake(host_key)
    try:
        yield host
    finally:
        await host.close()
