"""The phone farm against the local relay: latency of a trivial tool and calls per second with 3 phones vs 1.

    .venv/bin/python bench/bench_farm.py                 # 200 sequential calls, 300 concurrent
    .venv/bin/python bench/bench_farm.py --calls 100 --burst 150 --concurrency 24

Everything is real and on this machine: nats-server on farm/nats.conf, simulated phones, the project's
page in Debian's Chromium, ``phone-agent mcp`` spawned by the mcp SDK's stdio client. Measured:

1. get_device_status, sequential: the local relay (``phone-agent mcp`` serving the page) against the farm
   (the page joined with ``?farm=``, ``phone-agent mcp --farm``), same phone: p50 and p99.
2. get_device_status, ``--burst`` calls at ``--concurrency`` spread over 1 phone, then 3 phones: calls/s.
3. The broker alone: a nats-py client sending the relay's call frame to a page played by Python
   (``FarmPageService``, an instant phone) and waiting for its answer: what one call costs on the broker.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import time
from contextlib import AsyncExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "py"))

from phone_agent.farm.frames import farm_envelope  # noqa: E402
from phone_agent.relay.frames import CallFrame  # noqa: E402
from phone_agent.sim.server import SimulatedPhoneServer  # noqa: E402
from tests.farm.support import PAGE_USERS, FarmBroker, PythonPage, farm_mcp  # noqa: E402
from tests.support import (  # noqa: E402
    BOOT_TIMEOUT_MS,
    CHROMIUM,
    CHROMIUM_ARGS,
    ServedPhoneAgent,
    eventually,
    free_port,
    mcp_stdio_session,
    page_link,
)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def sequential_ms(session, calls: int, args: dict) -> list[float]:
    for _ in range(5):  # warm up
        await session.call_tool("get_device_status", args)
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        result = await session.call_tool("get_device_status", args)
        times.append((time.perf_counter() - started) * 1000)
        assert not result.is_error, result
    return times


def _process_table() -> dict[int, tuple[int, str, float]]:
    """Every process: pid → (parent pid, what it is, CPU seconds so far), from /proc."""
    import os

    tick = os.sysconf("SC_CLK_TCK")
    table = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        table[int(entry.name)] = (int(fields[1]), cmdline, (int(fields[11]) + int(fields[12])) / tick)
    return table


def _kind(cmdline: str) -> str:
    if "nats-server" in cmdline:
        return "nats-server"
    if "--type=renderer" in cmdline:
        return "chromium renderers (the pages)"
    if "chrom" in cmdline:
        return "chromium (browser, GPU, network)"
    if " mcp " in cmdline and "--farm" in cmdline:
        return "phone-agent mcp --farm (2 servers)"
    if " serve" in cmdline:
        return "phone-agent serve (page files, ADB bridge)"
    if "bench_farm" in cmdline:
        return "bench (MCP clients, simulated phones)"
    return "other (playwright driver, …)"


def cpu_by_kind() -> dict[str, float]:
    """CPU seconds so far of this process and its descendants, by kind."""
    import os

    table = _process_table()
    mine = {os.getpid()}
    grew = True
    while grew:
        grew = False
        for pid, (parent, _cmd, _cpu) in table.items():
            if parent in mine and pid not in mine:
                mine.add(pid)
                grew = True
    totals: dict[str, float] = {}
    for pid in mine:
        if pid in table:
            kind = _kind(table[pid][1])
            totals[kind] = totals.get(kind, 0.0) + table[pid][2]
    return totals


def cpu_per_call(before: dict[str, float], after: dict[str, float], calls: int) -> dict[str, str]:
    """Milliseconds of CPU per call, by kind of process, between two ``cpu_by_kind`` readings."""
    spent = {kind: after.get(kind, 0.0) - before.get(kind, 0.0) for kind in after}
    total = sum(spent.values())
    rows = {
        f"  CPU per call, {kind}": f"{ms * 1000 / calls:.2f} ms"
        for kind, ms in sorted(spent.items(), key=lambda item: -item[1])
        if ms > 0
    }
    rows["  CPU per call, all"] = f"{total * 1000 / calls:.2f} ms"
    return rows


async def burst_rate(sessions, serials: list[str], calls: int, concurrency: int) -> float:
    gate = asyncio.Semaphore(concurrency)

    async def one(session, serial):
        async with gate:
            result = await session.call_tool("get_device_status", {"device": serial})
            assert not result.is_error and result.structured_content["serial"] == serial, result

    plan = [(random.choice(sessions), random.choice(serials)) for _ in range(calls)]
    started = time.perf_counter()
    await asyncio.gather(*(one(session, serial) for session, serial in plan))
    return calls / (time.perf_counter() - started)


async def open_tab(context, url: str):
    page = await context.new_page()
    await page.goto(page_link(url))
    await page.wait_for_selector("html[data-state=ready]", timeout=BOOT_TIMEOUT_MS, state="attached")
    await page.wait_for_selector("html[data-phone=connected]", timeout=30_000, state="attached")
    await page.uncheck("#live-toggle")
    return page


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="sequential calls per path")
    parser.add_argument("--burst", type=int, default=300, help="concurrent calls per phone count")
    parser.add_argument("--concurrency", type=int, default=24)
    parser.add_argument(
        "--page-params", default="", help="more page URL parameters for the farm's pages, e.g. '&soonBatch=0'"
    )
    parser.add_argument(
        "--profile-page", action="store_true", help="also print cProfile of the page during the 1-phone burst"
    )
    options = parser.parse_args()
    from playwright.async_api import async_playwright

    broker = FarmBroker()
    broker.start()
    sims = [SimulatedPhoneServer("127.0.0.1", 0, serial=f"bench-{n}") for n in (1, 2, 3)]
    for sim in sims:
        await sim.start()
    serials = [sim.serial for sim in sims]
    figures: dict[str, str] = {}
    try:
        async with AsyncExitStack() as stack, async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            stack.push_async_callback(browser.close)

            # 1a. The local relay: phone-agent mcp serves the page, which holds phone 1.
            port = free_port()
            async with mcp_stdio_session("--port", str(port), "--self-check-delay", "0") as session:
                context = await browser.new_context()
                await open_tab(context, f"http://127.0.0.1:{port}/?device=tcp:127.0.0.1:{sims[0].port}")
                local = await sequential_ms(session, options.calls, {})
                await context.close()

            # 1b. The farm: pages served by phone-agent serve, joined to the broker.
            served = await asyncio.to_thread(ServedPhoneAgent)
            stack.callback(served.stop)
            context = await browser.new_context()
            stack.push_async_callback(context.close)
            base = f"{served.base}/?relayRetryMs=600000&farmHeartbeatMs=1000{options.page_params}"
            first = await open_tab(
                context, f"{base}&device=tcp:127.0.0.1:{sims[0].port}&farm={broker.ws_url(PAGE_USERS[0])}"
            )
            await first.wait_for_selector("html[data-farm=joined]", timeout=15_000, state="attached")
            sessions = [await stack.enter_async_context(farm_mcp(broker)) for _ in range(2)]
            await eventually(lambda: _listed(sessions[0], 1), timeout_s=15)
            farm = await sequential_ms(sessions[0], options.calls, {"device": serials[0]})
            p50_local, p50_farm = statistics.median(local), statistics.median(farm)
            figures["get_device_status p50 / p99, local relay"] = (
                f"{p50_local:.2f} / {percentile(local, 0.99):.2f} ms"
            )
            figures["get_device_status p50 / p99, farm"] = f"{p50_farm:.2f} / {percentile(farm, 0.99):.2f} ms"
            figures["farm p50 / local p50"] = f"{p50_farm / p50_local:.2f}"

            # 2. Calls per second, one phone then three, with the CPU each kind of process spent.
            cpu_before = cpu_by_kind()
            profiling = None
            if options.profile_page:
                profiling = asyncio.ensure_future(first.evaluate("(s) => window.phoneAgent.profileFor(s)", 3))
            one = await burst_rate(sessions, serials[:1], options.burst, options.concurrency)
            cpu_one = cpu_per_call(cpu_before, cpu_by_kind(), options.burst)
            if profiling is not None:
                print(await profiling)
            for user, sim in zip(PAGE_USERS[1:], sims[1:], strict=True):
                url = f"{base}&device=tcp:127.0.0.1:{sim.port}&farm={broker.ws_url(user)}"
                tab = await open_tab(context, url)
                await tab.wait_for_selector("html[data-farm=joined]", timeout=15_000, state="attached")
            await eventually(lambda: _listed(sessions[0], 3), timeout_s=15)
            await eventually(lambda: _listed(sessions[1], 3), timeout_s=15)
            cpu_before = cpu_by_kind()
            three = await burst_rate(sessions, serials, options.burst, options.concurrency)
            cpu_three = cpu_per_call(cpu_before, cpu_by_kind(), options.burst)
            figures["calls/s, 1 phone"] = f"{one:.0f}"
            figures.update({f"{name} (1 phone)": value for name, value in cpu_one.items()})
            figures["calls/s, 3 phones"] = f"{three:.0f}"
            figures.update({f"{name} (3 phones)": value for name, value in cpu_three.items()})
            figures["3 phones / 1 phone"] = f"{three / one:.2f}"
            await context.close()

        # 3. The broker alone: nats-py → a Python page → back.
        figures.update(await broker_round_trip(broker, options.calls * 5))
    finally:
        for sim in sims:
            await sim.close()
        broker.stop()
    import os

    figures["load average (1, 5, 15 min) at the end"] = " ".join(f"{v:.1f}" for v in os.getloadavg())
    width = max(len(name) for name in figures)
    for name, value in figures.items():
        print(f"{name:<{width}}  {value}")


async def _listed(session, count: int) -> bool:
    result = await session.call_tool("list_devices", {})
    return len(result.structured_content["devices"]) == count


def broker_cpu_s(broker: FarmBroker) -> float:
    """CPU seconds (user + system) nats-server has used so far."""
    import os

    fields = Path(f"/proc/{broker.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def broker_round_trip(broker: FarmBroker, calls: int) -> dict[str, str]:
    import nats

    page = PythonPage(broker, PAGE_USERS[0], "broker-only")
    await page.start()
    nc = await nats.connect(broker.nats_url())
    try:
        times = []
        cpu_before = broker_cpu_s(broker)
        for n in range(calls):
            envelope = farm_envelope("broker-only", CallFrame(f"b{n}", "get_device_status", {}).to_wire())
            started = time.perf_counter()
            reply = await nc.request(page.service.subject, envelope.encode(), timeout=5)
            times.append((time.perf_counter() - started) * 1000)
            assert json.loads(reply.data)["id"] == f"b{n}"
        cpu_per_call_us = (broker_cpu_s(broker) - cpu_before) / calls * 1e6
        return {
            "nats-server CPU per call (call frame + answer, incl. heartbeats)": f"{cpu_per_call_us:.1f} µs",
            "broker round trip p50 / p99 (nats-py → Python page → back)": (
                f"{statistics.median(times):.3f} / {percentile(times, 0.99):.3f} ms"
            ),
        }
    finally:
        await nc.close()
        await page.close()


if __name__ == "__main__":
    asyncio.run(main())
