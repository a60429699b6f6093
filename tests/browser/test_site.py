"""``phone-agent site DIR``: the page as static files that boot from a static host with no server of ours
(Python's http.server here), register their WebMCP tools, make no request outside their origin, say how
to pair with a local phone-agent, and pair with one started with ``--allow-origin`` when asked."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys

import pytest

from phone_agent.tools.catalog import listed_tools
from tests.support import (
    eventually,
    free_port,
    mcp_stdio_session,
    open_page,
    phone_agent_command,
    result_text,
    stop_process,
    wait_http,
)

pytestmark = pytest.mark.browser
REFUSED = r"WebSocket connection to .* failed"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The site written by ``phone-agent site``, served by ``python -m http.server`` on 127.0.0.1."""
    folder = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [phone_agent_command(), "site", str(folder), "--force"], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_http(f"http://127.0.0.1:{port}/", process=server)
        yield folder, f"http://127.0.0.1:{port}"
    finally:
        stop_process(server)


def test_site_refuses_a_folder_that_is_not_empty_unless_forced(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    refused = subprocess.run(
        [phone_agent_command(), "site", str(tmp_path)], capture_output=True, text=True, timeout=120
    )
    assert refused.returncode == 2
    assert "is not empty" in refused.stderr and "--force" in refused.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]  # nothing written
    forced = subprocess.run(
        [phone_agent_command(), "site", str(tmp_path), "--force"], capture_output=True, text=True, timeout=120
    )
    assert forced.returncode == 0, forced.stderr
    assert (tmp_path / "notes.txt").read_text() == "mine"
    for name in ("index.html", "pyscript.toml", "py/main.py", ".nojekyll", "py/phone_agent/__init__.py"):
        assert (tmp_path / name).is_file(), name
    for part in ("pyodide", "pyscript", "mp4-muxer", "nats", "scrcpy", "u2"):
        assert (tmp_path / "static" / "vendor" / part / "LICENSE").is_file(), part
    assert not (tmp_path / "py" / "phone_agent" / "server").exists()  # CPython-only: not the page's


async def test_the_static_site_boots_registers_its_tools_and_stays_on_its_origin(browser, site):
    _folder, base = site
    # The watch fails the test on any request outside 127.0.0.1 (the site's own host and port here).
    async with open_page(browser, f"{base}/", link=False) as (page, watch):
        tools = {tool["name"] for tool in await page.webmcp.tools()}
        assert tools == {spec.name for spec in listed_tools()}
        requests = []
        page.on("request", lambda request: requests.append(request.url))
        page.on("websocket", lambda ws: requests.append(ws.url))
        await asyncio.sleep(2)  # no relay attempt by itself: a static page connects only when asked
        assert not [url for url in requests if not url.startswith(base + "/")], requests
        # It says how to pair with a local phone-agent, at the top and in the MCP relay card.
        banner = await page.text_content("#pair-banner")
        assert f"phone-agent serve --allow-origin {base}" in banner
        help_text = await page.text_content("#relay-static-help")
        assert f"--allow-origin {base}" in help_text and "pairing code" in help_text
        assert await page.text_content("#relay-reconnect") == "Connect to phone-agent"
        assert await page.evaluate("typeof navigator.usb") == "object"  # WebUSB is there
        watch.assert_clean()


async def test_the_static_site_pairs_with_a_local_phone_agent_it_is_allowed_by(
    browser, site, phone_agent_home
):
    _folder, base = site
    port = free_port()
    log = phone_agent_home / "state" / f"server-{port}.log"
    url = f"{base}/?relay=ws://127.0.0.1:{port}/relay&relayRetryMs=300"
    args = ("--port", str(port), "--self-check-delay", "0", "--allow-origin", base)
    async with mcp_stdio_session(*args) as session:
        async with open_page(browser, url, link=False, allowed_console=(REFUSED,)) as (page, _watch):
            await page.wait_for_selector("#relay-pair", state="visible", timeout=15_000)

            async def code() -> str | None:
                found = re.findall(r"type the pairing code (\d{6})", log.read_text() if log.exists() else "")
                return found[-1] if found else None

            await page.fill("#relay-pair-code", await eventually(code, timeout_s=15))
            await page.click("#relay-pair button[type=submit]")
            await page.wait_for_selector("#relay-badge.mcp-badge--ready", timeout=15_000)
            assert await page.locator("#pair-banner").is_hidden()
            result = await session.call_tool("get_device_status", {})
            assert json.loads(result_text(result)) == {"connected": False}
