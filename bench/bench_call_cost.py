"""What a call costs: CPU across every process a call crosses, and a tap against adb's own.

    .venv/bin/python bench/bench_call_cost.py [--calls 200] [--rounds 5] [--taps 20] [--profile]

One simulated phone (``phone-agent sim``), ``phone-agent mcp`` driven by the official MCP SDK's stdio
client, the shared server it starts, the page in Debian's Chromium (``BareChromium``: DevTools
``Runtime`` only, so nothing in the browser listens to the traffic) on the phone with its live view
(scrcpy) on, as a user has it; and Debian's ``adb`` with an isolated server of its own.

- **CPU per trivial call** (``get_latest_task``: answered by the page from its own state, no phone):
  the CPU time (user + system, /proc) of each process over ``--calls`` calls one after another, per
  call: the stdio front, the server, Chromium (all its processes), the phone, and the sum; the same
  for ``ping`` (the stdio front alone answers it) to show what the front's SDK costs by itself;
- **tap**: ``tap {x, y}`` through ``phone-agent mcp`` against ``adb -s SERIAL shell input tap X Y``
  (a subprocess, as a script runs it) on an empty spot of the launcher, interleaved rounds; medians,
  p10–p90, the ratio of the medians, and each path's CPU per tap (all processes).

``--profile`` prints cProfile's view of the page's Python (``window.phoneAgent.profileFor``) during a
burst of trivial calls. ``--json FILE`` writes the figures for scripts/perf_table.py.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "py"))
sys.path.insert(0, str(ROOT / "bench"))

from bare_chromium import BareChromium  # noqa: E402
from bench_device_tools import check, run_adb, stdio_session  # noqa: E402
from bench_page_memory import CONNECTED, ON_SCRCPY, cpu_ticks, descendants  # noqa: E402

from tests.support import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    DebianAdbServer,
    free_port,
    page_link,
    phone_agent_command,
)

TICKS = os.sysconf("SC_CLK_TCK")
EMPTY_SPOT = (540, 1300)  # nothing of the launcher there: a tap changes nothing
TRIVIAL = ("get_latest_task", {})


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} ms ({pct(values, 0.1):.1f}–{pct(values, 0.9):.1f})"


def pids_with(*words: str) -> list[int]:
    """Processes whose command line holds every one of ``words`` (the front, the server)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                line = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode()
                if all(word in line.split() for word in words):
                    found.append(int(entry))
    return found


class Processes:
    """The processes a call crosses, by role; their CPU time in ms."""

    def __init__(self, roles: dict[str, Callable[[], list[int]]]) -> None:
        self.roles = roles

    def cpu_ms(self) -> dict[str, float]:
        roles = self.roles.items()
        return {role: sum(cpu_ticks(pid) for pid in pids()) * 1000 / TICKS for role, pids in roles}

    async def per_call(
        self, calls: int, call: Callable[[], Awaitable[Any]]
    ) -> tuple[dict[str, float], float]:
        """CPU ms per call by role (and ``all``), and the wall ms per call."""
        before, started = self.cpu_ms(), time.perf_counter()
        for _ in range(calls):
            await call()
        wall = (time.perf_counter() - started) * 1000 / calls
        after = self.cpu_ms()
        used = {role: (after[role] - before[role]) / calls for role in self.roles}
        used["all"] = sum(used.values())
        return used, wall


