"""The shared Chromium's watch (tests/shared_chromium.py): a crash is told with its reason, and the next
test gets a healthy browser.

Each test here crashes a Chromium of its own (``chrome://crash``, or the browser process killed), never
the session's: the session's watch would rightly fail the test that crashed it.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import http.server
import os
import signal
import threading
from collections.abc import AsyncIterator, Iterator

import pytest

from tests.shared_chromium import BrowserHandle, SharedChromium
from tests.support import CHROMIUM, CHROMIUM_ARGS, KeptPage, require

pytestmark = pytest.mark.browser


@pytest.fixture
async def own(tmp_path) -> AsyncIterator[tuple[SharedChromium, BrowserHandle]]:
    require(CHROMIUM, "Debian's chromium")
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        chromium = SharedChromium(playwright, CHROMIUM, CHROMIUM_ARGS, tmp_path / "chromium")
        await chromium.launch()
        try:
            yield chromium, BrowserHandle(chromium)
        finally:
            await chromium.close()


async def crash(page) -> None:
    with contextlib.suppress(Exception):  # the navigation never finishes: the renderer dies
        await page.goto("chrome://crash")
    for _ in range(100):
        if page.is_closed():
            break
        with contextlib.suppress(Exception):
            await page.evaluate("1")
            await asyncio.sleep(0.05)
            continue
        break


async def test_a_crashed_page_is_told_with_its_status_and_the_renderer_last_words(own):
    chromium, browser = own
    context = await browser.new_context()
    page = await context.new_page()
    await page.goto("data:text/html,<p>hello</p>")
    await crash(page)
    await chromium.settle(timeout=5)
    assert [crash.what for crash in chromium.crashes] == ["page crashed: data:text/html,<p>hello</p>"]
    told = str(chromium.crashes[0])
    assert "renderer status 'crashed'" in told, told
    words = chromium.last_words(chromium.crashes[0])
    assert "Intentionally crashing" in words, words
    assert "dbus" not in words  # the start-up noise is left out


async def test_after_a_crash_the_next_context_is_in_a_new_browser(own):
    chromium, browser = own
    first = chromium.browser
    page = await (await browser.new_context()).new_page()
    await crash(page)
    assert not chromium.healthy()
    context = await browser.new_context()
    assert chromium.launches == 2 and chromium.browser is not first
    assert not first.is_connected()
    fresh = await context.new_page()
    assert await fresh.evaluate("6 * 7") == 42
    assert chromium.healthy()


async def test_a_browser_that_died_is_told_and_replaced(own):
    chromium, browser = own
    cdp = await chromium.browser.new_browser_cdp_session()
    info = await cdp.send("SystemInfo.getProcessInfo")
    (pid,) = [process["id"] for process in info["processInfo"] if process["type"] == "browser"]
    os.kill(pid, signal.SIGKILL)
    for _ in range(100):
        if chromium.crashes:
            break
        await asyncio.sleep(0.05)
    assert [crash.what for crash in chromium.crashes] == [
        "the browser disconnected (Chromium exited or its connection broke)"
    ]
    page = await (await browser.new_context()).new_page()
    assert await page.evaluate("1 + 1") == 2
    assert chromium.launches == 2


async def test_closing_the_browser_ourselves_is_no_crash(own):
    chromium, browser = own
    await (await browser.new_context()).new_page()
    await chromium.close()
    await asyncio.sleep(0.1)
    assert chromium.crashes == []


@pytest.fixture
def ready_page_url(tmp_path) -> Iterator[str]:
    """A page that is ready at once (``html[data-state=ready]``), served on 127.0.0.1."""
    (tmp_path / "www").mkdir()
    (tmp_path / "www" / "index.html").write_text("<html data-state=ready><p>kept</p></html>")
    (tmp_path / "www" / "favicon.ico").write_bytes(b"")

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args) -> None:
            pass

    handler = functools.partial(Quiet, directory=str(tmp_path / "www"))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


async def test_a_kept_page_boots_again_in_a_new_browser_after_it_crashed(own, ready_page_url):
    chromium, browser = own
    prepared = []

    async def prepare(page) -> None:
        prepared.append(page)

    kept = KeptPage(browser, ready_page_url, prepare=prepare)
    page, watch = await kept.get()
    assert (await kept.get())[0] is page and kept.boots == 1  # a healthy page is kept
    await crash(page)
    assert watch.crashed and watch.gone
    again, _ = await kept.get()
    assert again is not page and kept.boots == 2 and prepared == [page, again]
    assert await again.text_content("p") == "kept"
    assert chromium.launches == 2
    await kept.close()
