"""The page reads the screen through the hierarchy server (u2.jar) it starts on the simulated phone
over its own ADB connection (no ``adb forward``): list_elements through the MCP SDK's stdio client
answers ``treeSource: hierarchy-server``; a tap by ref right after reads nothing again; a look after an
action says how long it waited for the screen to settle; a server killed from Debian's adb is
restarted once and the answer says so; another UiAutomation user on the phone means the
``uiautomator dump`` fallback, with the reason."""

from __future__ import annotations

import asyncio
import hashlib

import pytest

from phone_agent.adb.hierarchy_protocol import JAR_MD5, JAR_PATH, start_command
from tests.browser.rigs import PhoneRig, PhoneRigSpec

pytestmark = pytest.mark.browser


# app_process for u2, no scrcpy (and the live view on screenshots); alone: its last act leaves the page
# reading the tree by uiautomator dump (another UiAutomation user holds the phone)
RIG = PhoneRigSpec(sim={"hierarchy": True}, query="&scrcpy=0", alone=True)


async def test_the_page_reads_the_tree_through_the_server_and_recovers_it(fresh: PhoneRig):
    sim, adb, serial = fresh.sim, fresh.adb, fresh.serial
    listed = await fresh.ok("mcp", "list_elements")
    assert listed["treeSource"] == "hierarchy-server", listed
    assert "treeNote" not in listed
    assert hashlib.md5(sim.fs.read_file(JAR_PATH)).hexdigest() == JAR_MD5  # pushed by the page
    (process,) = sim.hierarchy.running()

    # a tap by ref on the tree just read: no second read of the screen
    settings = next(e for e in listed["elements"] if e.get("text") == "Settings")
    dumps = sim.hierarchy.dumps
    await fresh.ok("mcp", "tap", target=settings["ref"])
    assert sim.hierarchy.dumps == dumps
    assert sim.phone.current == "com.android.settings"
    # the next look waits for the screen to settle (the server's wait for idle) and says so
    after = await fresh.ok("mcp", "list_elements")
    assert isinstance(after["settledMs"], int) and after["treeSource"] == "hierarchy-server"
    skipped = await fresh.ok("mcp", "take_screenshot", settle=False)
    assert skipped["settledMs"] == 0

    # killed from Debian's adb: restarted once, and the answer says so
    await adb.output("-s", serial, "shell", f"kill {process.pid}")
    await asyncio.wait_for(process.ended.wait(), 10)
    restarted = await fresh.ok("mcp", "list_elements")
    assert restarted["treeSource"] == "hierarchy-server"
    assert "restarted" in restarted["treeNote"], restarted

    # another UiAutomation user: ours is stopped, someone else's runs on 9009 → the dump, with why
    (ours,) = sim.hierarchy.running()
    ours.stop()
    other = await asyncio.create_subprocess_exec(
        "adb", "-P", str(adb.port), "-s", serial, "shell", start_command(9009),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=adb.env,
    )  # fmt: skip
    try:
        for _ in range(100):
            if sim.hierarchy.running():
                break
            await asyncio.sleep(0.05)
        fallback = await fresh.ok("mcp", "list_elements")
        assert fallback["treeSource"] == "uiautomator-dump"
        assert "already registered" in fallback["treeNote"], fallback
        assert any(e.get("text") for e in fallback["elements"])
    finally:
        other.kill()
        await other.wait()
