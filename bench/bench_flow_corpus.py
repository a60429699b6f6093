"""The flow corpus on the simulated phone: every flow of tests/flows/corpus tagged ``sim`` (Settings,
Messages, Catalog, Login Demo and the system commands), run through ``run_flow`` — the page's one
dispatch in CPython, the project's ADB client, the simulated phone, flow scripts in the page's QuickJS
engine run by Node — in a few rounds, each round in another order.

    .venv/bin/python bench/bench_flow_corpus.py [--rounds 3] [--tags sim] [--realistic] [--only settings/]

Prints the pass rate (and each failure's step and error), then the time per command: for each command,
how many steps ran, their p50 and p90, and the min–max of the rounds' medians. As a reference measured in
the same rounds, the device tools the commands stand on, called alone through the same dispatch (``tap``
by point, ``list_elements``, ``press_key``), so a command's figure reads as so many of those.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "py"))

from phone_agent.adb.device import AdbDevice  # noqa: E402
from phone_agent.adb.keys import generate_private_key  # noqa: E402
from phone_agent.flows.flow_reader import read_flow  # noqa: E402
from phone_agent.server.adb_tcp import connect_adbd  # noqa: E402
from phone_agent.server.flow_files import FlowFile, load_workspace  # noqa: E402
from phone_agent.server.node_scripts import NodeScriptEngine  # noqa: E402
from phone_agent.sim.realistic import RealisticProfile  # noqa: E402
from phone_agent.sim.server import SimulatedPhoneServer  # noqa: E402
from phone_agent.tools.dispatch import ToolDispatcher  # noqa: E402
from phone_agent.tools.spec import Channel  # noqa: E402

CORPUS = ROOT / "tests" / "flows" / "corpus"
REFERENCE_CALLS: dict[str, dict[str, Any]] = {
    "tap (point)": {"tool": "tap", "args": {"x": 540, "y": 1200}},
    "list_elements": {"tool": "list_elements", "args": {"settle": False}},
    "press_key": {"tool": "press_key", "args": {"key": "volume_up"}},
}


def spread(values: list[float]) -> str:
    if not values:
        return "—"
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, int(len(ordered) * 0.9))]
    return f"{statistics.median(ordered):8.1f} {p90:8.1f}"


async def run_flow(service: ToolDispatcher, flow: FlowFile) -> dict[str, Any]:
    arguments = {"yaml": flow.text, "path": flow.relative, "files": flow.files, "media": flow.media}
    result = await service.dispatch("run_flow", arguments, Channel.RELAY)
    if result.get("isError"):
        return {
            "passed": False,
            "steps": [],
            "failure": {"error": result["content"][0]["text"], "command": ""},
        }
    return result["structuredContent"]


async def main(args: argparse.Namespace) -> int:
    workspace = load_workspace(CORPUS, args.tags.split(","), [])
    flows = [workspace.flows[name] for name in [*workspace.plan.sequence, *workspace.plan.flows]]
    flows = [flow for flow in flows if flow.relative.startswith(args.only)]
    print(f"{len(flows)} flows tagged {args.tags} in {CORPUS.relative_to(ROOT)}, {args.rounds} rounds")
    realistic = RealisticProfile(seed=34) if args.realistic else None
    sim = SimulatedPhoneServer("127.0.0.1", 0, realistic=realistic)
    await sim.start()
    key = generate_private_key()
    sim.trust_key(key.public_key("bench@flows"))
    client = await connect_adbd("127.0.0.1", sim.port, key)
    service = ToolDispatcher()
    service.device = AdbDevice(client, transport="tcp")
    service.script_engine = NodeScriptEngine()
    per_command: dict[str, list[float]] = defaultdict(list)
    per_command_rounds: dict[str, list[float]] = defaultdict(list)
    reference: dict[str, list[float]] = defaultdict(list)
    reference_rounds: dict[str, list[float]] = defaultdict(list)
    failures: list[str] = []
    passed = total = 0
    flow_seconds: list[float] = []
    shuffler = random.Random(34)
    try:
        for round_index in range(args.rounds):
            order = list(flows)
            shuffler.shuffle(order)
            this_round: dict[str, list[float]] = defaultdict(list)
            for flow in order:
                sim.phone.reset()
                started = time.perf_counter()
                report = await run_flow(service, flow)
                flow_seconds.append(time.perf_counter() - started)
                total += 1
                passed += bool(report.get("passed"))
                if not report.get("passed") and round_index == 0:
                    failure = report.get("failure") or {}
                    failures.append(
                        f"  {flow.relative}: {failure.get('command', '')}: {failure.get('error', '')[:300]}"
                    )
                names = {command.line: command.name for command in read_flow(
                    flow.text, flow.files, None, "", flow.media, flow.relative).commands}  # fmt: skip
                for step in report.get("steps", []):
                    if step["status"] == "passed" and "hook" not in step:
                        name = names.get(step.get("line", 0), step["command"].split(":")[0])
                        this_round[name].append(step["durationMs"])
                # the reference, interleaved with the flows
                for label, call in REFERENCE_CALLS.items():
                    began = time.perf_counter()
                    await service.dispatch(call["tool"], call["args"], Channel.RELAY)
                    reference[label].append((time.perf_counter() - began) * 1000)
            for name, values in this_round.items():
                per_command[name] += values
                per_command_rounds[name].append(statistics.median(values))
            for label in REFERENCE_CALLS:
                reference_rounds[label].append(statistics.median(reference[label][-len(order) :]))
    finally:
        await client.close()
        await sim.close()
    print(f"\npass rate: {passed}/{total} flow runs ({100 * passed / max(total, 1):.1f} %); "
          f"a flow takes {statistics.median(flow_seconds):.2f} s (median)")  # fmt: skip
    if failures:
        print("failures (first round):")
        print("\n".join(failures))
    print(f"\n{'command':28} {'steps':>6} {'p50 ms':>8} {'p90 ms':>8}   rounds' medians   × tap")
    tap = statistics.median(reference["tap (point)"]) if reference["tap (point)"] else 1.0
    for name in sorted(per_command, key=lambda name: -statistics.median(per_command[name])):
        values = per_command[name]
        medians = per_command_rounds[name]
        print(f"{name:28} {len(values):6d} {spread(values)}   {min(medians):7.1f}–{max(medians):<7.1f}"
              f"  {statistics.median(values) / tap:6.1f}")  # fmt: skip
    print("\nreference, the same dispatch, one tool call:")
    for label, values in reference.items():
        medians = reference_rounds[label]
        print(f"{label:28} {len(values):6d} {spread(values)}   {min(medians):7.1f}–{max(medians):<7.1f}")
    return 0 if passed == total else 1


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tags", default="sim")
    parser.add_argument("--only", default="", help="only the flows whose path starts so (e.g. catalog/)")
    parser.add_argument(
        "--realistic", action="store_true", help="the simulated phone with a real one's costs"
    )
    sys.exit(asyncio.run(main(parser.parse_args())))
