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
import re
import signal
import threading
from collections.abc import AsyncIterator, Iterator

import pytest

from tests.shared_chromium import BrowserHandle, SharedChromium
from tests.support import CHROMIUM, CHROMIUM_ARGS, CHROMIUM_FEATURES, SAMPLERS_OFF, KeptPage, require

pytestmark = pytest.mark.browser


@contextlib.asynccontextmanager
async def own_chromium(log_dir, args: list[str] = CHROMIUM_ARGS) -> AsyncIterator[SharedChromium]:
    require(CHROMIUM, "Debian's chromium")
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        chromium = SharedChromium(playwright, CHROMIUM, args, log_dir)
        await chromium.launch()
        try:
            yield chromium
        finally:
            await chromium.close()


@pytest.fixture
async def own(tmp_path) -> AsyncIterator[tuple[SharedChromium, BrowserHandle]]:
    async with own_chromium(tmp_path / "chromium") as chromium:
        yield chromium, BrowserHandle(chromium)


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
    # The crash handler's minidump, kept beside the log: chrome://crash writes to address 0.
    dumps = await minidumps_of(chromium, 1)
    assert [(dump.signal, dump.fault_address) for dump in dumps] == [(11, 0)], dumps
    assert re.fullmatch(r"chromium\+0x[0-9a-f]+", dumps[0].instruction), dumps[0]


async def minidumps_of(chromium: SharedChromium, count: int) -> list:
    """The crash handler's minidumps once ``count`` are there (it writes them as the renderer dies)."""
    for _ in range(100):
        if len(dumps := chromium.minidumps()) >= count:
            return dumps
        await asyncio.sleep(0.05)
    return chromium.minidumps()


def samplers_turned_on(feature: str) -> str:
    """One of tests/support.py's SAMPLERS_OFF entries with its off switches turned on."""
    feature = re.sub(r"(probability|Probability)/0(?=/|$)", r"\1/1", feature)
    return re.sub(r"prob-pct/0(?=/|$)", "prob-pct/100", feature)


async def samplers_of_fresh_renderers(log_dir, features: tuple[str, ...], renderers: int) -> list:
    """Crash ``renderers`` fresh renderers of a Chromium with these features: the samplers each ran."""
    args = [a for a in CHROMIUM_ARGS if not a.startswith("--enable-features=")]
    async with own_chromium(log_dir, [*args, "--enable-features=" + ",".join(features)]) as chromium:
        for _ in range(renderers):
            page = await (await BrowserHandle(chromium).new_context()).new_page()
            await crash(page)
        await chromium.settle(timeout=5)
        return [dump.samplers for dump in await minidumps_of(chromium, renderers)]


async def test_the_allocation_samplers_that_kill_pyodide_pages_are_off_in_every_renderer(tmp_path):
    """Issue 25 (docs/chromium.md): Chromium's heap profiler and GWP-ASan walk the stack of a sampled
    allocation off the end of the WebAssembly stack Python runs on. The session's switches keep both
    out of every renderer; the same switches set to 1 put both in every renderer (so the probe, the
    renderer's own minidump, does see them)."""
    assert f"--enable-features={','.join(CHROMIUM_FEATURES)}" in CHROMIUM_ARGS
    assert set(SAMPLERS_OFF) <= set(CHROMIUM_FEATURES)
    turned_on = tuple(samplers_turned_on(f) if f in SAMPLERS_OFF else f for f in CHROMIUM_FEATURES)
    on = await samplers_of_fresh_renderers(tmp_path / "on", turned_on, 1)
    assert on == [("--subproc-heap-profiling", "gwp-asan-malloc", "gwp-asan-partitionalloc")], on
    off = await samplers_of_fresh_renderers(tmp_path / "off", CHROMIUM_FEATURES, 3)
    assert off == [(), (), ()], off


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
