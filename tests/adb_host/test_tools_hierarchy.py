"""The device tools over the hierarchy server, in CPython (the page's one dispatch, our ADB client,
the simulated phone): list_elements says the server read the tree; a tap or a typing by ref or locator
right after it reads nothing again; after an action the next look reads afresh and says how long it
waited for the screen to settle (on --realistic: until the animation ended), unless ``settle: false``."""

from __future__ import annotations

import time

import pytest

from phone_agent.adb.device import AdbDevice
from phone_agent.sim.realistic import RealisticProfile
from phone_agent.tools.dispatch import ToolDispatcher
from tests.adb_host.test_device_tools import ok, ref_of
from tests.adb_host.test_hierarchy import jar  # noqa: F401  (the fixture)

SIM_OPTIONS = {"scrcpy": True}


@pytest.fixture
async def ctx(client, jar) -> ToolDispatcher:  # noqa: F811
    service = ToolDispatcher()
    service.device = AdbDevice(client, transport="tcp", hierarchy_jar=jar)
    yield service
    await service.device.hierarchy.close()


async def test_a_target_resolves_on_the_tree_just_read(ctx, sim):
    listed = await ok(ctx, "list_elements")
    assert listed["treeSource"] == "hierarchy-server" and listed["settledMs"] == 0
    reads = sim.hierarchy.dumps
    await ok(ctx, "tap", target=ref_of(listed, text="Settings"))
    assert sim.hierarchy.dumps == reads  # no second read for the ref
    assert sim.phone.current == "com.android.settings"
    # after the action: a locator makes a fresh read (the screen changed)
    await ok(ctx, "tap", target="text=Connected devices")
    assert sim.hierarchy.dumps == reads + 1
    # a listing, then a locator on it: one read for both
    listed = await ok(ctx, "list_elements")
    assert isinstance(listed["settledMs"], int)
    reads = sim.hierarchy.dumps
    await ok(ctx, "tap", target="text=Bluetooth")
    assert sim.hierarchy.dumps == reads and sim.phone.bluetooth


async def test_a_locator_missing_from_the_tree_just_read_is_looked_for_afresh(ctx, sim):
    await ok(ctx, "open_app", packageName="com.google.android.apps.messaging")
    listed = await ok(ctx, "list_elements")
    assert not [e for e in listed["elements"] if e.get("text") == "Settings"]
    sim.phone.reset()  # the screen changes without an action of ours (someone else, the phone itself)
    reads = sim.hierarchy.dumps
    await ok(ctx, "tap", target="text=Settings")  # not on the tree read before: read again
    assert sim.hierarchy.dumps == reads + 1 and sim.phone.current == "com.android.settings"


@pytest.fixture
async def realistic_ctx(make_sim, host_key, jar):  # noqa: F811
    from phone_agent.server.adb_tcp import connect_adbd

    sim = await make_sim(scrcpy=True, realistic=RealisticProfile(seed=7))
    sim.trust_key(host_key.public_key("tests@tools"))
    client = await connect_adbd("127.0.0.1", sim.port, host_key)
    service = ToolDispatcher()
    service.device = AdbDevice(client, transport="tcp", hierarchy_jar=jar)
    try:
        yield service, sim
    finally:
        await service.device.hierarchy.close()
        await client.close()


async def test_on_realistic_the_next_look_settles_after_the_transition(realistic_ctx):
    ctx, sim = realistic_ctx
    listed = await ok(ctx, "list_elements")
    await ok(ctx, "tap", target=ref_of(listed, text="Settings"))  # a launch and a transition
    motion = sim.phone.motion
    assert motion.animating()
    skipped = await ok(ctx, "take_screenshot", settle=False)
    assert skipped["settledMs"] == 0
    await ok(ctx, "press_key", key="back")
    await ok(ctx, "tap", target="text=Settings")
    assert motion.animating()
    listed = await ok(ctx, "list_elements")
    assert not motion.animating() and listed["settledMs"] > 0
    assert listed["treeSource"] == "hierarchy-server"
    assert ref_of(listed, text="Connected devices")
    assert time.monotonic() >= motion.busy_until
