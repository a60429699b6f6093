"""The device tools over the hierarchy server, in CPython (the page's one dispatch, our ADB client,
the simulated phone): list_elements says the server read the tree; a tap or a typing by ref or locator
right after it reads nothing again; after an action the next look reads afresh and says how long it
waited for the screen to settle (on --realistic: until the animation ended), unless ``settle: false``.
With the live view (scrcpy's frames, as the page has it) a look after an action that opened a new window
reads once, at once, while the transition still moves the pixels (a screenshot after it still waits for
them). A look after a change within the window (a list's fling) waits until the screen is still (here the
server's idle wait, as deterministic as the sim's clock) and never shows it half way."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from phone_agent.adb.device import AdbDevice
from phone_agent.scrcpy.client import ScrcpyClient
from phone_agent.scrcpy.device import ScrcpyDevice
from phone_agent.scrcpy.protocol import ScrcpyServerOptions
from phone_agent.sim.realistic import RealisticProfile
from phone_agent.tools.dispatch import ToolDispatcher
from tests.adb_host.test_device_tools import ok, ref_of
from tests.adb_host.test_hierarchy import jar  # noqa: F401  (the fixture)
from tests.support import ROOT, vendored

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


async def test_on_realistic_the_next_look_reads_a_new_window_at_once(realistic_ctx):
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
    reads = sim.hierarchy.dumps
    listed = await ok(ctx, "list_elements")
    # the focus moved to Settings and the tree holds it: read once, no wait for the transition's end
    assert listed["settledMs"] == 0 and sim.hierarchy.dumps == reads + 1
    assert listed["treeSource"] == "hierarchy-server"
    assert listed["app"]["packageName"] == "com.android.settings"
    assert ref_of(listed, text="Connected devices")


@pytest.fixture
async def live_ctx(make_sim, host_key, jar):  # noqa: F811
    """The realistic phone with the page's setup: the live view reads scrcpy's frames, input goes
    through its control socket, the hierarchy server reads the tree."""
    from phone_agent.server.adb_tcp import connect_adbd

    sim = await make_sim(scrcpy=True, realistic=RealisticProfile(seed=7))
    sim.trust_key(host_key.public_key("tests@tools"))
    sim.phone.clock = lambda: "12:00"  # the status bar stays as it is
    client = await connect_adbd("127.0.0.1", sim.port, host_key)
    server_jar = vendored(ROOT / "static" / "vendor" / "scrcpy" / "scrcpy-server", "the scrcpy server")
    scrcpy = ScrcpyClient(client, server_jar, ScrcpyServerOptions(max_size=512, max_fps=30))
    await scrcpy.start()

    async def view() -> None:  # the live view reads every frame
        with contextlib.suppress(Exception):
            while True:
                await scrcpy.read_packets()

    viewer = asyncio.ensure_future(view())
    plain = AdbDevice(client, transport="tcp", hierarchy_jar=jar)
    service = ToolDispatcher()
    service.device = ScrcpyDevice(plain, scrcpy, (1080, 2400))
    try:
        yield service, sim
    finally:
        viewer.cancel()
        await asyncio.gather(viewer, return_exceptions=True)
        await plain.hierarchy.close()
        await scrcpy.close()
        await client.close()


async def test_with_the_live_view_a_new_window_is_read_once_during_its_transition(live_ctx):
    ctx, sim = live_ctx
    listed = await ok(ctx, "list_elements")
    assert listed["app"]["packageName"] == "com.google.android.apps.nexuslauncher"
    reads = sim.hierarchy.dumps
    await ok(ctx, "tap", x=540, y=1300)  # nothing there: the same screen (read once or, after a
    same = await ok(ctx, "list_elements")  # frame repeating the still screen came, twice)
    assert same["elements"] == listed["elements"]
    listed, reads = same, sim.hierarchy.dumps
    await ok(ctx, "tap", target=ref_of(listed, text="Settings"))  # a cold launch, then its transition
    listed = await ok(ctx, "list_elements")
    # the new window's tree (never the launcher's from before the tap), read once, without a wait
    assert listed["app"]["packageName"] == "com.android.settings"
    assert ref_of(listed, text="Connected devices")
    assert sim.hierarchy.dumps == reads + 1 and listed["settledMs"] == 0
    moving = sim.phone.motion.animating()
    shot = await ok(ctx, "take_screenshot")  # the pixels were not waited for: a screenshot waits
    assert shot["settledMs"] > 0 or not moving
    await ok(ctx, "tap", target=ref_of(listed, text="Connected devices"))  # another activity
    listed = await ok(ctx, "list_elements")
    assert listed["app"]["activityName"] != "com.android.settings.Settings"
    assert any(element["role"] == "switch" for element in listed["elements"])
    assert sim.hierarchy.dumps == reads + 2 and listed["settledMs"] == 0


async def test_a_change_within_the_window_is_read_once_it_ended(realistic_ctx):
    ctx, sim = realistic_ctx
    motion = sim.phone.motion
    await ok(ctx, "open_app", packageName="com.phoneagent.catalog")
    await ok(ctx, "list_elements")
    await ok(ctx, "swipe", startX=540, startY=1900, endX=540, endY=900, durationMs=300)
    assert motion.animating()  # the list flings on after the finger lifts: the focus stays
    listed = await ok(ctx, "list_elements")
    assert not motion.animating() and listed["settledMs"] > 0  # it waited for the fling to end
    scrolled = sim.phone.catalog_scroll
    assert scrolled > 1000
    again = await ok(ctx, "list_elements")  # nothing moved since: the same elements where they were
    assert sim.phone.catalog_scroll == scrolled
    assert [(e.get("text"), e["bounds"]) for e in listed["elements"]] == [
        (e.get("text"), e["bounds"]) for e in again["elements"]
    ]
