"""A hostile phone cannot crash the page (issue 33, item 5; issue 35, item 5): a UI tree 100,000 levels
deep, or 50,000 nodes wide, sent by the simulated phone's hierarchy server (its ``deep-tree`` and
``wide-tree`` hostile modes), is read by the page's Python
(Pyodide's small stack) without recursion, in part, with a note saying what was left out — and the page
answers the next call as before."""

from __future__ import annotations

import asyncio

import pytest

from phone_agent.adb.ui_dump import MAX_TREE_NODES
from phone_agent.sim.server import SimulatedPhoneServer
from tests.support import KeptPage, free_port, mcp_stdio_session

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
async def rig(browser):
    sim = SimulatedPhoneServer("127.0.0.1", free_port(), hierarchy=True)
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
        await kept.get()
        yield sim, session, kept
        if kept.watch is not None and not kept.watch.gone:
            kept.watch.assert_clean()
    finally:
        await kept.close()
        done.set()
        await asyncio.wait_for(holder, 30)
        await sim.close()


async def _answer(session, tool: str, **args) -> dict:
    answer = await session.call_tool(tool, args)
    return answer.model_dump(by_alias=True, mode="json", exclude_none=True)


@pytest.mark.parametrize("hostile", ["deep", "wide"])
async def test_a_hostile_tree_is_read_in_part_and_the_page_answers_the_next_call(rig, hostile):
    sim, session, kept = rig
    sim.phone.reset()
    sim.set_hostile([f"{hostile}-tree"])  # sim/hostile.py: 100,000 levels deep, or 50,000 nodes wide
    try:
        answer = await _answer(session, "list_elements", maxElements=5)
    finally:
        sim.set_hostile([])
    if answer.get("isError"):  # refused whole: a clear error that names the bound it met
        error = answer["structuredContent"]
        assert error["code"] == "device_error" and ("cap" in error["message"] or "bytes" in error["message"])
    else:
        listed = answer["structuredContent"]
        assert "left out" in listed["treeNote"], listed.get("treeNote")
        if hostile == "wide":
            assert listed["total"] == MAX_TREE_NODES - 1 and listed["truncated"]
            assert len(listed["elements"]) == 5
            assert all(element["locator"] for element in listed["elements"])
    # The page lives on: the next calls are answered from the phone's real screen.
    again = await _answer(session, "list_elements")
    assert not again.get("isError"), again
    assert "treeNote" not in again["structuredContent"]
    assert any(e["text"] == "Settings" for e in again["structuredContent"]["elements"])
    status = await _answer(session, "get_device_status")
    assert not status.get("isError") and status["structuredContent"]["connected"] is True
    assert kept.watch is not None and not kept.watch.gone
