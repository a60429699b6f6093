"""Only the user's browser pairs: the page opened with its link (``phone-agent url``) trades the token
for an HttpOnly, SameSite=Strict cookie, takes it out of the address bar, and pairs, across reloads and
restarts; a local script that forges a browser's headers is refused meanwhile; a page opened without
the link says how to get it and pairs by the console's code."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess

import pytest

from phone_agent.relay.frames import CLOSE_UNPAIRED, HelloFrame, PairFrame
from tests.browser.test_relay_channel import REFUSED, wait_badge
from tests.server.harness import Peer
from tests.support import (
    eventually,
    free_port,
    mcp_stdio_session,
    open_page,
    phone_agent_command,
    result_text,
    webmcp_call,
)

pytestmark = pytest.mark.browser


def printed_link(port: int) -> str:
    done = subprocess.run(
        [phone_agent_command(), "url", "--port", str(port)], capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


async def forged_script_is_refused(port: int) -> None:
    """A local process without the token file: reads /api/config with a browser's headers, poses as
    the page with the server's Origin; it learns no secret and is closed unpaired."""
    import urllib.request

    headers = {
        "Origin": f"http://127.0.0.1:{port}",
        "Sec-Fetch-Site": "same-origin",
        "Sec-Fetch-Mode": "cors",
        "Referer": f"http://127.0.0.1:{port}/",
    }
    request = urllib.request.Request(f"http://127.0.0.1:{port}/api/config", headers=headers)
    with urllib.request.urlopen(request, timeout=10) as response:
        config = json.loads(response.read())
    assert "pairing" not in config and config["pageKey"] is False
    for hello in (HelloFrame(config.get("pairing") or "").to_wire(), PairFrame("000000").to_wire()):
        peer = await Peer.connect(port, hello=hello)
        try:
            assert await peer.wait_closed(timeout=15) == CLOSE_UNPAIRED
        finally:
            await peer.close()


async def test_the_page_opened_with_its_link_pairs_and_a_forging_script_does_not(browser):
    port = free_port()
    args = ("--port", str(port), "--self-check-delay", "0")
    async with mcp_stdio_session(*args) as session:
        link = await asyncio.to_thread(printed_link, port)
        assert re.fullmatch(rf"http://127\.0\.0\.1:{port}/\?token=[A-Za-z0-9_-]{{43,}}", link)
        async with open_page(browser, link, link=False) as (page, _watch):
            await wait_badge(page, ready=True)
            # The token left the address bar (and the history entry); the cookie is out of scripts' reach.
            assert page.url == f"http://127.0.0.1:{port}/"
            assert "token" not in await page.evaluate("location.href + JSON.stringify(history.state)")
            cookies = [c for c in await page.context.cookies() if c["name"] == f"phone-agent-page-{port}"]
            assert len(cookies) == 1 and cookies[0]["httpOnly"] and cookies[0]["sameSite"] == "Strict"
            assert "phone-agent-page" not in await page.evaluate("document.cookie")

            await forged_script_is_refused(port)
            # The script's attempts did not take the relay from the page: calls still reach it.
            await wait_badge(page, ready=True)
            result = await session.call_tool("get_device_status", {})
            assert json.loads(result_text(result)) == {"connected": False}

            # A reload keeps the pairing (the cookie stays; the link is not needed again).
            await page.reload()
            await page.wait_for_selector("html[data-state=ready]", state="attached", timeout=60_000)
            await wait_badge(page, ready=True)
            assert await page.locator("#relay-pair").is_hidden()


