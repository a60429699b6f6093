"""The agent's own time per step in the page (Pyodide in Chromium), for bench/bench_agent_page.py.

Runs real PlanAndResolveAgent tasks against an instant phone (a fixed screenshot and UI tree, in
memory) so the phone's time is zero, with three model/codec set-ups:

- ``null``: pre-recorded SSE bytes through the real OpenAI-compatible client, image work excluded;
- ``canvas``: the same, with the page's CanvasImageCodec scaling the real screenshot;
- ``fetch``: the canvas codec and the page's FetchHttpClient streaming from a model server on
  loopback that answers at once (``model_url``): what a real task costs besides the model and phone.

Imported only when ``window.phoneAgent.benchAgent`` is called; nothing else in the page uses it.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

from ..agent import AgentConfig, ModelSettings, OpenAIChatModel, PlanAndResolveAgent
from ..agent.ports import Crop, RgbaImage
from ..device import Bounds, UiNode
from ..tasks import AgentTask, TaskStatus
from .canvas_codec import CanvasImageCodec
from .fetch_http import FetchHttpClient

ACTIONS_PER_STEP = 3  # taps per step, then finish_step: 4 model turns per step


def _nodes(count: int = 60) -> list[UiNode]:
    nodes = [UiNode(Bounds(0, 0, 1080, 2400), class_name="android.widget.FrameLayout")]
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
    """A Device that answers at once with a fixed screenshot."""

    def __init__(self, png: bytes) -> None:
        self.png = png
        self.nodes = _nodes()

    async def info(self) -> dict:
        return {}

    async def screenshot_png(self) -> bytes:
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

    async def shell(self, command: str, timeout_ms: int = 10_000) -> Any:
        raise NotImplementedError


class NullCodec:
    """Image work excluded: a fixed 70 kB 'JPEG'; thumbnails alternate so the screen 'changes'."""

    def __init__(self) -> None:
        self.image = random.Random(1).randbytes(70_000)
        self.thumbs = [bytes([i]) * (48 * 96 * 4) for i in (10, 200)]
        self.calls = 0

    async def decode(self, image: bytes, width: int, height: int) -> RgbaImage:
        self.calls += 1
        size = width * height * 4
        return RgbaImage(width, height, self.thumbs[self.calls % 2][:size].ljust(size))

    async def scale(self, png: bytes, width: int, height: int, mime: str, quality: float) -> bytes:
        return self.image

    async def stitch(self, crops: Sequence[Crop], width: int, mime: str, quality: float) -> bytes:
        return self.image


def sse_reply(name: str, args: dict, thinking_words: int = 40) -> bytes:
    events: list[dict[str, Any]] = [
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]}
    ]
    events += [{"choices": [{"index": 0, "delta": {"content": f"word{i} "}}]} for i in range(thinking_words)]
    arguments = json.dumps(args)
    first = {"index": 0, "id": "call_1", "type": "function", "function": {"name": name, "arguments": ""}}
    events.append({"choices": [{"index": 0, "delta": {"tool_calls": [first]}}]})
    for start in range(0, len(arguments), 6):
        piece = {"index": 0, "function": {"arguments": arguments[start : start + 6]}}
        events.append({"choices": [{"index": 0, "delta": {"tool_calls": [piece]}}]})
    events.append({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]})
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"


class _Recorded:
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
    def __init__(self, replies: list[bytes]) -> None:
        self.replies = replies

    async def post(self, url: str, body: bytes, headers: Mapping[str, str], timeout_ms: int) -> _Recorded:
        return _Recorded(self.replies.pop(0))


class TimedCodec:
    """Wraps a codec and adds up the time spent in each of its methods (ms)."""

    def __init__(self, codec: Any) -> None:
        self.codec = codec
        self.ms: dict[str, float] = {"scale": 0.0, "decode": 0.0, "stitch": 0.0}

    async def _timed(self, name: str, *args: Any) -> Any:
        started = time.perf_counter()
        try:
            return await getattr(self.codec, name)(*args)
        finally:
            self.ms[name] += (time.perf_counter() - started) * 1000

    async def decode(self, image: bytes, width: int, height: int) -> RgbaImage:
        return await self._timed("decode", image, width, height)

    async def scale(self, png: bytes, width: int, height: int, mime: str, quality: float) -> bytes:
        return await self._timed("scale", png, width, height, mime, quality)

    async def stitch(self, crops: Sequence[Crop], width: int, mime: str, quality: float) -> bytes:
        return await self._timed("stitch", crops, width, mime, quality)


def script(steps: int) -> list[tuple[str, dict[str, Any]]]:
    """The model's answers for a task of ``steps`` steps: a plan, then 3 taps and finish_step each."""
    plan = [{"title": f"Step {i}", "description": "Tap around."} for i in range(steps)]
    answers: list[tuple[str, dict[str, Any]]] = [("submit_plan", {"steps": plan})]
    for i in range(steps):
        answers += [("tap", {"x": 100 + i % 300, "y": 200 + j * 50}) for j in range(ACTIONS_PER_STEP)]
        answers.append(("finish_step", {"summary": f"step {i} done"}))
    return answers


