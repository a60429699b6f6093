"""The page's ADB in Chromium: throughput over the server's bridge against that link's ceiling, and
take_screenshot end to end against Debian's `adb exec-out screencap -p`. Ratios from one run.

    .venv/bin/python bench/bench_page_adb.py [--mib 32] [--runs 3] [--shots 20]

1. Ceiling: plain JavaScript in the page receives the same number of bytes over the same bridge
   (`/adb?target=` to a TCP server that just sends them), binaryType arraybuffer.
2. The project's client in Pyodide streams `exec:cat` of a file of that size from the simulated phone
   over the same bridge (window.phoneAgent.measurePull).
   Beside it, when bench/tango is built (``cd bench/tango && npm install && npm run build``), Tango
   (``@yume-chan/adb`` 2.6, the best browser ADB) pulls the same file in another tab of the same
   Chromium over the same bridge from the same simulated phone, in the same rounds.
3. take_screenshot through Channel A (mcp SDK stdio client → phone-agent mcp → page → ADB → sim)
   against `adb exec-out screencap -p` through an isolated Debian adb server, same phone, same screen.
"""

from __future__ import annotations

import argparse
import asyncio
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

from phone_agent.sim.server import SimulatedPhoneServer  # noqa: E402
from tests.support import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    DebianAdbServer,
    ServedPhoneAgent,
    free_port,
    mcp_stdio_session,
)

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


async def tango_page(browser: Any, origin: str, served: Any, sim: SimulatedPhoneServer) -> Any:
    """A tab running Tango, connected to the simulated phone through the server's bridge."""
    page = await browser.new_page()
    await page.goto(f"{origin}/tango.html")
    await page.wait_for_function("typeof window.tangoConnect === 'function'")
    bridge = f"ws://127.0.0.1:{served.port}/adb?target=127.0.0.1:{sim.port}"
    await page.evaluate("url => window.tangoConnect(url)", bridge)
    return page


def runs(values: list[float]) -> str:
    return ", ".join(f"{value:.1f}" for value in values)


def mbps(size: int, ms: float) -> float:
    return size / (ms / 1000) / 1e6


async def main(args: argparse.Namespace) -> None:
    from playwright.async_api import async_playwright

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
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = await browser.new_page()
            await page.goto(f"{served.base}/?device=tcp:127.0.0.1:{sim.port}")
            await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=60_000)
            await page.uncheck("#live-toggle")
            tango = await tango_page(browser, origin, served, sim) if args.tango else None

            ceiling, pulled, streamed, first_byte = [], [], [], []
            tango_pulled, tango_streamed = [], []
            url = f"ws://127.0.0.1:{served.port}/adb?target=127.0.0.1:{blaster_port}"
            for _ in range(args.runs):
                if tango is not None:
                    result = await tango.evaluate("path => window.tangoPull(path)", "/sdcard/blob.bin")
                    assert result["bytes"] == size, result
                    tango_pulled.append(mbps(size, result["ms"]))
                    tango_streamed.append(mbps(size, result["ms"] - result["firstByteMs"]))
                result = await page.evaluate(CEILING_JS, [url, size])
                assert result["bytes"] == size + 4, result  # OKAY, then the payload
                ceiling.append(mbps(size, result["ms"]))
                result = await page.evaluate(
                    "path => window.phoneAgent.measurePull(path)", "/sdcard/blob.bin"
                )
                assert result["bytes"] == size, result
                pulled.append(mbps(size, result["ms"]))
                # The simulated phone's `cat` reads the whole file before its first write: count the
                # stream from its first byte, which is what the client and the link decide.
                streamed.append(mbps(size, result["ms"] - result["firstByteMs"]))
                first_byte.append(result["firstByteMs"])
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
                await browser.close()
                print("\n".join(report))
                return
            await browser.close()

        # take_screenshot end to end vs adb exec-out screencap -p
        adb = await asyncio.to_thread(DebianAdbServer, Path(tempfile.mkdtemp()))
        serial = f"127.0.0.1:{sim.port}"
        try:
            await adb.output("connect", serial)
            await asyncio.sleep(1.0)
            adb_times = []
            for _ in range(args.shots):
                start = time.perf_counter()
                png = await adb.output("-s", serial, "exec-out", "screencap", "-p")
                adb_times.append(time.perf_counter() - start)
            port = free_port()
            async with mcp_stdio_session("--port", str(port), "--self-check-delay", "0") as session:
                async with async_playwright() as playwright:
                    browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                    page = await browser.new_page()
                    await page.goto(f"http://127.0.0.1:{port}/?device=tcp:127.0.0.1:{sim.port}")
                    await page.wait_for_selector(
                        "html[data-phone=connected]", state="attached", timeout=60_000
                    )
                    await page.uncheck("#live-toggle")
                    await page.wait_for_selector(".mcp-badge--ready", timeout=30_000)
                    mcp_times = []
                    for _ in range(args.shots):
                        start = time.perf_counter()
                        result = await session.call_tool("take_screenshot", {})
                        mcp_times.append(time.perf_counter() - start)
                        assert not result.is_error
                    await browser.close()
        finally:
            await asyncio.to_thread(adb.stop)
        a, m = statistics.median(adb_times) * 1000, statistics.median(mcp_times) * 1000
        report.append(f"adb exec-out screencap -p      {a:7.1f} ms   ({len(png)} bytes PNG)")
        report.append(f"take_screenshot via MCP relay  {m:7.1f} ms")
        report.append(f"take_screenshot overhead       {m / a - 1:+7.0%}   (target <= +15%)")
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
    parser.add_argument("--tango", action="store_true", help="pull with Tango too (bench/tango built)")
    parser.add_argument("--no-screenshot", action="store_true", help="throughput only")
    asyncio.run(main(parser.parse_args()))