async def run(args: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    sim_port, mcp_port = free_port(), free_port()
    sim = subprocess.Popen(
        [phone_agent_command(), "sim", "--port", str(sim_port)],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=(tmp / "sim.err").open("wb"),
    )  # fmt: skip
    adb = None
    try:
        for _ in range(200):
            with contextlib.suppress(OSError):
                _, writer = await asyncio.open_connection("127.0.0.1", sim_port)
                writer.close()
                break
            await asyncio.sleep(0.05)
        serial = f"127.0.0.1:{sim_port}"
        adb_home = tmp / "adb-home"
        adb_home.mkdir()
        adb = await asyncio.to_thread(DebianAdbServer, adb_home)
        adb_env = {**adb.env, "ANDROID_ADB_SERVER_PORT": str(adb.port)}
        await run_adb(adb_env, "connect", serial)
        if await adb.wait_for_state(serial, "device") != "device":
            raise RuntimeError("adb never saw the simulated phone")
        async with contextlib.AsyncExitStack() as stack:
            session = await stack.enter_async_context(
                stdio_session(
                    phone_agent_command(),
                    ["mcp", "--port", str(mcp_port), "--self-check-delay", "0"],
                    env=dict(os.environ),  # the SDK passes on only a few variables: PHONE_AGENT_HOME too
                    cwd=str(ROOT),
                )
            )
            stack.push_async_callback(
                asyncio.to_thread, subprocess.run, [phone_agent_command(), "stop", "--port", str(mcp_port)],
                capture_output=True,
            )  # fmt: skip
            browser = await stack.enter_async_context(BareChromium(CHROMIUM, CHROMIUM_ARGS))
            tab = await browser.new_tab(
                page_link(f"http://127.0.0.1:{mcp_port}/?device=tcp:127.0.0.1:{sim_port}")
            )
            await tab.wait_for(CONNECTED, timeout=120)
            await tab.wait_for("document.querySelector('.mcp-badge--ready') !== null", timeout=60)
            with contextlib.suppress(TimeoutError):
                await tab.wait_for(ON_SCRCPY, timeout=60)
            source = await tab.evaluate(
                "() => document.querySelector('canvas#screen')?.dataset.source || 'screencap'"
            )
            assert browser._process is not None
            chromium = browser._process.pid
            port = str(mcp_port)
            procs = Processes({
                "front": lambda: pids_with("mcp", "--port", port),
                "server": lambda: pids_with("serve", "--port", port),
                "chromium": lambda: descendants(chromium),
                "phone": lambda: [sim.pid],
            })  # fmt: skip
            return await measure(args, session, procs, tab, adb_env, serial, source)
    finally:
        if adb is not None:
            adb.stop()
        sim.terminate()
        sim.wait(10)


async def measure(
    args: argparse.Namespace, session: Any, procs: Processes, tab: Any, adb_env: dict[str, str], serial: str,
    source: str,
) -> dict[str, Any]:  # fmt: skip
    async def trivial() -> None:  # its answer, "no task has run yet", is the page's own: every hop, no phone
        answer = await session.call_tool(*TRIVIAL)
        if not answer.content:
            raise RuntimeError(f"{TRIVIAL[0]} answered nothing")

    async def ours_tap() -> None:
        check(await session.call_tool("tap", {"x": EMPTY_SPOT[0], "y": EMPTY_SPOT[1]}), "tap")

    async def adb_tap() -> None:
        await run_adb(adb_env, "-s", serial, "shell", "input", "tap", *map(str, EMPTY_SPOT))

    for _ in range(10):  # warm-up: first calls load code on every hop
        await trivial()
        await ours_tap()
        await adb_tap()
    await session.send_ping()
    result: dict[str, Any] = {"liveView": source}
    result["trivialCpu"], result["trivialWall"] = await procs.per_call(args.calls, trivial)
    result["pingCpu"], result["pingWall"] = await procs.per_call(args.calls, session.send_ping)
    taps: dict[str, list[float]] = {"ours": [], "adb": []}
    tap_cpu: dict[str, list[float]] = {"ours": [], "adb": []}
    for number in range(args.rounds):
        order = (("ours", ours_tap), ("adb", adb_tap))
        for name, call in order if number % 2 == 0 else order[::-1]:
            before = procs.cpu_ms()
            for _ in range(args.taps):
                started = time.perf_counter()
                await call()
                taps[name].append((time.perf_counter() - started) * 1000)
            after = procs.cpu_ms()
            tap_cpu[name].append(sum(after.values()) - sum(before.values()))
    result["taps"] = taps
    result["tapCpu"] = {name: sum(values) / (args.rounds * args.taps) for name, values in tap_cpu.items()}
    if args.profile:
        burst = asyncio.ensure_future(tab.evaluate("() => window.phoneAgent.profileFor(3, 30)"))
        while not burst.done():
            await trivial()
        result["profile"] = burst.result()
    return result


def report(result: dict[str, Any]) -> None:
    print(f"\n### What a call costs (live view: {result['liveView']})\n")
    print("| call | wall per call | CPU per call: front | server | Chromium | phone | all |")
    print("|---|---|---|---|---|---|---|")
    for name, cpu, wall in (
        (f"trivial ({TRIVIAL[0]})", result["trivialCpu"], result["trivialWall"]),
        ("ping (the front alone)", result["pingCpu"], result["pingWall"]),
    ):
        print(
            f"| {name} | {wall:.1f} ms | {cpu['front']:.2f} | {cpu['server']:.2f} | {cpu['chromium']:.2f} "
            f"| {cpu['phone']:.2f} | **{cpu['all']:.2f} ms** |"
        )
    ours, adb = result["taps"]["ours"], result["taps"]["adb"]
    ratio = statistics.median(ours) / statistics.median(adb)
    print("\n| tap | median (p10–p90) | CPU per tap, all processes |")
    print("|---|---|---|")
    print(f"| `phone-agent mcp` tap {{x, y}} | {spread(ours)} | {result['tapCpu']['ours']:.1f} ms |")
    print(f"| `adb shell input tap` | {spread(adb)} | {result['tapCpu']['adb']:.1f} ms |")
    print(f"\ntap ratio (ours / adb, medians): **{ratio:.2f}×** (target ≤ 1.0×)")
    print(f"trivial call CPU, all processes: **{result['trivialCpu']['all']:.2f} ms** (target ≤ 6 ms)")
    if "profile" in result:
        print("\nThe page's Python during a burst of trivial calls (cProfile):\n")
        print(result["profile"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="trivial calls (and pings) measured")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--taps", type=int, default=20, help="taps per path and round")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bench-call-cost-"))
    (tmp / "home").mkdir()
    os.environ["PHONE_AGENT_HOME"] = str(tmp / "home")  # the front's, its server's and the page link's
    result = asyncio.run(run(args, tmp))
    report(result)
    if args.json:
        args.json.write_text(json.dumps({"callCost": result}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
