"""How much time the agent itself spends per step, outside the model's and the phone's time.

Runs real agent tasks against an instant phone (a fixed screenshot and UI tree) and an instant model
(pre-recorded SSE bytes through the real OpenAI-compatible client, SSE parser and chunk assembler),
so everything measured is the agent's own work: building prompts (with the base64 image), JSON,
parsing the stream, validating, mapping coordinates, screen-change checks, bookkeeping, progress.
Also measures the scroll-capture overlap search per frame.

Variants: ``null`` codec (image scaling excluded: the page's canvas does it natively) and, in CPython
with Pillow installed, ``pillow`` (scaling a 1080x2400 PNG included).

CPython:  python bench/bench_agent_overhead.py [--turns 200]
Pyodide:  copy this file into the page and ``await main(["--turns", "100"])``; Pillow is skipped there.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import itertools
import pstats
import random
import statistics
import struct
import sys
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "py"))

from phone_agent.agent.benchkit import HEIGHT, WIDTH, InstantHttp, InstantPhone, NullCodec, script, sse_reply
from phone_agent.agent.config import AgentConfig
from phone_agent.agent.openai_client import OpenAIChatModel
from phone_agent.agent.ports import RgbaImage
from phone_agent.agent.settings import ModelSettings
from phone_agent.agent.stitch import match_frames, row_keys
from phone_agent.agent.task_runner import PlanAndResolveAgent
from phone_agent.tasks import AgentTask, TaskStatus


def blank_png(width: int, height: int, shade: int = 0xF0) -> bytes:
    """A valid one-colour PNG of the given size (pure Python: zlib only)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + bytes([shade]) * (width * 3) for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 1))
        + chunk(b"IEND", b"")
    )


def pillow_variant():
    """The tests' Pillow codec and a real rendered screen of the simulated phone (CPython only)."""
    try:
        from phone_agent.sim.android.phone import VirtualPhone
        from tests.agent.pillow_codec import PillowCodec
    except ImportError:
        return None
    phone = VirtualPhone()
    screens = []
    for package in ("com.android.settings", "com.google.android.apps.messaging"):
        phone.launch(package)
        screens.append(phone.screenshot_png())
    return PillowCodec(), screens


async def run_task(
    steps: int, codec, screens: list[bytes], actions_per_step: int = 3
) -> tuple[float, int, int]:
    """A task of ``steps`` steps, each ``actions_per_step`` taps and a finish_step: realistic history.
    The phone alternates between ``screens`` after each action, so every look is a new image."""
    replies = [sse_reply(name, args) for name, args in script(steps, actions_per_step)]
    turns = len(replies)
    http = InstantHttp(replies)
    settings = ModelSettings(base_url="http://model.invalid/v1", model="bench", api_key="k")
    config = AgentConfig(settle_ms=0, max_plan_steps=steps)
    agent = PlanAndResolveAgent(OpenAIChatModel(settings, http), codec, config=config)
    progress: list[str] = []
    task = AgentTask("bench", "Tap around", 0)
    started = time.perf_counter()
    await agent.run(task, InstantPhone(screens), 600_000, progress.append)
    elapsed = time.perf_counter() - started
    assert task.status is TaskStatus.FINISHED, task.error
    return elapsed, turns, http.sent


def overlap_search_ms(repeats: int = 5) -> float:
    rng = random.Random(3)
    content = [rng.randbytes(120 * 4) if y % 50 > 10 else b"\xfa" * 480 for y in range(6000)]

    def frame(offset: int) -> RgbaImage:
        rows = [b"\x10" * 480] * 340 + content[offset : offset + 1934] + [b"\xee" * 480] * 126
        return RgbaImage(120, 2400, b"".join(rows))

    frames = [frame(o) for o in (0, 1100, 2200)]
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        keys = [row_keys(f) for f in frames]
        for a, b in itertools.pairwise(keys):
            assert match_frames(a, b) is not None
        times.append((time.perf_counter() - start) / 2 * 1000)
    return statistics.median(times)


async def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=40, help="steps per task (each 3 taps + finish_step)")
    parser.add_argument("--profile", action="store_true", help="print where the null-codec time goes")
    args = parser.parse_args(argv)

    print(f"Python {sys.version.split()[0]} on {sys.platform}")
    blank = [blank_png(WIDTH, HEIGHT), blank_png(WIDTH, HEIGHT, 0x20)]
    await run_task(2, NullCodec(), blank)  # warm up
    variants = [
        ("null codec (scaling excluded)", (NullCodec(), blank)),
        ("Pillow codec (scaling included)", pillow_variant()),
    ]
    for name, variant in variants:
        if variant is None:
            print(f"{name}: skipped (no Pillow or simulated phone here)")
            continue
        codec, screens = variant
        runs = []
        for _ in range(3):
            elapsed, turns, sent = await run_task(args.steps, codec, screens)
            runs.append(elapsed / turns * 1000)
        print(
            f"{name}: {statistics.median(runs):.2f} ms per model turn "
            f"(median of 3 runs of {turns} turns; {sent / turns / 1000:.0f} kB request body per turn)"
        )
    search_ms = overlap_search_ms()
    print(f"scroll capture, overlap search (row keys of 120x2400 + match): {search_ms:.2f} ms per frame")
    if args.profile:
        profile = cProfile.Profile()
        profile.enable()
        await run_task(args.steps, NullCodec(), blank)
        profile.disable()
        out = io.StringIO()
        pstats.Stats(profile, stream=out).sort_stats("tottime").print_stats(12)
        print(out.getvalue())


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
