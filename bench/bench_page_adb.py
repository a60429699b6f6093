"""The page's ADB in Chromium: throughput over the server's bridge against that link's ceiling, and
take_screenshot end to end against Debian's `adb exec-out screencap -p`. Ratios from one run.

    .venv/bin/python bench/bench_page_adb.py [--mib 32] [--runs 3] [--shots 20] [--tango] [--warmup 2]

1. Ceiling: plain JavaScript in the page receives the same number of bytes over the same bridge
   (`/adb?target=` to a TCP server that just sends them), binaryType arraybuffer.
2. The project's client in Pyodide streams `exec:cat` of a file of that size from the simulated phone
   over the same bridge (window.phoneAgent.measurePull).
   Beside it, when bench/tango is built (``cd bench/tango && npm install && npm run build``), Tango
   (``@yume-chan/adb`` 2.6, the best browser ADB) pulls the same file in another tab of the same
   Chromium over the same bridge from the same simulated phone, in the same rounds.
3. take_screenshot through Channel A (mcp SDK stdio client → phone-agent mcp → page → ADB → sim)
   against `adb exec-out screencap -p` through an isolated Debian adb server, same phone, same screen.

Each round runs the ceiling, Tango and ours in an order that rotates from round to round. Chromium is
driven by ``BareChromium`` (DevTools with ``Runtime`` only): Playwright would enable the ``Network``
domain, and Chromium then reports every WebSocket frame to it, binary ones base64-encoded — about as
much CPU as the transfer itself, the same for every client, which hides their differences (``--playwright``
measures that way, for comparison with older figures).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
TANGO_BUNDLE = ROOT / "bench" / "tango" / "dist" / "tango_pull.js"
TANGO_PAGE = (
    '<!doctype html><meta charset="utf-8"><title>Tango</title>'
    '<script type="module" src="tango_pull.js"></script>'
)

from bare_chromium import BareChromium  # noqa: E402

from phone_agent.sim.server import SimulatedPhoneServer  # noqa: E402
from tests.support import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    DebianAdbServer,
    ServedPhoneAgent,
    free_port,
    mcp_stdio_session,
    page_link,
)

PULL_JS = "path => window.phoneAgent.measurePull(path)"
CEILING_JS = """async ([url, expected]) => {
  return await new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.binaryType = "arraybuffer";
    let received = 0, started = 0;
    // The bridge carries ADB only: it connects once the first bytes are an ADB start.
    ws.onopen = () => { started = performance.now(); ws.send(new TextEncoder().encode("000chost:version")); };
    ws.onmessage = (event) => { received += event.data.byteLength; };
    ws.onclose = () => resolve({bytes: received, ms: performance.now() - started});
    ws.onerror = () => reject(new Error("bridge failed"));
  });
}"""


async def blaster(size: int) -> tuple[asyncio.Server, int]:
    payload = os.urandom(size)

    async def send(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # An adb server's way to start (the bridge checks it), then the bytes.
        await reader.readexactly(len(b"000chost:version"))
        writer.write(b"OKAY")
        for start in range(0, size, 1 << 20):
            writer.write(payload[start : start + (1 << 20)])
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(send, "127.0.0.1", 0)
    return server, server.sockets[0].getsockname()[1]


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


def tango_origin() -> tuple[ThreadingHTTPServer, str]:
    """Serve the Tango bundle from a loopback origin of its own (the server allows it with --allow-origin)."""
    if not TANGO_BUNDLE.exists():
        raise SystemExit(f"{TANGO_BUNDLE} is missing: cd bench/tango && npm install && npm run build")
    folder = Path(tempfile.mkdtemp())
    (folder / "tango.html").write_text(TANGO_PAGE)
    shutil.copy(TANGO_BUNDLE, folder / "tango_pull.js")
    handler = functools.partial(QuietHandler, directory=str(folder))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


class Browser:
    """Tabs in Debian's Chromium, driven by BareChromium or (``--playwright``) by Playwright."""

    def __init__(self, playwright: bool) -> None:
        self.playwright = playwright
        self._stack = contextlib.AsyncExitStack()
        self._browser: Any = None

    async def __aenter__(self) -> Browser:
        if self.playwright:
            from playwright.async_api import async_playwright

            driver = await self._stack.enter_async_context(async_playwright())
            self._browser = await driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            self._stack.push_async_callback(self._browser.close)
        else:
            self._browser = await self._stack.enter_async_context(BareChromium(CHROMIUM, CHROMIUM_ARGS))
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._stack.aclose()

    async def wait_until(self, page: Any, condition: str) -> None:
        if self.playwright:
            await page.wait_for_function(condition, timeout=60_000)
        else:
            await page.wait_for(condition, timeout=60)

    async def tab(self, url: str, ready: str) -> Any:
        """A tab at ``url`` once the JavaScript condition ``ready`` holds; ``await tab.evaluate(f, arg)``."""
        if self.playwright:
            page = await self._browser.new_page()
            await page.goto(page_link(url))
            await page.wait_for_function(ready, timeout=120_000)
            return page
        tab = await self._browser.new_tab(url)
        await tab.wait_for(ready, timeout=120)
        return tab