async def test_a_page_opened_without_the_link_says_how_to_get_it_and_pairs_by_the_code(
    browser, phone_agent_home
):
    port = free_port()
    log = phone_agent_home / "state" / f"server-{port}.log"
    async with mcp_stdio_session("--port", str(port), "--self-check-delay", "0") as session:
        url = f"http://127.0.0.1:{port}/?relayRetryMs=300"
        async with open_page(browser, url, link=False, allowed_console=(REFUSED,)) as (page, _watch):
            await page.wait_for_selector("#relay-pair", state="visible", timeout=15_000)
            await wait_badge(page, ready=False)
            help_text = await page.text_content("#relay-pair-help")
            assert "phone-agent url" in help_text and "code" in help_text
            # The top of the page says so too, with the one thing to do.
            banner = page.locator("#pair-banner")
            assert await banner.is_visible()
            assert (await banner.text_content()).strip() == (
                "Not paired with phone-agent: MCP clients cannot reach this page. Open the link that "
                "`phone-agent url` prints (it carries the page's token)."
            )
            box = await banner.bounding_box()
            assert box is not None and box["y"] == 0  # at the very top

            def code() -> str | None:
                found = re.findall(r"type the pairing code (\d{6})", log.read_text() if log.exists() else "")
                return found[-1] if found else None

            async def shown() -> str | None:
                return code()

            await page.fill("#relay-pair-code", await eventually(shown, timeout_s=15))
            await page.click("#relay-pair button[type=submit]")
            await wait_badge(page, ready=True)
            assert await page.locator("#relay-pair").is_hidden()
            assert await page.locator("#pair-banner").is_hidden()  # paired: nothing left to do
            result = await session.call_tool("get_device_status", {})
            assert json.loads(result_text(result)) == {"connected": False}


async def test_a_page_of_another_browser_that_replaces_one_mid_task_answers_its_record(browser, make_sim):
    """One truth across tabs of different browsers (profiles: no shared IndexedDB): the server keeps the
    records its pages store, so the new page's get_latest_task, through either channel, is the old
    page's record of the task it ran (``aborted``)."""
    from tests.agent.model_server import ScriptedModelServer, stalling_script

    sim = await make_sim()
    port = free_port()
    model = await ScriptedModelServer(allow_origin=f"http://127.0.0.1:{port}").start()
    model.add(*stalling_script())
    url = f"http://127.0.0.1:{port}/?device=tcp:127.0.0.1:{sim.port}&relayRetryMs=300&agentSettleMs=0"
    args = (
        "--port",
        str(port),
        "--self-check-delay",
        "0",
        "--model-base-url",
        model.base_url,
        "--model",
        "m",
    )
    allowed = (REFUSED, r"Failed to load resource")
    try:
        async with mcp_stdio_session(*args) as session:
            async with open_page(browser, url, allowed_console=allowed) as (first, _first_watch):
                await wait_badge(first, ready=True)
                await first.wait_for_selector("html[data-phone=connected]", state="attached", timeout=30_000)
                await first.uncheck("#live-toggle")
                running = asyncio.create_task(session.call_tool("run_agent_task", {"goal": "Open Settings"}))

                async def agent_running() -> bool:
                    return await first.get_attribute("html", "data-agent") == "running"

                await eventually(agent_running, timeout_s=30)
                await eventually(lambda: _at_least(model, 4), timeout_s=30)  # step 2: the model stalls
                task_id = await first.evaluate("document.querySelector('.chat-task').dataset.taskId")

                async with open_page(browser, url, allowed_console=allowed) as (second, _second_watch):
                    await wait_badge(second, ready=True)
                    replaced = await asyncio.wait_for(running, 30)
                    assert replaced.is_error

                    async def first_says_aborted() -> dict | None:
                        seen = await webmcp_call(first, "get_latest_task", {})
                        record = json.loads(seen["content"][0]["text"])
                        return record if record["status"] == "aborted" else None

                    told_by_first = await eventually(first_says_aborted, timeout_s=20)
                    assert told_by_first["taskId"] == task_id

                    async def second_agrees() -> dict | None:
                        latest = await session.call_tool("get_latest_task", {})
                        if latest.is_error:
                            return None
                        record = json.loads(result_text(latest))
                        return record if record["status"] == "aborted" else None

                    over_relay = await eventually(second_agrees, timeout_s=20)
                    in_page = json.loads(
                        (await webmcp_call(second, "get_latest_task", {}))["content"][0]["text"]
                    )
                    for record in (over_relay, in_page):
                        assert record["taskId"] == task_id and record["status"] == "aborted"
                        assert record["error"] == told_by_first["error"]
                        assert record["steps"] == told_by_first["steps"]
    finally:
        await model.stop()
        await sim.close()


async def _at_least(model, count: int) -> bool:
    return len(model.requests) >= count
