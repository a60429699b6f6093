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

from phone_agent.relay.frames import CLOSE_UNPAIRED, hello_frame, pair_frame
from tests.browser.test_relay_channel import REFUSED, wait_badge
from tests.server.harness import Peer
from tests.support import (
    eventually,
    free_port,
    mcp_stdio_session,
    open_page,
    phone_agent_command,
    result_text,
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
    for hello in (hello_frame(config.get("pairing") or ""), pair_frame("000000")):
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

            def code() -> str | None:
                found = re.findall(r"type the pairing code (\d{6})", log.read_text() if log.exists() else "")
                return found[-1] if found else None

            async def shown() -> str | None:
                return code()

            await page.fill("#relay-pair-code", await eventually(shown, timeout_s=15))
            await page.click("#relay-pair button[type=submit]")
            await wait_badge(page, ready=True)
            assert await page.locator("#relay-pair").is_hidden()
            result = await session.call_tool("get_device_status", {})
            assert json.loads(result_text(result)) == {"connected": False}