LIVE_VIEW_OFF = "() => { const box = document.querySelector('#live-toggle'); if (box.checked) box.click(); }"


async def phone_page(browser: Browser, url: str) -> Any:
    """The project's page, connected to its phone, the live view off."""
    page = await browser.tab(url, "document.documentElement.dataset.phone === 'connected'")
    await page.evaluate(LIVE_VIEW_OFF)
    return page


async def tango_page(browser: Browser, origin: str, served: Any, sim: SimulatedPhoneServer) -> Any:
    """A tab running Tango, connected to the simulated phone through the server's bridge."""
    page = await browser.tab(f"{origin}/tango.html", "typeof window.tangoConnect === 'function'")
    bridge = f"ws://127.0.0.1:{served.port}/adb?target=127.0.0.1:{sim.port}"
    await page.evaluate("url => window.tangoConnect(url)", bridge)
    return page


SHOT_ROUNDS = 5


def spread(seconds: list[float]) -> str:
    """p10–p90 in ms."""
    ordered = sorted(seconds)
    low, high = ordered[len(ordered) // 10], ordered[len(ordered) * 9 // 10]
    return f"p10 {low * 1000:.1f}, p90 {high * 1000:.1f} ms"


def runs(values: list[float]) -> str:
    return ", ".join(f"{value:.1f}" for value in values)


def mbps(size: int, ms: float) -> float:
    return size / (ms / 1000) / 1e6


async def main(args: argparse.Namespace) -> None:
    size = args.mib * 1024 * 1024
    sim = SimulatedPhoneServer("127.0.0.1", free_port())
    sim.phone.clock = lambda: "12:00"
    sim.fs.write_file("/sdcard/blob.bin", os.urandom(size))
    await sim.start()
    static, origin = tango_origin() if args.tango else (None, "")
    served = ServedPhoneAgent(*(("--allow-origin", origin) if args.tango else ()))
    server, blaster_port = await blaster(size)
    report: list[str] = []
    try:
        async with Browser(args.playwright) as browser:
            page = await phone_page(browser, f"{served.base}/?device=tcp:127.0.0.1:{sim.port}")
            tango = await tango_page(browser, origin, served, sim) if args.tango else None

            ceiling, pulled, streamed, first_byte = [], [], [], []
            tango_pulled, tango_streamed = [], []
            url = f"ws://127.0.0.1:{served.port}/adb?target=127.0.0.1:{blaster_port}"

            async def measure_tango() -> None:
                assert tango is not None
                result = await tango.evaluate("path => window.tangoPull(path)", "/sdcard/blob.bin")
                assert result["bytes"] == size, result
                tango_pulled.append(mbps(size, result["ms"]))
                tango_streamed.append(mbps(size, result["ms"] - result["firstByteMs"]))

            async def measure_ceiling() -> None:
                result = await page.evaluate(CEILING_JS, [url, size])
                assert result["bytes"] == size + 4, result  # OKAY, then the payload
                ceiling.append(mbps(size, result["ms"]))

            async def measure_ours() -> None:
                result = await page.evaluate(PULL_JS, "/sdcard/blob.bin")
                assert result["bytes"] == size, result
                pulled.append(mbps(size, result["ms"]))
                # From the first byte: what the client and the link decide (the phone's `cat` and the
                # OPEN round trip come before it).
                streamed.append(mbps(size, result["ms"] - result["firstByteMs"]))
                first_byte.append(result["firstByteMs"])

            order = [measure_ceiling, measure_ours] + ([measure_tango] if tango is not None else [])
            for _ in range(args.warmup):  # untimed: the first pulls grow Pyodide's memory, warm up code
                for measure in order:
                    await measure()
            for figures in (ceiling, pulled, streamed, first_byte, tango_pulled, tango_streamed):
                figures.clear()
            for index in range(args.runs):  # the order rotates: no client always goes first
                shift = index % len(order)
                for measure in order[shift:] + order[:shift]:
                    await measure()
            c, p = statistics.median(ceiling), statistics.median(pulled)
            report.append(f"bridge ceiling (plain JS)      {c:7.1f} MB/s  (runs: {runs(ceiling)})")
            report.append(f"Pyodide ADB exec:cat, total    {p:7.1f} MB/s  (runs: {runs(pulled)})")
            report.append(f"  of which to the first byte   {statistics.median(first_byte):7.0f} ms")
            m = statistics.median(streamed)
            report.append(f"Pyodide ADB, from first byte   {m:7.1f} MB/s  (runs: {runs(streamed)})")
            report.append(f"Pyodide streaming / ceiling    {m / c:7.0%}   (target >= 80%)")
            if tango is not None:
                t, ts = statistics.median(tango_pulled), statistics.median(tango_streamed)
                report.append(f"Tango exec:cat, total          {t:7.1f} MB/s  (runs: {runs(tango_pulled)})")
                report.append(
                    f"Tango, from first byte         {ts:7.1f} MB/s  (runs: {runs(tango_streamed)})"
                )
                ratios = [ours / theirs for ours, theirs in zip(pulled, tango_pulled, strict=True)]
                report.append(
                    f"ours / Tango, total            {p / t:7.2f}x      (per round: "
                    f"{', '.join(f'{r:.2f}' for r in ratios)})"
                )
                report.append(f"ours / Tango, from first byte  {m / ts:7.2f}x")
        if args.no_screenshot:
            report.append(f"load average                   {os.getloadavg()[0]:7.1f}")
            print("\n".join(report))
            return

        # take_screenshot end to end vs adb exec-out screencap -p, in alternating batches
        adb = await asyncio.to_thread(DebianAdbServer, Path(tempfile.mkdtemp()))
        serial = f"127.0.0.1:{sim.port}"
        try:
            await adb.output("connect", serial)
            await asyncio.sleep(1.0)
            adb_times: list[float] = []
            mcp_times: list[float] = []
            port = free_port()
            async with mcp_stdio_session("--port", str(port), "--self-check-delay", "0") as session:
                async with Browser(args.playwright) as browser:
                    page = await phone_page(
                        browser, f"http://127.0.0.1:{port}/?device=tcp:127.0.0.1:{sim.port}"
                    )
                    await browser.wait_until(page, "document.querySelector('.mcp-badge--ready') !== null")
                    for _ in range(3):  # warm-up: the first calls load code in the page
                        await session.call_tool("take_screenshot", {})
                    batch = max(1, args.shots // SHOT_ROUNDS)
                    for _ in range(SHOT_ROUNDS):
                        for _ in range(batch):
                            start = time.perf_counter()
                            png = await adb.output("-s", serial, "exec-out", "screencap", "-p")
                            adb_times.append(time.perf_counter() - start)
                        for _ in range(batch):
                            start = time.perf_counter()
                            result = await session.call_tool("take_screenshot", {})
                            mcp_times.append(time.perf_counter() - start)
                            assert not result.is_error
        finally:
            await asyncio.to_thread(adb.stop)
        a, m = statistics.median(adb_times) * 1000, statistics.median(mcp_times) * 1000
        report.append(
            f"adb exec-out screencap -p      {a:7.1f} ms   ({len(png)} bytes PNG; {spread(adb_times)})"
        )
        report.append(f"take_screenshot via MCP relay  {m:7.1f} ms   ({spread(mcp_times)})")
        report.append(f"take_screenshot / adb          {m / a:7.2f}x     (target <= 1.5x)")
        report.append(f"load average                   {os.getloadavg()[0]:7.1f}")
    finally:
        server.close()
        served.stop()
        if static is not None:
            static.shutdown()
        await sim.close()
    print("\n".join(report))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--mib", type=int, default=32)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--shots", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=2, help="untimed rounds first (default 2)")
    parser.add_argument("--tango", action="store_true", help="pull with Tango too (bench/tango built)")
    parser.add_argument("--no-screenshot", action="store_true", help="throughput only")
    parser.add_argument(
        "--playwright", action="store_true", help="drive Chromium with Playwright (Network domain on)"
    )
    asyncio.run(main(parser.parse_args()))
