"""Benchmark: scrcpy in the page against the simulated phone (max_size 1024, max_fps 30 by default).

Three figures, from one run:

- frames shown per second in the page while the screen changes all the time (the sim's status-bar
  clock is made to change on every look, so the sim encodes at its max_fps): the canvas's data-fps;
- glass to glass: the sim's screen changes (Settings ↔ home, applied in this process) → the page has
  drawn a frame that shows it (a pixel of the canvas polled in the page); p50 and p90;
- a tap through the control socket (ScrcpyDevice.tap, until the phone has applied it) against
  ``adb shell input tap`` (AdbDevice.tap), both from CPython over TCP to the same sim.
- the agent's look (the picture part of an observation: take it, scale it for the model, its
  thumbnail) in the page from the live view's latest decoded frame against ``screencap``, interleaved
  (``window.phoneAgent.measureLooks``). The sim's screencap takes tens of ms where a real phone's
  takes 0.5–3 s: the ratio here is the least the frame saves.

``--compare`` interleaves the sim's previous frame pipeline (the whole screen drawn anew for every
frame, a pause of the rest of the interval after each, polling for changes) with today's
(android.render.LayeredRenderer, pacing by due times, woken by the phone's changes) in the fps and
glass-to-glass parts, switching the running server process between them, so both are measured
under the same load.

    .venv/bin/python bench/bench_scrcpy.py [--rounds 30] [--max-size 1024] [--max-fps 30] [--compare]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from phone_agent.adb.device import AdbDevice  # noqa: E402
from phone_agent.adb.keys import generate_private_key  # noqa: E402
from phone_agent.scrcpy.client import ScrcpyClient  # noqa: E402
from phone_agent.scrcpy.device import ScrcpyDevice  # noqa: E402
from phone_agent.scrcpy.protocol import ScrcpyServerOptions  # noqa: E402
from phone_agent.server.adb_tcp import connect_adbd  # noqa: E402
from phone_agent.sim.server import SimulatedPhoneServer  # noqa: E402
from tests.support import CHROMIUM, CHROMIUM_ARGS, ServedPhoneAgent, free_port, page_link  # noqa: E402

JAR = ROOT / "static" / "vendor" / "scrcpy" / "scrcpy-server"

# Resolves once the canvas pixel at (x, y) differs from `before` (polled every millisecond).
WAIT_FOR_PIXEL = """async ([x, y, before]) => {
  const canvas = document.getElementById("screen");
  const context = canvas.getContext("2d", { willReadFrequently: true });
  for (;;) {
    const [r, g, b] = context.getImageData(x, y, 1, 1).data;
    if (Math.abs(r - before[0]) + Math.abs(g - before[1]) + Math.abs(b - before[2]) > 60) return [r, g, b];
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}"""
PIXEL = """([x, y]) => Array.from(
  document.getElementById("screen").getContext("2d").getImageData(x, y, 1, 1).data)"""


def spread(values: list[float]) -> str:
    values = sorted(values)
    p90 = values[min(len(values) - 1, int(len(values) * 0.9))]
    return (
        f"p50 {statistics.median(values):.1f} ms, p90 {p90:.1f} ms, min {values[0]:.1f} ms (n={len(values)})"
    )


def wifi_toggle(sim: SimulatedPhoneServer) -> tuple[int, int]:
    for window in sim.phone.windows():
        for node in window.walk():
            if node.action == "toggle:wifi":
                x1, y1, x2, y2 = node.bounds
                return (x1 + x2) // 2, (y1 + y2) // 2
    raise SystemExit("no Wi-Fi toggle on screen")


async def bench_taps(sim: SimulatedPhoneServer, rounds: int, options: ScrcpyServerOptions) -> None:
    key = generate_private_key()
    sim.trust_key(key.public_key("bench@scrcpy"))
    client = await connect_adbd("127.0.0.1", sim.port, key)
    plain = AdbDevice(client, transport="tcp")
    scrcpy = ScrcpyClient(client, JAR.read_bytes(), options)
    await scrcpy.start()
    device = ScrcpyDevice(plain, scrcpy, (1080, 2400))
    reader = asyncio.ensure_future(_drain(scrcpy))
    try:
        await plain.shell("am start -a android.settings.WIFI_SETTINGS")
        x, y = wifi_toggle(sim)
        timings: dict[str, list[float]] = {"control": [], "input": []}
        for round_, (name, tap) in zip(
            range(rounds * 2), itertools.cycle((("control", device.tap), ("input", plain.tap))), strict=False
        ):
            before = sim.phone.version
            start = time.perf_counter()
            await tap(x, y)
            while sim.phone.version == before:  # applied (control returns once sent)
                await asyncio.sleep(0.0002)
            timings[name].append((time.perf_counter() - start) * 1000)
            if round_ < 4:
                timings[name].pop()  # warm-up
        control, shell = statistics.median(timings["control"]), statistics.median(timings["input"])
        print(f"tap through the control socket: {spread(timings['control'])}")
        print(f"adb shell input tap:            {spread(timings['input'])}")
        print(f"ratio (control / input tap, medians): {control / shell:.2f}")
    finally:
        reader.cancel()
        await scrcpy.close()
        await client.close()


async def _drain(scrcpy: ScrcpyClient) -> None:
    while True:
        await scrcpy.read_packets()


FPS_WINDOW_S = 3.0  # browser/scrcpy_view.py: data-fps counts the frames of the last 3 s


def baseline(process: Any) -> dict[str, Any]:
    """The sim's frame pipeline before this change (for ``--compare``): the whole screen drawn anew
    for every frame (and copied once more, as the encoder's convert did), a pause of the rest of the
    interval after each frame, and a look for changes every quarter interval (+5 ms)."""
    from phone_agent.sim.android import render

    def encode(encoder: Any, pts: int) -> Any:
        return encoder.encode(render.render(process.host.server.phone.windows()).convert("RGB"), pts)

    def pause(started: float, interval: float) -> float:
        return max(0.0, interval - (time.monotonic() - started))

    async def wait_for_change(changed: asyncio.Event, interval: float) -> None:
        await asyncio.sleep(min(interval, 0.005 + interval / 4))  # a look every 13 ms at 30 fps

    return {"_encode": encode, "_pause": pause, "_wait_for_change": wait_for_change}


# name -> what replaces the running server process's own methods (None: today's pipeline)
PIPELINES: dict[str, Any] = {"baseline": baseline, "current": None}


def use_pipeline(process: Any, pipeline: Any) -> None:
    for method in ("_encode", "_pause", "_wait_for_change"):
        process.__dict__.pop(method, None)
    if pipeline is not None:
        process.__dict__.update(pipeline(process))


async def bench_page(
    sim: SimulatedPhoneServer, rounds: int, options: ScrcpyServerOptions, compare: bool = False
) -> None:
    from playwright.async_api import async_playwright

    served = ServedPhoneAgent()
    try:
        async with async_playwright() as playwright:
            browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = await browser.new_page()
            url = (
                f"{served.base}/?device=tcp:127.0.0.1:{sim.port}"
                f"&scrcpyMaxSize={options.max_size}&scrcpyMaxFps={options.max_fps}"
            )
            await page.goto(page_link(url))
            await page.wait_for_selector(
                "canvas#screen[data-source=scrcpy]", state="attached", timeout=60_000
            )
            await asyncio.sleep(2)
            (process,) = sim.scrcpy.running()
            pipelines = PIPELINES if compare else {"current": None}

            # frames per second while the screen changes on every look (each pipeline in turn)
            counter = itertools.count()
            sim.phone.clock = lambda: f"{next(counter) % 10000:04d}"
            await asyncio.sleep(2)
            fps: dict[str, list[float]] = {name: [] for name in pipelines}
            sim_fps: dict[str, list[float]] = {name: [] for name in pipelines}
            cores: dict[str, list[float]] = {name: [] for name in pipelines}
            encode_ms: dict[str, list[float]] = {name: [] for name in pipelines}
            write_ms: dict[str, list[float]] = {name: [] for name in pipelines}
            for _ in range(4 if compare else 1):
                for name, pipeline in pipelines.items():
                    use_pipeline(process, pipeline)
                    await asyncio.sleep(FPS_WINDOW_S + 0.3)  # the page's fps window: this pipeline's only
                    sent, since, cpu = process.frames_sent, time.monotonic(), time.process_time()
                    spent = (process.encode_seconds, process.write_seconds)
                    await asyncio.sleep(FPS_WINDOW_S)
                    elapsed = time.monotonic() - since
                    frames = max(1, process.frames_sent - sent)
                    fps[name].append(float(await page.get_attribute("#screen", "data-fps") or 0))
                    sim_fps[name].append((process.frames_sent - sent) / elapsed)
                    cores[name].append((time.process_time() - cpu) / elapsed)
                    encode_ms[name].append((process.encode_seconds - spent[0]) * 1000 / frames)
                    write_ms[name].append((process.write_seconds - spent[1]) * 1000 / frames)
            for name in pipelines:
                print(
                    f"[{name}] page fps while the screen changes: {statistics.median(fps[name]):.1f} "
                    f"(samples {', '.join(f'{f:.1f}' for f in fps[name])}; asked max_fps "
                    f"{options.max_fps}; {process.video_width}x{process.video_height}); the sim sent "
                    f"{statistics.median(sim_fps[name]):.1f} frames/s, a frame took "
                    f"{statistics.median(encode_ms[name]):.1f} ms to draw and encode and "
                    f"{statistics.median(write_ms[name]):.1f} ms to hand over; this process (sim, "
                    f"bench) used {statistics.median(cores[name]):.2f} cores"
                )
            print(f"load average {' '.join(f'{v:.2f}' for v in os.getloadavg())} ({os.cpu_count()} cores)")
            use_pipeline(process, None)
            sim.phone.clock = lambda: "12:00"
            await asyncio.sleep(1.5)

            # glass to glass: Settings <-> home, a pixel of the canvas that differs between them
            width, height = process.video_width, process.video_height
            probe = (width // 2, int(height * 0.3))
            latencies: dict[str, list[float]] = {name: [] for name in pipelines}
            names = list(pipelines)
            loop = asyncio.get_running_loop()
            for round_ in range(rounds * len(names) + 2):
                # two rounds (there and back) per pipeline in turn: each sees both changes
                name = names[(round_ // 2) % len(names)]
                use_pipeline(process, pipelines[name])
                before = await page.evaluate(PIXEL, list(probe))
                waiting = asyncio.ensure_future(page.evaluate(WAIT_FOR_PIXEL, [*probe, before[:3]]))
                await asyncio.sleep(0.05)  # the page is polling
                start = time.perf_counter()
                if round_ % 2 == 0:
                    await loop.run_in_executor(
                        None,
                        sim.phone.run,
                        ["am", "start", "-n", "com.android.settings/.Settings"],
                        b"",
                        None,
                    )
                else:
                    await loop.run_in_executor(None, sim.phone.run, ["input", "keyevent", "HOME"], b"", None)
                await asyncio.wait_for(waiting, 10)
                if round_ >= 2:
                    latencies[name].append((time.perf_counter() - start) * 1000)
                await asyncio.sleep(0.3)
            use_pipeline(process, None)
            for name in pipelines:
                print(
                    f"[{name}] glass to glass (sim changes its screen -> page has drawn it): "
                    f"{spread(latencies[name])}"
                )

            # the agent's looks: from the latest frame against screencap
            looks = await page.evaluate("(rounds) => window.phoneAgent.measureLooks(rounds)", rounds)
            live, cap = looks["live"][2:], looks["screencap"][2:]  # warm-up out
            frames = f"{looks['liveSources'].count('scrcpy frame')}/{len(looks['liveSources'])} from frames"
            ratio = statistics.median(live) / statistics.median(cap)
            print(f"agent look from the scrcpy frame: {spread(live)} ({frames})")
            print(f"agent look from screencap:        {spread(cap)}")
            print(f"ratio (frame / screencap, medians): {ratio:.2f}")
            await browser.close()
    finally:
        served.stop()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--max-size", type=int, default=1024)
    parser.add_argument("--max-fps", type=int, default=30)
    parser.add_argument(
        "--compare",
        action="store_true",
        help="interleave the sim's previous frame pipeline (whole screen redrawn per frame) with today's",
    )
    args = parser.parse_args()
    if not JAR.exists():
        raise SystemExit("run scripts/setup first (static/vendor/scrcpy/scrcpy-server)")
    options = ScrcpyServerOptions(max_size=args.max_size, max_fps=args.max_fps)
    sim = SimulatedPhoneServer("127.0.0.1", free_port(), scrcpy=True)
    sim.phone.clock = lambda: "12:00"
    await sim.start()
    try:
        await bench_taps(sim, args.rounds, options)
        sim.phone.reset()
        await bench_page(sim, args.rounds, options, args.compare)
    finally:
        await sim.close()


if __name__ == "__main__":
    asyncio.run(main())
