"""Boot the page on the simulated phone again and again and count the renderers that die (issue 25).

    .venv/bin/python bench/renderer_crash_soak.py [--pages 20] [--hold 5] [--parallel 1]
        [--keep-samplers] [--profile-every-renderer] [--hide-jspi] [--probe N]
        [--feature Name:param/value/...] [--arg=--some-chromium-switch]

Each round opens a new browser context, loads the page with ``?device=tcp:`` on a simulated phone
(``phone-agent sim`` in its own process), waits until the phone is connected, keeps the page (live
view on) for ``--hold`` seconds, and closes it. A renderer that dies is counted with its termination
status, and the crash handler's minidumps are read (tests/minidump.py): the signal, the faulting
instruction (``chromium+0x9c6674d`` in Chromium 156.0.8078.114 is the frame-pointer stack scan of
docs/chromium.md) and the allocation samplers the renderer ran.

Chromium gets the test suite's switches (tests/support.py: the allocation samplers off), changed by:

- ``--keep-samplers``: Chromium's own sampler settings (the heap profiler in 10 % of the renderers of
  half the sessions, GWP-ASan in a few processes);
- ``--profile-every-renderer``: the heap profiler in every renderer, a sample every ~4 KB allocated;
  this brings the crash out on nearly every page;
- ``--feature``: one more ``--enable-features`` entry, replacing the same feature's entry;
- ``--hide-jspi``: Pyodide without JSPI (an init script hides ``WebAssembly.Suspending``), so Python
  runs on the main thread's own stack: a diagnostic, not a setting the page uses;
- ``--probe N``: instead of pages, crash N fresh renderers on purpose (``chrome://crash``) and tell
  which samplers each one ran.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "py"))

from tests.shared_chromium import SharedChromium  # noqa: E402
from tests.support import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    CHROMIUM_FEATURES,
    SAMPLERS_OFF,
    ServedPhoneAgent,
    free_port,
    phone_agent_command,
)

# Chromium's defaults: a sample every 10 MB, in 10 % of renderers, in half the sessions of a build of
# no channel (Debian's).
PROFILE_EVERY_RENDERER = (
    "HeapProfilerReporting:nonstable-probability/1.0/stable-probability/1.0/renderer-prob-pct/100"
    "/renderer-sampling-rate-bytes/4096"
)
HIDE_JSPI = "delete WebAssembly.Suspending; delete WebAssembly.promising; delete WebAssembly.Suspender;"


def chromium_args(keep_samplers: bool, profile_every_renderer: bool, extra_features: list[str]) -> list[str]:
    features = [f for f in CHROMIUM_FEATURES if not (keep_samplers and f in SAMPLERS_OFF)]
    if profile_every_renderer:
        extra_features = [PROFILE_EVERY_RENDERER, *extra_features]
    for extra in extra_features:
        features = [f for f in features if f.split(":")[0] != extra.split(":")[0]] + [extra]
    args = [a for a in CHROMIUM_ARGS if not a.startswith("--enable-features=")]
    return [*args, "--enable-features=" + ",".join(features)]


async def watched(chromium: SharedChromium, hide_jspi: bool = False) -> tuple[object, object, asyncio.Future]:
    """A new context and page of ``chromium``, and a future set when the page's renderer dies."""
    context = await (await chromium.ensure_healthy()).new_context()
    if hide_jspi:
        await context.add_init_script(HIDE_JSPI)
    page = await context.new_page()
    crashed = asyncio.get_running_loop().create_future()
    page.on("crash", lambda _page: crashed.done() or crashed.set_result(True))
    return context, page, crashed


