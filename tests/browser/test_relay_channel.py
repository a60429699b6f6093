"""Channel A end to end: the mcp SDK's stdio client → `phone-agent mcp` → WebSocket → Pyodide page.

Everything here is real: the SDK client spawns the installed console script, the page is the project's
page booted in Chromium, and the answers come from Python in that page.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from playwright.async_api import expect

from phone_agent.sim.server import SimulatedPhoneServer
from phone_agent.tools import TOOL_NAMES, TOOLS_BY_NAME
from tests.support import eventually, free_port, mcp_stdio_session, open_page, result_text

pytestmark = pytest.mark.browser

READY = "MCP Relay connected: OpenClaw / Qoder can call the phone Agent"
OFF = "MCP Relay disconnected: please start the local MCP server (phone-agent mcp)"
REFUSED = r"WebSocket connection to .* failed"


async def badge(page) -> tuple[str, str]:
    badge = page.locator("#relay-badge")
    return await badge.get_attribute("class"), await badge.get_attribute("title")


async def wait_badge(page, ready: bool) -> None:
    wanted = ("mcp-badge--ready", READY) if ready else ("mcp-badge--off", OFF)

    async def check():
        classes, title = await badge(page)
        return wanted[0] in classes.split() and title == wanted[1]

    await eventually(check, timeout_s=15)


async def test_an_external_client_reaches_the_page_for_every_tool(browser):
    port = free_port()
    async with mcp_stdio_session("--port", str(port), "--self-check-delay", "0.5") as session:
        before = await session.call_tool("get_device_status", {})
        assert before.is_error is True
        assert result_text(before) == "Browser not connected. Open the WebADB page first."

        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert list(listed) == list(TOOL_NAMES)
        for name, tool in listed.items():
            assert tool.input_schema == TOOLS_BY_NAME[name].input_schema
        assert listed["run_agent_task"].annotations.destructive_hint is True
        assert listed["take_screenshot"].annotations.read_only_hint is True

        async with open_page(browser, f"http://127.0.0.1:{port}/?relayRetryMs=500") as (page, _watch):
            await wait_badge(page, ready=True)
            status = await session.call_tool("get_device_status", {})
            assert not status.is_error
            assert json.loads(result_text(status)) == {"connected": False}
            assert status.structured_content == {"connected": False}

            expected = {
                "take_screenshot": "No phone device connected.",
                "abort_task": "No task is currently running.",
                "get_latest_task": "No agent task has run in this page yet.",
            }
            for name, message in expected.items():
                result = await session.call_tool(name, {})
                assert result.is_error is True and result_text(result) == message
                assert result.structured_content["remedy"]
            run = await session.call_tool("run_agent_task", {"goal": "Open Settings"})
            assert run.is_error and result_text(run) == "No phone device connected."
            missing = await session.call_tool("get_task_result", {"taskId": "t-404"})
            assert missing.is_error and "t-404" in result_text(missing)

            # The server validates before forwarding; the page validates again on its own (Channel B).
            bad = await session.call_tool("run_agent_task", {"timeoutMs": 5})
            assert bad.is_error and '"goal" is required' in result_text(bad)

            # The relay's self-check and our calls all reached the page's own dispatch.
            rows = page.locator("#activity .activity__row")
            await eventually(lambda: _row_count_at_least(rows, 6))
            assert "A · relay" in await rows.first.text_content()


async def _row_count_at_least(rows, n: int) -> bool:
    return await rows.count() >= n


async def test_a_second_page_replaces_the_first_and_a_reload_reconnects(browser):
    port = free_port()
    url = f"http://127.0.0.1:{port}/?relayRetryMs=300"
    async with mcp_stdio_session("--port", str(port), "--self-check-delay", "0") as session:
        async with open_page(browser, url) as (first, _watch1):
            await wait_badge(first, ready=True)
            async with open_page(browser, url) as (second, _watch2):
                await wait_badge(second, ready=True)
                await wait_badge(first, ready=False)
                assert "taken over" in await first.text_content("#relay-state")
                # The replaced page does not fight back on its own, even after several retry periods.
                await asyncio.sleep(1.2)
                assert "mcp-badge--ready" in (await badge(second))[0]
                result = await session.call_tool("get_device_status", {})
                assert json.loads(result_text(result)) == {"connected": False}
                await expect(second.locator("#activity .activity__row")).to_have_count(1)
                assert await first.locator("#activity .activity__row").count() == 0

                await second.reload()
                await second.wait_for_selector("html[data-state=ready]", state="attached", timeout=60_000)
                await wait_badge(second, ready=True)
                again = await session.call_tool("get_device_status", {})
                assert not again.is_error

                # Pressing Reconnect on the first page takes the relay back.
                await first.click("#relay-reconnect")
                await wait_badge(first, ready=True)
                await wait_badge(second, ready=False)


async def test_a_call_past_its_time_limit_ends_with_the_timeout_error(browser):
    # A phone whose screencap takes 0.6 s (real phones take 1-3 s) against a 200 ms limit.
    sim = SimulatedPhoneServer("127.0.0.1", free_port())
    real_run = sim.phone.run

    def slow_run(argv, stdin, fs):
        if argv[:1] == ["screencap"]:
            time.sleep(0.6)  # the sim runs phone commands in worker threads
        return real_run(argv, stdin, fs)

    sim.phone.run = slow_run
    await sim.start()
    port = free_port()
    args = ("--port", str(port), "--self-check-delay", "0", "--tool-timeout", "take_screenshot=200")
    url = f"http://127.0.0.1:{port}/?relayRetryMs=300&device=tcp:127.0.0.1:{sim.port}"
    try:
        async with mcp_stdio_session(*args) as session:
            async with open_page(browser, url) as (page, _watch):
                await wait_badge(page, ready=True)
                await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=30_000)
                await page.uncheck("#live-toggle")
                result = await session.call_tool("take_screenshot", {})
                assert result.is_error is True
                assert result_text(result) == 'Tool "take_screenshot" timed out after 200ms'
                assert result.structured_content["code"] == "timeout"
                # Other tools keep their own limits and still answer.
                status = await session.call_tool("get_device_status", {})
                assert json.loads(result_text(status))["connected"] is True
    finally:
        await sim.close()


async def test_the_badge_follows_the_server_and_foreign_origins_need_allow_origin(browser, served):
    # The page comes from one phone-agent (served) and its relay is another, named with ?relay=.
    port = free_port()
    url = f"{served.base}/?relay=ws://127.0.0.1:{port}/relay&relayRetryMs=300"
    relay_args = ("--port", str(port), "--self-check-delay", "0")
    async with open_page(browser, url, allowed_console=(REFUSED,)) as (page, _watch):
        await wait_badge(page, ready=False)
        assert await page.text_content("#relay-url") == f"ws://127.0.0.1:{port}/relay"

        async with mcp_stdio_session(*relay_args):
            await asyncio.sleep(1.0)  # several retries: each is refused at the handshake (wrong Origin)
            await wait_badge(page, ready=False)

        async with mcp_stdio_session(*relay_args, "--allow-origin", served.base) as session:
            await wait_badge(page, ready=True)
            result = await session.call_tool("get_device_status", {})
            assert json.loads(result_text(result)) == {"connected": False}
        # Leaving the block closed the client's stdin: the server exits, frees the port, the badge grays.
        await wait_badge(page, ready=False)
        assert await page.text_content("#relay-state") == "disconnected"

        async with mcp_stdio_session(*relay_args, "--allow-origin", served.base) as session:
            await wait_badge(page, ready=True)