async def run_variant(variant: str, steps: int, png: bytes, model_url: str = "") -> dict[str, Any]:
    """One task; its time per model turn and per step (ms)."""
    answers = script(steps)
    settings = ModelSettings(base_url=model_url or "http://model.invalid/v1", model="bench", api_key="k")
    if variant == "fetch":
        http: Any = FetchHttpClient()
    else:
        http = InstantHttp([sse_reply(name, args) for name, args in answers])
    codec = TimedCodec(NullCodec() if variant == "null" else CanvasImageCodec())
    config = AgentConfig(settle_ms=0, max_plan_steps=steps)
    agent = PlanAndResolveAgent(OpenAIChatModel(settings, http), codec, config=config)
    lines: list[str] = []
    task = AgentTask(f"bench-{variant}", "Tap around", 0)
    started = time.perf_counter()
    await agent.run(task, InstantPhone(png), 600_000, lines.append)
    elapsed_ms = (time.perf_counter() - started) * 1000
    if task.status is not TaskStatus.FINISHED:
        raise RuntimeError(f"the bench task ended {task.status}: {task.error}")
    turns = len(answers)
    return {
        "variant": variant,
        "turns": turns,
        "steps": steps,
        "ms": elapsed_ms,
        "msPerTurn": elapsed_ms / turns,
        "msPerStep": (elapsed_ms - elapsed_ms / turns) / steps,  # the planning turn left out
        "progressLines": len(lines),
        "codecMsPerTurn": {name: ms / turns for name, ms in codec.ms.items()},
    }


async def probe_codec(png: bytes, repeats: int = 10) -> dict[str, float]:
    """Median ms of each stage of one ``scale`` (to see where the canvas time goes)."""
    import statistics

    import js  # type: ignore[import-not-found]
    from pyodide.ffi import to_js  # type: ignore[import-not-found]

    from .interop import to_js_json

    stages: dict[str, list[float]] = {}

    def mark(name: str, started: float) -> float:
        now = time.perf_counter()
        stages.setdefault(name, []).append((now - started) * 1000)
        return now

    for _ in range(repeats):
        t = time.perf_counter()
        blob = js.Blob.new(to_js([to_js(png)]))
        t = mark("blob", t)
        bitmap = await js.createImageBitmap(blob)
        t = mark("createImageBitmap", t)
        canvas = js.OffscreenCanvas.new(461, 1024)
        context = canvas.getContext("2d")
        context.imageSmoothingQuality = "high"
        context.drawImage(bitmap, 0, 0, 461, 1024)
        bitmap.close()
        t = mark("drawImage", t)
        out = await canvas.convertToBlob(to_js_json({"type": "image/jpeg", "quality": 0.8}))
        t = mark("convertToBlob", t)
        buffer = await out.arrayBuffer()
        t = mark("arrayBuffer", t)
        buffer.to_bytes()
        t = mark("to_bytes", t)
        total = time.perf_counter()
        await CanvasImageCodec().scale(png, 461, 1024, "image/jpeg", 0.8)
        mark("codec.scale", total)
    return {name: statistics.median(values) for name, values in stages.items()}
