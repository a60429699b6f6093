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
import json
import pstats
import random
import statistics
import struct
import sys
import time
import zlib
from collections.abc import AsyncIterator, Mapping, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "py"))

from phone_agent.agent import AgentConfig, ModelSettings, OpenAIChatModel, PlanAndResolveAgent
from phone_agent.agent.ports import Crop, RgbaImage
from phone_agent.agent.stitch import match_frames, row_keys
from phone_agent.device import Bounds, UiNode
from phone_agent.tasks import AgentTask, TaskStatus

WIDTH, HEIGHT = 1080, 2400
MODEL_IMAGE_BYTES = 70_000  # a 461x1024 JPEG of a phone screen is 40-90 kB


def blank_png(width: int, height: int) -> bytes:
    """A valid PNG of the given size (pure Python: zlib only)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    raw = b"".join(b"\x00" + b"\xf0" * (width * 3) for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw, 1))
        + chunk(b"IEND", b"")
    )


def ui_nodes(count: int = 60) -> list[UiNode]:
    nodes = [UiNode(Bounds(0, 0, WIDTH, HEIGHT), class_name="android.widget.FrameLayout")]
    for i in range(count):
        top = 120 + i * 36
        nodes.append(
            UiNode(
                Bounds(40, top, 1040, top + 30),
                text=f"Row {i} with a label" if i % 3 else "",
                clickable=i % 2 == 0,
                class_name="android.widget.TextView",
                resource_id=f"com.example:id/row{i}",
            )
        )
    return nodes


class InstantPhone:
    """Answers at once; each screenshot differs a little so the agent sees the screen change."""

    def __init__(self, png: bytes) -> None:
        self.png = png
        self.nodes = ui_nodes()
        self.counter = 0

    async def info(self) -> dict:
        return {}

    async def screenshot_png(self) -> bytes:
        self.counter += 1
        return self.png

    async def tap(self, x: int, y: int) -> None: ...

    async def long_press(self, x: int, y: int, duration_ms: int = 800) -> None: ...

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None: ...

    async def type_text(self, text: str) -> None: ...

    async def press_key(self, key: str) -> None: ...

    async def open_app(self, package: str) -> None: ...

    async def list_apps(self, third_party_only: bool = False) -> list[str]:
        return []

    async def current_app(self) -> str | None:
        return "com.example/.Main"

    async def ui_nodes(self) -> list[UiNode]:
        return self.nodes

    async def shell(self, command: str, timeout_ms: int = 10_000):
        raise NotImplementedError


class NullCodec:
    """Image work excluded: fixed outputs of realistic size; the thumbnail alternates so screens 'change'."""

    def __init__(self) -> None:
        self.image = random.Random(1).randbytes(MODEL_IMAGE_BYTES)
        self.thumbs = [bytes([i]) * (48 * 96 * 4) for i in (10, 200)]
        self.calls = 0

    async def decode(self, image: bytes, width: int, height: int) -> RgbaImage:
        self.calls += 1
        return RgbaImage(
            width, height, self.thumbs[self.calls % 2][: width * height * 4].ljust(width * height * 4)
        )

    async def scale(self, png: bytes, width: int, height: int, mime: str, quality: float) -> bytes:
        return self.image

    async def stitch(self, crops: Sequence[Crop], width: int, mime: str, quality: float) -> bytes:
        return self.image


def pillow_variant():
    """The tests' Pillow codec and a real rendered screen of the simulated phone (CPython only)."""
    try:
        from phone_agent.sim.android import VirtualPhone
        from tests.agent.pillow_codec import PillowCodec
    except ImportError:
        return None
    phone = VirtualPhone()
    phone.launch("com.android.settings")
    return PillowCodec(), phone.screenshot_png()


def sse_reply(name: str, args: dict, thinking_words: int = 40) -> bytes:
    events = [{"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}]
    events += [{"choices": [{"index": 0, "delta": {"content": f"word{i} "}}]} for i in range(thinking_words)]
    arguments = json.dumps(args)
    first = {"index": 0, "id": "call_1", "type": "function", "function": {"name": name, "arguments": ""}}
    events.append({"choices": [{"index": 0, "delta": {"tool_calls": [first]}}]})
    for start in range(0, len(arguments), 6):
        piece = {"index": 0, "function": {"arguments": arguments[start : start + 6]}}
        events.append({"choices": [{"index": 0, "delta": {"tool_calls": [piece]}}]})
    events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"


class ScriptedResponse:
    status = 200
    headers: Mapping[str, str] = {"content-type": "text/event-stream"}

    def __init__(self, body: bytes) -> None:
        self.body = body

    async def chunks(self) -> AsyncIterator[bytes]:
        for start in range(0, len(self.body), 512):
            yield self.body[start : start + 512]

    async def read(self) -> bytes:
        return self.body

    async def aclose(self) -> None: ...


class InstantHttp:
    """Replies from a script at once (the request body is still built and encoded by the client)."""

    def __init__(self, replies: list[bytes]) -> None:
        self.replies = replies
        self.sent = 0

    async def post(
        self, url: str, body: bytes, headers: Mapping[str, str], timeout_ms: int
    ) -> ScriptedResponse:
        self.sent += len(body)
        return ScriptedResponse(self.replies.pop(0))


async def run_task(steps: int, codec, png: bytes, actions_per_step: int = 3) -> tuple[float, int, int]:
    """A task of ``steps`` steps, each ``actions_per_step`` taps and a finish_step: realistic history."""
    plan = [{"title": f"Step {i}", "description": "Tap around."} for i in range(steps)]
    replies = [sse_reply("submit_plan", {"steps": plan})]
    for i in range(steps):
        replies += [
            sse_reply("tap", {"x": 100 + i % 300, "y": 200 + j * 50}) for j in range(actions_per_step)
        ]
        replies.append(sse_reply("finish_step", {"summary": f"step {i} done"}))
    turns = len(replies)
    http = InstantHttp(replies)
    settings = ModelSettings(base_url="http://model.invalid/v1", model="bench", api_key="k")
    config = AgentConfig(settle_ms=0, max_plan_steps=steps)
    agent = PlanAndResolveAgent(OpenAIChatModel(settings, http), codec, config=config)
    progress: list[str] = []
    task = AgentTask("bench", "Tap around", 0)
    started = time.perf_counter()
    await agent.run(task, InstantPhone(png), 600_000, progress.append)
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
    blank = blank_png(WIDTH, HEIGHT)
    await run_task(2, NullCodec(), blank)  # warm up
    variants = [
        ("null codec (scaling excluded)", (NullCodec(), blank)),
        ("Pillow codec (scaling included)", pillow_variant()),
    ]
    for name, variant in variants:
        if variant is None:
            print(f"{name}: skipped (no Pillow or simulated phone here)")
            continue
        codec, png = variant
        runs = []
        for _ in range(3):
            elapsed, turns, sent = await run_task(args.steps, codec, png)
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