async def one_page(chromium: SharedChromium, url: str, hold: float, hide_jspi: bool) -> str:
    context, page, crashed = await watched(chromium, hide_jspi)
    try:
        await page.goto(url)
        connected = asyncio.ensure_future(
            page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=90_000)
        )
        done, _ = await asyncio.wait({connected, crashed}, return_when=asyncio.FIRST_COMPLETED)
        if crashed in done:
            connected.cancel()
            return "crashed while booting"
        await connected
        try:
            await asyncio.wait_for(asyncio.shield(crashed), hold)
            return "crashed while held"
        except TimeoutError:
            return "ok"
    except Exception as exc:  # a page that died mid-call surfaces as Playwright's error
        return f"failed: {str(exc).splitlines()[0]}"
    finally:
        with contextlib.suppress(Exception):  # the browser may be gone
            await context.close()


async def probe(chromium: SharedChromium) -> None:
    """Crash one fresh renderer on purpose: its minidump tells which samplers it ran."""
    context, page, crashed = await watched(chromium)
    try:
        with contextlib.suppress(Exception):  # the navigation dies with its renderer, as asked
            await page.goto("chrome://crash", timeout=10_000)
        await asyncio.wait_for(crashed, 10)
        await chromium.settle()
    finally:
        with contextlib.suppress(Exception):
            await context.close()


async def soak(args: argparse.Namespace, switches: list[str], url: str) -> dict[str, int]:
    from playwright.async_api import async_playwright

    outcomes: dict[str, int] = {}
    async with async_playwright() as playwright:
        chromium = SharedChromium(playwright, CHROMIUM, switches, Path(tempfile.mkdtemp()) / "chromium")
        await chromium.launch()
        started = time.time()
        for _ in range(args.probe):
            await probe(chromium)
        done = args.pages if args.probe else 0
        while done < args.pages:
            batch = min(args.parallel, args.pages - done)
            pages = (one_page(chromium, url, args.hold, args.hide_jspi) for _ in range(batch))
            for result in await asyncio.gather(*pages):
                done += 1
                outcomes[result] = outcomes.get(result, 0) + 1
                print(f"page {done}: {result}", flush=True)
        await chromium.settle()
        await asyncio.sleep(1)  # the crash handler writes its last minidump
        for crash in chromium.crashes:
            print("  crash:", crash)
        await chromium.close()
        for dump in chromium.minidumps(since=started):
            print("  minidump", dump)
        print(f"Chromium's log: {chromium.log_path}; {chromium.launches} launches")
    return outcomes


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=20)
    parser.add_argument("--hold", type=float, default=5.0, help="seconds each connected page stays open")
    parser.add_argument("--parallel", type=int, default=1, help="pages open at once")
    parser.add_argument("--query", default="", help="more of the page's query string, e.g. scrcpy=0")
    parser.add_argument("--keep-samplers", action="store_true")
    parser.add_argument("--profile-every-renderer", action="store_true")
    parser.add_argument("--hide-jspi", action="store_true")
    parser.add_argument("--probe", type=int, default=0, help="crash N renderers on purpose instead")
    parser.add_argument("--feature", action="append", default=[], help="one more --enable-features entry")
    parser.add_argument("--arg", action="append", default=[], help="one more Chromium switch")
    args = parser.parse_args(argv)

    switches = chromium_args(args.keep_samplers, args.profile_every_renderer, args.feature) + args.arg
    print("Chromium switches:", " ".join(switches[len(CHROMIUM_ARGS) - 1 :]), flush=True)
    served = await asyncio.to_thread(ServedPhoneAgent)
    sim_port = free_port()
    sim = subprocess.Popen(
        [phone_agent_command(), "sim", "--port", str(sim_port)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"{served.base}/?device=tcp:127.0.0.1:{sim_port}" + (f"&{args.query}" if args.query else "")
    started = time.monotonic()
    try:
        outcomes = await soak(args, switches, url)
    finally:
        sim.terminate()
        sim.wait(10)
        served.stop()
    if args.probe:
        return 0
    print(f"{args.pages} pages in {time.monotonic() - started:.0f} s: {outcomes}")
    return 0 if set(outcomes) == {"ok"} else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
