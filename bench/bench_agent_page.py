"""The agent's overhead per step in the page itself (Pyodide 3.14 in Chromium), outside the model's
and the phone's time. Target: ≤ 50 ms per step.

    .venv/bin/python bench/bench_agent_page.py [--steps 20] [--runs 3] [--probe]

The page runs real PlanAndResolveAgent tasks (``window.phoneAgent.benchAgent``, in
py/phone_agent/browser/agent_bench.py) against an instant in-memory phone that returns the simulated
phone's real 1080x2400 Settings screenshot. Each step is 3 taps and a finish_step (4 model turns).
Three set-ups, so the differences say what costs what:

- null:   pre-recorded SSE through the real client; image work replaced by fixed bytes;
- canvas: the same, with the page's OffscreenCanvas codec scaling every screenshot (1080x2400 PNG →
          461x1024 JPEG) and rendering the 48x96 thumbnail;
- fetch:  the canvas codec and the page's fetch client streaming each answer from a scripted model
          server on loopback (CORS preflight, SSE read chunk by chunk); the server answers at once.

``--probe`` also times the stages of one canvas ``scale`` alone (median of 10): the Blob,
createImageBitmap, drawImage, convertToBlob, arrayBuffer, to_bytes, and the codec's whole call.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "py"))

from phone_agent.sim.android import VirtualPhone  # noqa: E402
from tests.agent.model_server import ScriptedModelServer, call  # noqa: E402
from tests.support import CHROMIUM, CHROMIUM_ARGS, ServedPhoneAgent  # noqa: E402

THINKING = " ".join(f"word{i}" for i in range(40))


def fill_script(model: ScriptedModelServer, steps: int) -> None:
    plan = [{"title": f"Step {i}", "description": "Tap around."} for i in range(steps)]
    model.script.clear()
    model.add(call("submit_plan", THINKING, steps=plan))
    for i in range(steps):
        for j in range(3):
            model.add(call("tap", THINKING, x=100 + i % 300, y=200 + j * 50))
        model.add(call("finish_step", THINKING, summary=f"step {i} done"))


async def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--probe", action="store_true", help="also time the stages of one canvas scale")
    args = parser.parse_args(argv)
    from playwright.async_api import async_playwright

    phone = VirtualPhone()
    phone.launch("com.android.settings")
    png_b64 = base64.b64encode(phone.screenshot_png()).decode()
    served = await asyncio.to_thread(ServedPhoneAgent)
    model = await ScriptedModelServer(allow_origin=served.base).start()
    try:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = await browser.new_page()
            await page.goto(f"{served.base}/")
            await page.wait_for_selector("html[data-state=ready]", state="attached", timeout=60_000)
            version = await page.evaluate("navigator.userAgent.match(/Chrom(e|ium)\\/[0-9.]+/)[0]")
            print(f"page in {version}, Pyodide (Python 3.14), {args.steps}-step tasks, 4 turns per step")

            async def run(variant: str, steps: int) -> dict:
                if variant == "fetch":
                    fill_script(model, steps)
                return await page.evaluate(
                    "([v, s, png, url]) => window.phoneAgent.benchAgent(v, s, png, url)",
                    [variant, steps, png_b64, model.base_url],
                )

            for variant in ("null", "canvas", "fetch"):
                await run(variant, 2)  # warm up: imports, JIT of the canvas paths, first connection
                results = [await run(variant, args.steps) for _ in range(args.runs)]
                per_step = statistics.median(r["msPerStep"] for r in results)
                per_turn = statistics.median(r["msPerTurn"] for r in results)
                spread = ", ".join(f"{r['msPerStep']:.1f}" for r in results)
                codec = results[len(results) // 2]["codecMsPerTurn"]
                spread += f" ms per step; codec per turn: scale {codec['scale']:.1f}"
                spread += f", decode {codec['decode']:.1f}"
                print(
                    f"{variant:7s} {per_step:6.1f} ms per step, {per_turn:5.1f} ms per model turn "
                    f"(runs: {spread} ms)"
                )
            if args.probe:
                stages = await page.evaluate(
                    "([png]) => window.phoneAgent.benchAgent('probe', 10, png, '')", [png_b64]
                )
                print("one scale, by stage: " + ", ".join(f"{k} {v:.1f} ms" for k, v in stages.items()))
            await browser.close()
    finally:
        await model.stop()
        await asyncio.to_thread(served.stop)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
