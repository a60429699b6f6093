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
from phone_agent.sim.server import SimulatedPhoneServer
from tests.support import KeptPage, free_port, mcp_stdio_session

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
async def rig(browser, debian_adb):
    sim = SimulatedPhoneServer("127.0.0.1", free_port(), hierarchy=True)  # app_process for u2, no scrcpy
    await sim.start()
    port = free_port()
    url = f"http://127.0.0.1:{port}/?device=tcp:127.0.0.1:{sim.port}&relayRetryMs=300&scrcpy=0"
    ready: asyncio.Future = asyncio.get_running_loop().create_future()
    done = asyncio.Event()

    async def hold_session() -> None:
        try:
            async with mcp_stdio_session("--port", str(port), "--self-check-delay", "0") as session:
                ready.set_result(session)
                await done.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    holder = asyncio.ensure_future(hold_session())
    session = await asyncio.wait_for(ready, 60)

    async def prepare(page) -> None:
        await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=30_000)
        await page.uncheck("#live-toggle")
        for _ in range(100):
            status = await session.call_tool("get_device_status", {})
            if not status.is_error:
                break
            await asyncio.sleep(0.1)

    kept = KeptPage(browser, url, prepare=prepare)
    try:
        serial = f"127.0.0.1:{sim.port}"
        await debian_adb.output("connect", serial)
        assert await debian_adb.wait_for_state(serial, "device") == "device"
        await kept.get()
        yield sim, session, debian_adb, serial
        await debian_adb.output("disconnect", serial)
        if kept.watch is not None and not kept.watch.gone:
            kept.watch.assert_clean()
    finally:
        await kept.close()
        done.set()
        await asyncio.wait_for(holder, 30)
        await sim.close()


async def _call(session, tool: str, **args) -> dict:
    answer = await session.call_tool(tool, args)
    result = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
    assert not result.get("isError"), result
    return result["structuredContent"]


async def test_the_page_reads_the_tree_through_the_server_and_recovers_it(rig):
    sim, session, adb, serial = rig
    sim.phone.reset()
    listed = await _call(session, "list_elements")
    assert listed["treeSource"] == "hierarchy-server", listed
    assert "treeNote" not in listed
    assert hashlib.md5(sim.fs.read_file(JAR_PATH)).hexdigest() == JAR_MD5  # pushed by the page
    (process,) = sim.hierarchy.running()

    # a tap by ref on the tree just read: no second read of the screen
    settings = next(e for e in listed["elements"] if e["text"] == "Settings")
    dumps = sim.hierarchy.dumps
    await _call(session, "tap", target=settings["ref"])
    assert sim.hierarchy.dumps == dumps
    assert sim.phone.current == "com.android.settings"
    # the next look waits for the screen to settle (the server's wait for idle) and says so
    after = await _call(session, "list_elements")
    assert isinstance(after["settledMs"], int) and after["treeSource"] == "hierarchy-server"
    skipped = await _call(session, "take_screenshot", settle=False)
    assert skipped["settledMs"] == 0

    # killed from Debian's adb: restarted once, and the answer says so
    await adb.output("-s", serial, "shell", f"kill {process.pid}")
    await asyncio.wait_for(process.ended.wait(), 10)
    restarted = await _call(session, "list_elements")
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
        fallback = await _call(session, "list_elements")
        assert fallback["treeSource"] == "uiautomator-dump"
        assert "already registered" in fallback["treeNote"], fallback
        assert any(e["text"] for e in fallback["elements"])
    finally:
        other.kill()
        await other.wait()
