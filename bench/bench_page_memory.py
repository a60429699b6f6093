"""Memory and CPU per phone: Chromium serving N simulated phones, each in a page of its own on scrcpy.

    .venv/bin/python bench/bench_page_memory.py [--pages 1,4,8] [--driver both] [--rounds 3]

One ``phone-agent serve`` (the page's origin and its ADB bridge), one ``phone-agent sim`` per page,
Debian's Chromium with the tests' switches, driven two ways (``--driver``, both by default, one after
the other): by ``BareChromium`` (DevTools ``Runtime`` only: nothing else in the browser listens), and
by Playwright as the tests drive it. Playwright enables DevTools' ``Network`` domain on every page, and
then the renderer keeps a copy of every response body the page fetched (Pyodide's wasm, its standard
library, u2.jar…, ~20 MiB) for DevTools to ask for; its pages also live in incognito contexts, whose
HTTP cache is in the network process's memory. For each N: Chromium with one blank tab is measured
first (PSS of all its processes, from /proc/PID/smaps_rollup, once it stops shrinking after start-up),
then N tabs open ``/?device=tcp:127.0.0.1:SIMPORT`` and each waits for its phone to show on scrcpy
(``canvas#screen[data-source=scrcpy]``). After ``--settle`` seconds:

- **memory per phone** = (PSS of all Chromium processes − PSS with the blank tab) / N, the issue's
  figure; also per process kind (browser, renderer, GPU, utility);
- **where a renderer's memory goes** (the first page's renderer, from /proc/PID/smaps: the JIT's
  executable mappings = compiled wasm and JS code; other anonymous memory = wasm linear memory,
  V8's heap, Blink, pixels; file-backed = Chromium's code and fonts), beside what the page reports
  of itself (``window.phoneAgent.memoryReport()``: wasm linear memory, Python's allocated blocks,
  modules imported by package, module files, JS heap, canvases' pixels, the lists it keeps), and
  Chromium's own accounting by allocator (a ``memory-infra`` trace, after the collection below):
  ``malloc`` holds the wasm module's bytes and V8's data about it, ``v8`` the JS heap,
  ``partition_alloc`` ArrayBuffers and the DevTools copies, ``cc``/``discardable`` decoded images,
  ``media`` the decoder's frames; the wasm linear memory is in none of them;
- **after a forced garbage collection** (``HeapProfiler.collectGarbage`` in each page): the same
  figure less what that frees of the anonymous and shared memory, once V8 and Blink have collected
  what the page allocated and dropped (boot's fetched files,
  WebSocket messages, screenshots, video chunks). Without it that garbage waits for V8's heuristics;
  the difference is the part of the figure that depends on when one looks;
- **CPU per phone**: Chromium's CPU time (all processes) over ``--cpu-window`` seconds of an idle
  phone on the live view, per page, as % of one core.

``--rounds R`` measures each N R times, each in a fresh Chromium: the figure is their median, the
spread their range. ``--json FILE`` writes the figures for scripts/perf_table.py. The figures move
with the machine's other work: CPU much, memory too, as PSS shares the pages of Chromium's code among
every Chromium running on the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(ROOT / "bench"))

from bare_chromium import BareChromium  # noqa: E402

from tests.support import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    ServedPhoneAgent,
    free_port,
    page_link,
    phone_agent_command,
)

MIB = 1024 * 1024
TICKS = os.sysconf("SC_CLK_TCK")
ON_SCRCPY = "document.querySelector('canvas#screen[data-source=scrcpy]') !== null"
CONNECTED = "document.documentElement.dataset.phone === 'connected'"
DISPATCH = "([tool, args, n]) => window.phoneAgent.measureDispatch(tool, JSON.stringify(args), n)"
SERVED_CALLS = (("take_screenshot", {}), ("list_elements", {}), ("tap", {"x": 540, "y": 1300}))


def descendants(pid: int) -> list[int]:
    """``pid`` and every process under it (Chromium's zygotes, renderers, GPU and utility processes)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            children.setdefault(int(fields[1]), []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def process_kind(pid: int) -> str:
    with contextlib.suppress(OSError):
        # Chromium rewrites its argv: the switches come as one string, separated by spaces.
        args = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").split()
        for arg in args:
            if arg.startswith(b"--type="):
                kind = arg[7:].decode()
                if kind == "utility":
                    for other in args:
                        if other.startswith(b"--utility-sub-type="):
                            return "utility:" + other.split(b".")[-1].decode()
                return kind
        return "browser"
    return "gone"


def pss_kb(pid: int, field: str = "Pss") -> int:
    """A process's PSS in KiB (``field``: ``Pss_Anon``, ``Pss_File``, ``Pss_Shmem`` for a part)."""
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith(f"{field}:"):
                return int(line.split()[1])
    return 0


def cpu_ticks(pid: int) -> int:
    with contextlib.suppress(OSError):
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime
    return 0


PSS_PARTS = {"anonymous": "Pss_Anon", "shared memory": "Pss_Shmem", "files": "Pss_File"}


def own_kb(pid: int) -> int:
    """The part of a process's PSS that a collection can free: anonymous and shared memory (not the
    files', which moves with the other Chromiums on the machine meanwhile)."""
    return pss_kb(pid, "Pss_Anon") + pss_kb(pid, "Pss_Shmem")


def own(pss: dict[str, int]) -> int:
    """``own_kb`` of all Chromium, from ``chromium_pss``."""
    return pss["part:anonymous"] + pss["part:shared memory"]


def chromium_pss(root: int) -> dict[str, int]:
    """PSS in KiB of every Chromium process by kind, and ``total``; and the total's parts (``PSS_PARTS``
    as ``part:NAME``: the files' part moves with every other Chromium on the machine, as they share
    its code's pages)."""
    kinds: dict[str, int] = {}
    parts = dict.fromkeys(PSS_PARTS, 0)
    for pid in descendants(root):
        kind = process_kind(pid)
        kinds[kind] = kinds.get(kind, 0) + pss_kb(pid)
        for part, field in PSS_PARTS.items():
            parts[part] += pss_kb(pid, field)
    kinds["total"] = sum(kinds.values())
    return {**kinds, **{f"part:{part}": value for part, value in parts.items()}}


def smaps_split(pid: int) -> dict[str, int]:
    """A renderer's PSS in KiB by mapping kind: executable anonymous (JIT: compiled wasm and JS),
    other anonymous (heaps, wasm linear memory, pixels), file-backed (code, fonts, data files)."""
    split = {"jit code": 0, "anonymous": 0, "files": 0}
    kind = "anonymous"
    with contextlib.suppress(OSError):
        for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
            first = line.split(maxsplit=6)
            if len(first) >= 5 and "-" in first[0] and len(first[1]) == 4:
                perms, name = first[1], first[5] if len(first) > 5 else ""
                file_backed = name.startswith("/") and not name.startswith("/memfd:")
                kind = "files" if file_backed else "jit code" if "x" in perms else "anonymous"
            elif line.startswith("Pss:"):
                split[kind] += int(line.split()[1])
    return split


class PlaywrightTab:
    """A Playwright page with BareChromium's ``Tab`` calls (``evaluate``, ``wait_for``, ``send``)."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self._cdp: Any = None

    async def send(self, method: str, params: dict[str, Any] | None = None) -> Any:
        if self._cdp is None:
            self._cdp = await self.page.context.new_cdp_session(self.page)
        return await self._cdp.send(method, params or {})

    async def evaluate(self, function: str, arg: Any = None) -> Any:
        return await self.page.evaluate(function, arg)

    async def wait_for(self, condition: str, timeout: float = 60.0) -> None:
        await self.page.wait_for_function(condition, timeout=timeout * 1000)


@dataclass
class Browser:
    """A running Chromium as the bench uses it: its root process, a way to open a visible page, and
    its DevTools protocol at the browser level (``send`` a command, ``event`` waits for one)."""

    root: int
    new_tab: Callable[[str], Awaitable[Any]]
    send: Callable[[str, dict[str, Any]], Awaitable[Any]]
    event: Callable[[str], Awaitable[dict[str, Any]]]


@contextlib.asynccontextmanager
async def open_browser(driver: str) -> AsyncIterator[Browser]:
    """Chromium with one blank tab, driven by BareChromium (DevTools ``Runtime`` only) or by Playwright
    as the tests drive it (each page in a context of its own, DevTools' ``Network`` domain on)."""
    args = [*CHROMIUM_ARGS, "--enable-precise-memory-info"]
    if driver == "bare":
        async with BareChromium(CHROMIUM, args) as bare:  # its first tab: about:blank
            assert bare._process is not None

            async def bare_tab(url: str) -> Any:
                return await bare.new_tab(url, new_window=True)

            async def bare_event(method: str) -> dict[str, Any]:
                return await bare.events(method).get()

            yield Browser(bare._process.pid, bare_tab, bare.send, bare_event)
        return
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=args)
        try:
            own = set(descendants(os.getpid()))
            root = min(pid for pid in own if process_kind(pid) == "browser" and "chromium" in _cmdline(pid))
            await (await browser.new_context()).new_page()  # the blank tab
            cdp = await browser.new_browser_cdp_session()
            queues: dict[str, asyncio.Queue[dict[str, Any]]] = {}

            async def playwright_tab(url: str) -> Any:
                page = await (await browser.new_context()).new_page()
                await page.goto(url)
                return PlaywrightTab(page)

            async def playwright_event(method: str) -> dict[str, Any]:
                if method not in queues:
                    queues[method] = asyncio.Queue()
                    cdp.on(method, queues[method].put_nowait)
                return await queues[method].get()

            yield Browser(root, playwright_tab, cdp.send, playwright_event)
        finally:
            await browser.close()


async def allocator_dump(browser: Browser, pid: int) -> dict[str, float]:
    """Chromium's own accounting of process ``pid``'s memory (a ``memory-infra`` trace, one detailed
    dump): MiB by top-level allocator (``malloc``, ``v8``, ``partition_alloc``, ``blink_gc``, ``cc``…)
    and a few of their parts. They overlap (``discardable`` is ``shared_memory``; ``blink_objects``
    is inside ``blink_gc``) and leave out the wasm linear memory."""
    config = {
        "includedCategories": ["disabled-by-default-memory-infra"],
        "excludedCategories": ["*"],
        "memoryDumpConfig": {"triggers": []},
    }
    complete = asyncio.ensure_future(browser.event("Tracing.tracingComplete"))
    await browser.send("Tracing.start", {"traceConfig": config, "transferMode": "ReturnAsStream"})
    await browser.send("Tracing.requestMemoryDump", {"levelOfDetail": "detailed"})
    await browser.send("Tracing.end", {})
    stream = (await asyncio.wait_for(complete, 60))["stream"]
    chunks = []
    while True:
        read = await browser.send("IO.read", {"handle": stream, "size": 1 << 20})
        chunks.append(base64.b64decode(read["data"]) if read.get("base64Encoded") else read["data"].encode())
        if read.get("eof"):
            break
    await browser.send("IO.close", {"handle": stream})
    trace = json.loads(b"".join(chunks))
    sizes: dict[str, float] = {}
    for event in trace["traceEvents"] if isinstance(trace, dict) else trace:
        if event.get("ph") != "v" or event.get("pid") != pid:
            continue
        for name, allocator in event.get("args", {}).get("dumps", {}).get("allocators", {}).items():
            size = allocator.get("attrs", {}).get("size", {})
            if size.get("units") == "bytes" and (name.count("/") == 0 or name in ALLOCATOR_PARTS):
                sizes[name] = int(size["value"], 16) / MIB
    return dict(sorted(sizes.items(), key=lambda item: -item[1]))


ALLOCATOR_PARTS = (
    "v8/main/heap",
    "partition_alloc/partitions/array_buffer",
    "partition_alloc/partitions/buffer",
    "cc/image_memory",
    "cc/tile_memory",
    "media/frame_buffers",
    "canvas/ResourceProvider",
    "web_cache/Script_resources",
)


def _cmdline(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    return ""


def renderers(root: int) -> list[int]:
    return [pid for pid in descendants(root) if process_kind(pid) == "renderer"]


async def start_sims(count: int, log_dir: Path) -> tuple[list[subprocess.Popen[bytes]], list[int]]:
    sims, ports = [], []
    for number in range(count):
        port = free_port()
        sims.append(subprocess.Popen(
            [phone_agent_command(), "sim", "--port", str(port), "--serial", f"PHAGMEM{number:04d}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=(log_dir / f"sim-{number}.err").open("wb"),
        ))  # fmt: skip
        ports.append(port)
    for port in ports:
        for _ in range(200):
            with contextlib.suppress(OSError):
                _, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.close()
                break
            await asyncio.sleep(0.05)
    return sims, ports


async def settled_pss(root: int, settle: float) -> dict[str, int]:
    """``chromium_pss`` once it stops shrinking (Chromium frees much of its start-up's memory within
    seconds, and a baseline taken before that would hide a page's worth), after at least ``settle`` s."""
    await asyncio.sleep(settle)
    pss = chromium_pss(root)
    for _ in range(15):
        await asyncio.sleep(1.0)
        again = chromium_pss(root)
        if again["total"] > pss["total"] - 2048:
            return again
        pss = again
    return pss


async def measure_once(
    pages: int, driver: str, args: argparse.Namespace, server: ServedPhoneAgent, log_dir: Path
) -> dict[str, Any]:
    """One round: a fresh Chromium, blank then with ``pages`` phones on scrcpy."""
    sims, ports = await start_sims(pages, log_dir)
    try:
        async with open_browser(driver) as browser:
            blank = await settled_pss(browser.root, args.settle)
            tabs = []
            for port in ports:
                tabs.append(await browser.new_tab(page_link(f"{server.base}/?device=tcp:127.0.0.1:{port}")))
            for tab in tabs:
                await tab.wait_for(CONNECTED, timeout=180)
                await tab.wait_for(ON_SCRCPY, timeout=120)
            for tab in tabs:  # each page serves a few calls first, as a page in use has
                for tool, arguments in SERVED_CALLS:
                    await tab.evaluate(DISPATCH, [tool, arguments, args.calls])
            await asyncio.sleep(args.settle)
            loaded = chromium_pss(browser.root)
            page_renderer = max(renderers(browser.root), key=pss_kb)
            renderer_kb = pss_kb(page_renderer)
            renderer_own_kb = own_kb(page_renderer)
            before = sum(cpu_ticks(pid) for pid in descendants(browser.root))
            started = time.monotonic()
            await asyncio.sleep(args.cpu_window)
            used = sum(cpu_ticks(pid) for pid in descendants(browser.root)) - before
            elapsed = time.monotonic() - started
            report = await tabs[0].evaluate("() => window.phoneAgent.memoryReport()")
            split = smaps_split(page_renderer)
            for tab in tabs:  # what is left once V8 and Blink collect the garbage the page made
                await tab.send("HeapProfiler.collectGarbage")
            await asyncio.sleep(2)
            collected = chromium_pss(browser.root)
            renderer_collected_kb = renderer_kb - renderer_own_kb + own_kb(page_renderer)
            # last: tracing costs memory of its own (its buffers, in the browser process)
            allocators = await allocator_dump(browser, page_renderer)
    finally:
        for sim in sims:
            sim.terminate()
        for sim in sims:
            with contextlib.suppress(subprocess.TimeoutExpired):
                sim.wait(10)
    per_kind = {
        kind: (loaded.get(kind, 0) - blank.get(kind, 0)) / 1024 / pages
        for kind in sorted(set(loaded) | set(blank))
    }
    return {
        "pages": pages,
        "driver": driver,
        "blankMiB": blank["total"] / 1024,
        "loadedMiB": loaded["total"] / 1024,
        "perPhoneMiB": per_kind["total"],
        "perKindMiB": per_kind,
        "afterGcPerPhoneMiB": per_kind["total"] - (own(loaded) - own(collected)) / 1024 / pages,
        "rendererAfterGcMiB": renderer_collected_kb / 1024,
        "cpuPerPhonePct": used / TICKS / elapsed / pages * 100,
        "rendererMiB": renderer_kb / 1024,
        "rendererSplitMiB": {key: value / 1024 for key, value in split.items()},
        "rendererAllocatorsMiB": allocators,
        "page": report,
    }


async def measure(
    pages: int, driver: str, args: argparse.Namespace, server: ServedPhoneAgent, log_dir: Path
) -> dict[str, Any]:
    """``args.rounds`` rounds: the median round's figures, with every round's memory per phone and
    CPU per phone beside them (``perPhoneRounds``, ``cpuRounds``)."""
    rounds = [await measure_once(pages, driver, args, server, log_dir) for _ in range(args.rounds)]
    per_phone = [result["perPhoneMiB"] for result in rounds]
    median = statistics.median(per_phone)
    result = min(rounds, key=lambda result: abs(result["perPhoneMiB"] - median))
    return {
        **result,
        "perPhoneMiB": median,
        "perPhoneRounds": per_phone,
        "cpuRounds": [result["cpuPerPhonePct"] for result in rounds],
    }


def print_result(result: dict[str, Any]) -> None:
    pages = result["pages"]
    plural = "s" if pages > 1 else ""
    driver = "Playwright" if result["driver"] == "playwright" else "BareChromium"
    print(f"\n### {pages} page{plural}, one simulated phone each on scrcpy, driven by {driver}\n")
    rounds = result.get("perPhoneRounds", [result["perPhoneMiB"]])
    spread = f" (rounds: {', '.join(f'{value:.0f}' for value in rounds)})" if len(rounds) > 1 else ""
    print(
        f"**memory per phone: {result['perPhoneMiB']:.0f} MiB**{spread}; "
        f"CPU per phone: {result['cpuPerPhonePct']:.1f} %"
    )
    print(
        f"after a forced garbage collection in each page: {result['afterGcPerPhoneMiB']:.0f} MiB a phone "
        f"(the first page's renderer {result['rendererMiB']:.0f} → {result['rendererAfterGcMiB']:.0f} MiB)"
    )
    print(
        f"Chromium PSS (the median round): blank {result['blankMiB']:.0f} MiB, "
        f"loaded {result['loadedMiB']:.0f} MiB"
    )
    kinds = ", ".join(
        f"{k} {v:.1f}" for k, v in result["perKindMiB"].items() if ":" not in k[:5] and k != "total"
    )
    print(f"per phone by process kind (MiB): {kinds}")
    parts = ", ".join(f"{k[5:]} {v:.1f}" for k, v in result["perKindMiB"].items() if k.startswith("part:"))
    print(f"per phone by kind of page (MiB): {parts}")
    split = ", ".join(f"{k} {v:.1f}" for k, v in result["rendererSplitMiB"].items())
    print(f"the first page's renderer: {result['rendererMiB']:.0f} MiB; by mapping (MiB): {split}")
    allocators = ", ".join(f"{k} {v:.1f}" for k, v in result["rendererAllocatorsMiB"].items() if v >= 0.5)
    print(f"its allocators after the collection, as Chromium counts them (MiB): {allocators}")
    page = result["page"]
    heap = page.get("jsHeap", {})
    print(
        f"the page's own view: wasm linear memory {page['wasmLinear'] / MIB:.1f} MiB; Python blocks "
        f"{page['pythonBlocks']:,} ({page['pythonObjects']:,} objects tracked); JS heap used "
        f"{heap.get('used', 0) / MIB:.1f} of {heap.get('total', 0) / MIB:.1f} MiB; module files "
        f"{page['moduleFiles'] / MIB:.1f} MiB; canvases {page['canvases'] / MIB:.1f} MiB"
    )
    malloc = page.get("malloc") or {}
    if malloc:
        print(
            f"its C allocator: footprint {malloc['footprint'] / MIB:.1f} MiB, "
            f"in use {malloc['inUse'] / MIB:.1f}, free {malloc['free'] / MIB:.1f}"
        )
    print(f"modules imported: {page['modules']}")
    print(f"live view: {page['liveView']}; kept: {page['kept']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", default="1,4,8", help="comma-separated page counts, one run each")
    parser.add_argument("--settle", type=float, default=8.0, help="seconds before measuring")
    parser.add_argument("--cpu-window", type=float, default=10.0)
    parser.add_argument("--calls", type=int, default=3, help="calls of each tool a page serves before")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    parser.add_argument(
        "--driver",
        choices=("bare", "playwright", "both"),
        default="both",
        help="what drives Chromium (see above)",
    )
    parser.add_argument("--rounds", type=int, default=1, help="rounds of each N (a fresh Chromium each)")
    args = parser.parse_args(argv)
    log_dir = Path(tempfile.mkdtemp(prefix="bench-page-memory-"))
    home = log_dir / "home"
    home.mkdir()
    os.environ["PHONE_AGENT_HOME"] = str(home)  # the server's and the page link's (page_link)
    server = ServedPhoneAgent()
    results = []
    try:
        drivers = ("bare", "playwright") if args.driver == "both" else (args.driver,)
        for pages in (int(part) for part in args.pages.split(",")):
            for driver in drivers:
                result = asyncio.run(measure(pages, driver, args, server, log_dir))
                print_result(result)
                results.append(result)
    finally:
        server.stop()
    if args.json:
        args.json.write_text(json.dumps({"memory": results}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
