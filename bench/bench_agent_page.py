"""The agent's overhead per step in the page itself (Pyodide 3.14 in Chromium), outside the model's
and the phone's time. Target: ≤ 50 ms per step.

    .venv/bin/python bench/bench_agent_page.py [--steps 20] [--runs 3] [--actions 1 3] [--latency 100]
                                               [--probe] [--no-sim]

The page runs real PlanAndResolveAgent tasks (``window.phoneAgent.benchAgent``, in
py/phone_agent/browser/agent_bench.py) against an in-memory phone whose screen alternates between two
real 1080x2400 screenshots of the simulated phone after each action (so every look is a new image to
scale). A step is N taps and a finish_step (N + 1 model turns, N new screenshots: a step starts from
the screen the previous one left); ``--actions`` gives the shapes to run. Five set-ups, so the
differences say what costs what:

- null:   the phone answers at once; pre-recorded SSE through the real client; image work replaced
          by fixed bytes: the agent's own Python;
- canvas: the same, with the page's OffscreenCanvas codec scaling every screenshot (1080x2400 PNG →
          461x1024 JPEG) and rendering the 48x96 thumbnail;
- fetch:  the canvas codec and the page's fetch client streaming each answer from a scripted model
          server on loopback (CORS preflight, SSE read chunk by chunk); the server answers at once;
- fetch + phone L ms: the same, with each screenshot, UI dump and app query of the phone taking L ms
          (``--latency``; a real phone takes 0.1–3 s); the figure is the time when neither the phone
          nor the model was working, i.e. what the agent adds to the task;
- on the simulated phone (``phone-agent sim`` in its own process, through the bridge; skip with
          ``--no-sim``): canvas and fetch again, each action an app switch so every look is a new
          screen, every phone call timed and the phone's busy time subtracted.

``--probe`` also times the stages of one canvas ``scale`` alone (median of 10): the Blob,
createImageBitmap, drawImage, convertToBlob, arrayBuffer, to_bytes, and the codec's whole call.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "py"))

from phone_agent.agent.benchkit import script  # noqa: E402
from phone_agent.sim.android.phone import VirtualPhone  # noqa: E402
from tests.agent.model_server import ScriptedModelServer, call  # noqa: E402
from tests.support import (  # noqa: E402
    CHROMIUM,
    CHROMIUM_ARGS,
    ServedPhoneAgent,
    free_port,
    page_link,
    phone_agent_command,
)

THINKING = " ".join(f"word{i}" for i in range(40))


def fill_script(model: ScriptedModelServer, steps: int, actions: int, switch_apps: bool = False) -> None:
    model.script.clear()
    for name, args in script(steps, actions, switch_apps):
        model.add(call(name, THINKING, **args))


def screens() -> list[str]:
    """Two real screens of the simulated phone (the bench phone alternates them after each action)."""
    phone = VirtualPhone()
    phone.clock = lambda: "12:00"
    shots = []
    for package in ("com.android.settings", "com.google.android.apps.messaging"):
        phone.launch(package)
        shots.append(base64.b64encode(phone.screenshot_png()).decode())
    return shots


async def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--actions", type=int, nargs="+", default=[1, 3], help="taps per step (each shape)")
    parser.add_argument(
        "--latency", type=float, default=100.0, help="the phone's ms per screenshot, UI dump, app query"
    )
    parser.add_argument("--probe", action="store_true", help="also time the stages of one canvas scale")
    parser.add_argument("--no-sim", action="store_true", help="skip the tasks on the simulated phone")
    args = parser.parse_args(argv)
    from playwright.async_api import async_playwright

    pngs = ",".join(screens())
    served = await asyncio.to_thread(ServedPhoneAgent)
    model = await ScriptedModelServer(allow_origin=served.base).start()
    sim_port = free_port()
    sim = None
    if not args.no_sim:
        sim = subprocess.Popen(  # the phone in its own process, as a real one would be
            [phone_agent_command(), "sim", "--port", str(sim_port)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    try:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = await browser.new_page()
            if sim is None:
                await page.goto(page_link(f"{served.base}/"))
                await page.wait_for_selector("html[data-state=ready]", state="attached", timeout=60_000)
            else:
                await page.goto(page_link(f"{served.base}/?device=tcp:127.0.0.1:{sim_port}"))
                await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=60_000)
                await page.uncheck("#live-toggle")  # the benchmarks alone use the phone and the page
            version = await page.evaluate("navigator.userAgent.match(/Chrom(e|ium)\\/[0-9.]+/)[0]")
            print(f"page in {version}, Pyodide (Python 3.14), {args.steps}-step tasks, {args.runs} runs")

            async def run(variant: str, steps: int, actions: int, latency: float, on_phone: bool = False):
                if variant == "fetch":
                    fill_script(model, steps, actions, on_phone)
                return await page.evaluate(
                    "([v, s, png, url, l, a, p]) => window.phoneAgent.benchAgent(v, s, png, url, l, a, p)",
                    [variant, steps, pngs, model.base_url, latency, actions, on_phone],
                )

            for actions in args.actions:
                print(f"-- steps of {actions} tap(s) and a finish_step: {actions + 1} model turns per step")
                for variant, latency in (("null", 0), ("canvas", 0), ("fetch", 0), ("fetch", args.latency)):
                    await run(variant, 2, actions, latency)  # warm up: imports, JIT, first connection
                    results = [await run(variant, args.steps, actions, latency) for _ in range(args.runs)]
                    key = "aloneMsPerStep" if latency else "msPerStep"
                    per_step = statistics.median(r[key] for r in results)
                    per_turn = statistics.median(r[key.replace("Step", "Turn")] for r in results)
                    codec = results[len(results) // 2]["codecMsPerTurn"]
                    label = f"{variant} + phone {latency:.0f} ms" if latency else variant
                    spread = ", ".join(f"{r[key]:.1f}" for r in results)
                    print(
                        f"{label:22s} {per_step:6.1f} ms per step, {per_turn:5.1f} ms per model turn "
                        f"(runs: {spread}; codec per turn: scale {codec['scale']:.1f}, "
                        f"decode {codec['decode']:.1f})"
                    )
                    if latency:
                        wall = statistics.median(r["msPerTurn"] for r in results)
                        busy = statistics.median(r["phoneBusyMs"] / r["turns"] for r in results)
                        print(f"{'':22s} wall {wall:.1f} ms per model turn, the phone busy {busy:.1f}")
            if sim is not None:
                print("-- on the simulated phone (its own process, over the bridge), phone time subtracted")
                for actions in args.actions:
                    for variant in ("canvas", "fetch"):
                        await run(variant, 2, actions, 0, True)
                        results = [await run(variant, args.steps, actions, 0, True) for _ in range(args.runs)]
                        per_step = statistics.median(r["aloneMsPerStep"] for r in results)
                        per_turn = statistics.median(r["aloneMsPerTurn"] for r in results)
                        wall = statistics.median(r["msPerTurn"] for r in results)
                        busy = statistics.median(r["phoneBusyMs"] / r["turns"] for r in results)
                        codec = results[len(results) // 2]["codecMsPerTurn"]
                        spread = ", ".join(f"{r['aloneMsPerStep']:.1f}" for r in results)
                        print(
                            f"{actions} action(s), {variant:6s} {per_step:6.1f} ms per step alone, "
                            f"{per_turn:5.1f} per model turn (runs: {spread}); wall {wall:.1f} ms per "
                            f"turn, the phone busy {busy:.1f}; scale {codec['scale']:.1f} per turn"
                        )
            if args.probe:
                stages = await page.evaluate(
                    "([png]) => window.phoneAgent.benchAgent('probe', 10, png, '')", [pngs.split(",")[0]]
                )
                print("one scale, by stage: " + ", ".join(f"{k} {v:.1f} ms" for k, v in stages.items()))
            await browser.close()
    finally:
        if sim is not None:
            sim.terminate()
            sim.wait(timeout=10)
        await model.stop()
        await asyncio.to_thread(served.stop)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
