"""Channel A end to end: the mcp SDK's stdio client → `phone-agent mcp` → WebSocket → Pyodide page.

Everything here is real: the SDK client spawns the installed console script, the page is the project's
page booted in Chromium, and the answers come from Python in that page.
"""

from __future__ import annotations

import asyncio
import json
import re
import time

import pytest
from playwright.async_api import expect

from phone_agent.sim.server import SimulatedPhoneServer
from phone_agent.tools.catalog import listed_tools
from tests.support import (
    ServedPhoneAgent,
    eventually,
    free_port,
    mcp_stdio_session,
    open_page,
    page_link,
    result_text,
)

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
        # No page has paired with this server yet: answered at once, with the command that prints the link.
        assert result_text(before) == (
            "Browser not connected. Open the phone-agent page first. No phone-agent page has connected since "
            f"the server started: run `phone-agent url --port {port}` and open the link it prints in Chrome."
        )

        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert list(listed) == [spec.name for spec in listed_tools()]
        for name, tool in listed.items():
            assert tool.input_schema == {spec.name: spec for spec in listed_tools()}[name].input_schema
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
                # The card says what the page does, in the button's own words: no "retries every 30 s".
                assert "press Reconnect now" in await first.text_content("#relay-state")
                retry = await first.text_content("#relay-retry") or ""
                assert retry == "stopped: this page does not retry until you press Reconnect now", retry
                retry = await second.text_content("#relay-retry") or ""
                assert retry.startswith("if the link drops: at once"), retry
                assert await second.text_content("#relay-reconnect") == "Reconnect now"
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


@pytest.fixture
def stranger(tmp_path):
    """A phone-agent of another config directory (another pairing secret) serving the page."""
    server = ServedPhoneAgent(env={"PHONE_AGENT_HOME": str(tmp_path / "another-home")})
    yield server
    server.stop()


async def test_the_badge_follows_the_server_and_foreign_origins_need_allow_origin_and_a_pairing_code(
    browser, stranger, phone_agent_home
):
    # The page comes from another phone-agent, of another config directory (so it does not share the
    # pairing secret), and its relay is named with ?relay=.
    served = stranger
    port = free_port()
    url = f"{served.base}/?relay=ws://127.0.0.1:{port}/relay&relayRetryMs=300"
    relay_args = ("--port", str(port), "--self-check-delay", "0")
    log = phone_agent_home / "state" / f"server-{port}.log"
    # Opened without the page's link (the stranger's token is not this session's).
    async with open_page(browser, url, allowed_console=(REFUSED,), link=False) as (page, _watch):
        await wait_badge(page, ready=False)
        assert await page.text_content("#relay-url") == f"ws://127.0.0.1:{port}/relay"

        async with mcp_stdio_session(*relay_args):
            await asyncio.sleep(1.0)  # several retries: each is refused at the handshake (wrong Origin)
            await wait_badge(page, ready=False)

        async with mcp_stdio_session(*relay_args, "--allow-origin", served.base) as session:
            # Allowed, but not paired: the server shows a code on its console, the page asks for it.
            await page.wait_for_selector("#relay-pair", state="visible", timeout=15_000)
            await wait_badge(page, ready=False)
            code = await eventually(lambda: _pairing_code(log), timeout_s=15)
            await page.fill("#relay-pair-code", "000000" if code != "000000" else "111111")
            await page.click("#relay-pair button[type=submit]")
            await asyncio.sleep(1.0)  # a wrong code pairs nothing
            await wait_badge(page, ready=False)
            await page.fill("#relay-pair-code", code)
            await page.click("#relay-pair button[type=submit]")
            await wait_badge(page, ready=True)
            assert await page.locator("#relay-pair").is_hidden()
            result = await session.call_tool("get_device_status", {})
            assert json.loads(result_text(result)) == {"connected": False}
        # Leaving the block stopped the server: the badge grays.
        await wait_badge(page, ready=False)
        assert await page.text_content("#relay-state") == "disconnected"

        # A new server run: the page remembered its pairing and needs no code again.
        async with mcp_stdio_session(*relay_args, "--allow-origin", served.base) as session:
            await wait_badge(page, ready=True)
            assert await page.locator("#relay-pair").is_hidden()
            result = await session.call_tool("get_device_status", {})
            assert json.loads(result_text(result)) == {"connected": False}


async def _pairing_code(log) -> str | None:
    match = re.findall(r"type the pairing code (\d{6})", log.read_text() if log.exists() else "")
    return match[-1] if match else None


async def test_a_page_left_open_is_found_at_once_by_a_client_that_starts_a_new_server(browser):
    # The page's default retry (30 s): after losing its server it retries at once, then backs off 1, 2,
    # 4 … s, so a client starting a new server a few seconds later finds the page paired again within
    # seconds (a call before that answers at once: no page has paired with the new server yet).
    port = free_port()
    args = ("--port", str(port), "--self-check-delay", "0")
    page, context = await _open_kept_page(browser, port, args)
    try:
        await asyncio.sleep(3)  # the server is gone; the page keeps trying, less and less often
        await wait_badge(page, ready=False)
        # On a loaded machine the server alone may take 15 s to start: a 20 s page wait for the call.
        async with mcp_stdio_session(*args) as session:
            started = time.monotonic()
            await wait_badge(page, ready=True)  # the page found the new server by itself
            result = await session.call_tool("get_device_status", {})
        assert not result.is_error, result_text(result)
        assert json.loads(result_text(result)) == {"connected": False}
        assert time.monotonic() - started < 20
    finally:
        await context.close()


async def _open_kept_page(browser, port: int, args: tuple[str, ...]):
    """A page of a server that then stops: the page stays open, its server gone."""
    context = await browser.new_context()
    page = await context.new_page()
    async with mcp_stdio_session(*args):
        await page.goto(page_link(f"http://127.0.0.1:{port}/"))
        await page.wait_for_selector("html[data-state=ready]", timeout=60_000, state="attached")
        await wait_badge(page, ready=True)
    return page, context


async def test_a_replaced_page_cancels_its_calls_in_progress(browser, make_sim):
    sim = await make_sim()
    port = free_port()
    url = f"http://127.0.0.1:{port}/?relayRetryMs=300&device=tcp:127.0.0.1:{sim.port}"
    async with mcp_stdio_session("--port", str(port), "--self-check-delay", "0") as session:
        async with open_page(browser, url) as (first, watch):
            await wait_badge(first, ready=True)
            await first.wait_for_selector("html[data-phone=connected]", state="attached", timeout=30_000)
            waiting = asyncio.create_task(
                session.call_tool(
                    "wait_for", {"target": "text=Never shown", "condition": "visible", "timeoutMs": 25_000}
                )
            )
            await asyncio.sleep(1.0)  # the call is running in the first page
            async with open_page(browser, url) as (second, _watch2):
                await wait_badge(second, ready=True)
                result = await asyncio.wait_for(waiting, 10)
                assert result.is_error and result.structured_content["code"] == "browser_replaced"
                # No one can receive the first page's answer any more: it stopped working on the call.
                await eventually(
                    lambda: _logged(watch, "warning", "[MCP relay] the relay closed; cancelled 1 call(s)")
                )


async def _logged(watch, level: str, text: str) -> bool:
    return watch.logged(level, text)
