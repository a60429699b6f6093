"""Channel A under load and one call at a time: a call the page answers against ``tools/list``,
which the MCP server answers alone (the SDK's own cost), as ratios measured in one run.

    .venv/bin/python bench/bench_relay_load.py [--calls 1000] [--inflight 16] [--rounds 3]
        [--clients 4] [--latency 300]

The page is the real page in Debian's headless Chromium, connected to ``phone-agent mcp`` (the mcp
SDK's stdio client spawns it, as MCP clients do). No phone: the page answers from memory.

1. Load: ``--calls`` calls with ``--inflight`` in flight through one client — ``tools/list``, then
   ``get_task_result`` of an id nobody has (the page answers it), in interleaved rounds. Every
   page answer must name its own call's id (0 lost, 0 mismatched). Then the same spread over
   ``--clients`` clients at once (stdio: each spawns its own ``phone-agent mcp`` and page, until
   streamable HTTP gives one server many clients). The server's RSS is read from /proc before and
   after.
2. Latency: one call at a time, interleaved: ``tools/list`` and ``abort_task`` with no task running
   (answered from memory by the page). The difference of the medians is what the relay and the page
   add to a call.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.support import CHROMIUM, CHROMIUM_ARGS, free_port, mcp_stdio_session, page_link  # noqa: E402

# Times, in the page, from a relay frame's message event to the page's answer leaving (send): what the
# page itself spends on a call, apart from the browser's and the server's share.
PAGE_TIMER = """
window.__relayPageMs = [];
const NativeWebSocket = window.WebSocket;
window.WebSocket = function (url, protocols) {
  const ws = protocols === undefined ? new NativeWebSocket(url) : new NativeWebSocket(url, protocols);
  if (!String(url).includes("/adb")) {
    let received = 0;
    ws.addEventListener("message", () => { received = performance.now(); });
    const send = ws.send.bind(ws);
    ws.send = (data) => { window.__relayPageMs.push(performance.now() - received); return send(data); };
  }
  return ws;
};
window.WebSocket.prototype = NativeWebSocket.prototype;
Object.assign(window.WebSocket, {CONNECTING: 0, OPEN: 1, CLOSING: 2, CLOSED: 3});
"""


def server_pid(port: int) -> int | None:
    """The ``phone-agent mcp --port PORT`` process (the stdio client's child)."""
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"mcp" in argv and str(port).encode() in argv and any(b"phone-agent" in a for a in argv):
            return int(proc.name)
    return None


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@dataclass
class Burst:
    """One burst of calls: wall time, per-call latencies, and what went wrong."""

    seconds: float = 0.0
    latencies: list[float] = field(default_factory=list)
    lost: int = 0
    mismatched: int = 0

    @property
    def rate(self) -> float:
        return len(self.latencies) / self.seconds if self.seconds else 0.0


Call = Callable[[Any, int], Awaitable[bool]]  # (session, call number) -> answered as it should


async def list_tools(session: Any, _n: int) -> bool:
    result = await session.list_tools()
    return len(result.tools) >= 6


def task_lookup(tag: str) -> Call:
    async def call(session: Any, n: int) -> bool:
        task_id = f"{tag}-{n}"
        result = await session.call_tool("get_task_result", {"taskId": task_id})
        text = result.content[0].text if result.content else ""
        return bool(result.is_error) and f'"{task_id}"' in text

    return call


async def abort_task(session: Any, _n: int) -> bool:
    result = await session.call_tool("abort_task", {})
    return bool(result.is_error) and "No task is currently running." in result.content[0].text


async def burst(sessions: list[Any], calls: int, inflight: int, call: Call, timeout: float = 60.0) -> Burst:
    """``calls`` calls spread evenly over ``sessions``, ``inflight`` at a time in all."""
    out = Burst()
    gate = asyncio.Semaphore(inflight)

    async def one(n: int) -> None:
        async with gate:
            start = time.perf_counter()
            try:
                ok = await asyncio.wait_for(call(sessions[n % len(sessions)], n), timeout)
            except TimeoutError:
                out.lost += 1
                return
            out.latencies.append(time.perf_counter() - start)
            if not ok:
                out.mismatched += 1

    start = time.perf_counter()
    await asyncio.gather(*(one(n) for n in range(calls)))
    out.seconds = time.perf_counter() - start
    return out


@contextlib.asynccontextmanager
async def served_client(browser: Any) -> AsyncIterator[tuple[Any, int, Any]]:
    """A stdio MCP session to a fresh ``phone-agent mcp``, its page open in ``browser`` (a browser
    context); yields the session, the server's pid and the page."""
    port = free_port()
    async with mcp_stdio_session("--port", str(port), "--self-check-delay", "0") as session:
        page = await browser.new_page()
        await page.goto(page_link(f"http://127.0.0.1:{port}/"))
        await page.wait_for_selector(".mcp-badge--ready", timeout=60_000)
        pid = server_pid(port)
        assert pid is not None, "cannot find the server process"
        try:
            yield session, pid, page
        finally:
            await page.close()


def spread(values: list[float], fmt: str = "{:.0f}") -> str:
    return f"{fmt.format(statistics.median(values))} ({fmt.format(min(values))}–{fmt.format(max(values))})"


async def load(browser: Any, args: argparse.Namespace, report: list[str]) -> None:
    async with served_client(browser) as (session, pid, _page):
        await burst([session], 200, args.inflight, list_tools)  # warm both paths up
        await burst([session], 200, args.inflight, task_lookup("warm"))
        await asyncio.sleep(1.0)
        rss_start = rss_kib(pid)
        lists, pages = [], []
        for round_number in range(args.rounds):
            lists.append(await burst([session], args.calls, args.inflight, list_tools))
            pages.append(await burst([session], args.calls, args.inflight, task_lookup(f"r{round_number}")))
        await asyncio.sleep(2.0)
        rss_end = rss_kib(pid)
    report.append(f"## one stdio client: {args.calls} calls, {args.inflight} in flight, {args.rounds} rounds")
    summarize(report, lists, pages)
    report.append(
        f"server RSS {rss_start / 1024:.1f} MiB after warm-up → {rss_end / 1024:.1f} MiB after the run "
        f"({rss_end / rss_start - 1:+.1%}; target within 10 %)"
    )

    if args.clients > 1:
        async with contextlib.AsyncExitStack() as stack:
            clients = [await stack.enter_async_context(served_client(browser)) for _ in range(args.clients)]
            sessions = [session for session, _pid, _page in clients]
            pids = [pid for _session, pid, _page in clients]
            await burst(sessions, 200, args.inflight, list_tools)
            await burst(sessions, 200, args.inflight, task_lookup("warm"))
            await asyncio.sleep(1.0)
            start = [rss_kib(pid) for pid in pids]
            lists, pages = [], []
            for round_number in range(args.rounds):
                lists.append(await burst(sessions, args.calls, args.inflight, list_tools))
                lookup = task_lookup(f"m{round_number}")
                pages.append(await burst(sessions, args.calls, args.inflight, lookup))
            await asyncio.sleep(2.0)
            end = [rss_kib(pid) for pid in pids]
        report.append("")
        report.append(
            f"## {args.clients} stdio clients at once (each its own server and page): {args.calls} calls "
            f"in all, {args.inflight} in flight in all, {args.rounds} rounds"
        )
        summarize(report, lists, pages)
        growth = ", ".join(f"{e / s - 1:+.1%}" for s, e in zip(start, end, strict=True))
        report.append(f"server RSS growth after the run: {growth} (target within 10 %)")


def summarize(report: list[str], lists: list[Burst], pages: list[Burst]) -> None:
    for name, bursts in (("tools/list (server alone)", lists), ("get_task_result (the page)", pages)):
        rates = [b.rate for b in bursts]
        p50 = [statistics.median(b.latencies) * 1000 for b in bursts]
        p99 = [percentile(b.latencies, 0.99) * 1000 for b in bursts]
        lost = sum(b.lost for b in bursts)
        mismatched = sum(b.mismatched for b in bursts)
        report.append(
            f"{name:28} {spread(rates)} calls/s   p50 {spread(p50, '{:.1f}')} ms   "
            f"p99 {spread(p99, '{:.1f}')} ms   lost {lost}, mismatched {mismatched}"
        )
    ratios = [p.rate / lst.rate for lst, p in zip(lists, pages, strict=True)]
    report.append(f"page calls/s ÷ tools/list calls/s, per round: {spread(ratios, '{:.2f}')} (target ≥ 0.8)")


async def latency(browser: Any, args: argparse.Namespace, report: list[str]) -> None:
    async with served_client(browser) as (session, _pid, page):
        for n in range(50):
            await list_tools(session, n)
            await abort_task(session, n)
        await page.evaluate("window.__relayPageMs = []")
        lists, aborts, bad = [], [], 0
        for n in range(args.latency):
            start = time.perf_counter()
            await list_tools(session, n)
            lists.append(time.perf_counter() - start)
            start = time.perf_counter()
            bad += not await abort_task(session, n)
            aborts.append(time.perf_counter() - start)
        in_page = await page.evaluate("window.__relayPageMs")
    lp50, ap50 = statistics.median(lists) * 1000, statistics.median(aborts) * 1000
    paired = statistics.median(a - b for a, b in zip(aborts, lists, strict=True)) * 1000
    report.append("")
    report.append(f"## one call at a time, {args.latency} of each, interleaved")
    report.append(f"tools/list          p50 {lp50:.2f} ms   p99 {percentile(lists, 0.99) * 1000:.2f} ms")
    report.append(
        f"abort_task (page)   p50 {ap50:.2f} ms   p99 {percentile(aborts, 0.99) * 1000:.2f} ms   wrong {bad}"
    )
    report.append(
        f"relay + page add    p50 {ap50 - lp50:.2f} ms; median of the pairs' differences "
        f"{paired:.2f} ms (target ≤ 1.5 ms)"
    )
    report.append(
        f"  of which the page (message event → send) p50 {statistics.median(in_page):.2f} ms, "
        f"p90 {percentile(in_page, 0.9):.2f} ms"
    )


async def main(args: argparse.Namespace) -> None:
    from playwright.async_api import async_playwright

    report: list[str] = []
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        browser = await chromium.new_context()
        await browser.add_init_script(PAGE_TIMER)
        try:
            if args.latency:
                await latency(browser, args, report)
                print("\n".join(report[-5:]), flush=True)
            if args.calls:
                await load(browser, args, report)
        finally:
            await chromium.close()
    print("\n".join(report))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--inflight", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--latency", type=int, default=300, help="calls of each kind one at a time (0: skip)")
    asyncio.run(main(parser.parse_args()))
