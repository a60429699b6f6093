"""The hierarchy server on ``--realistic``: a look costs one dump by the running server (~0.1 s, not
``uiautomator dump``'s ≥ 1 s), it reads the screen while an animation runs (where the dump refuses
with "could not get idle state"), its wait for idle ends when the animation has, and the dump fallback
gets through an animation by retrying with backoff."""

from __future__ import annotations

import time

from phone_agent.adb.device import AdbDevice
from phone_agent.device.interface import TREE_SERVER
from phone_agent.sim.realistic import HIERARCHY_IDLE_QUIET_S, RealisticProfile
from tests.adb_host.test_hierarchy import jar  # noqa: F401  (the fixture)

SIM_OPTIONS = {"scrcpy": True, "realistic": RealisticProfile(seed=19)}


async def test_the_server_reads_fast_and_through_animations_and_waits_for_idle(client, sim, jar):  # noqa: F811
    device = AdbDevice(client, transport="tcp", hierarchy_jar=jar)
    motion = sim.phone.motion
    try:
        assert (await device.ui_tree()).source == TREE_SERVER  # starts it (a real start's cost)
        await device.open_app("com.android.settings")  # a launch, then the transition
        assert motion.animating()
        started = time.monotonic()
        tree = await device.ui_tree()
        took = time.monotonic() - started
        assert tree.source == TREE_SERVER and tree.note == ""
        high = motion.profile.costs["hierarchy_dump"].high
        assert took < high + 0.25, took  # one dump by the server, no idle wait, no process start
        assert await device.wait_settled(5000) is True
        assert time.monotonic() >= motion.busy_until + HIERARCHY_IDLE_QUIET_S - 0.05
        assert not motion.animating()
    finally:
        await device.hierarchy.close()


async def test_the_dump_fallback_retries_could_not_get_idle_state_with_backoff(client, sim):
    device = AdbDevice(client, transport="tcp")  # no jar: uiautomator dump only
    motion = sim.phone.motion
    await device.open_app("com.android.settings")
    assert motion.animating()
    result = await device.shell("uiautomator dump /sdcard/x.xml")
    assert b"could not get idle state" in result.stdout + result.stderr  # what the fallback meets
    motion._busy(time.monotonic() + 1.2)  # an animation longer than one dump's connect
    started = time.monotonic()
    nodes = await device.ui_nodes()  # refused while it runs, retried with backoff, then read
    assert nodes and any(n.text for n in nodes)
    assert time.monotonic() - started >= 1.2 and not motion.animating()
