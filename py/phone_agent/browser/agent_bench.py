"""The agent's own time per step in the page (Pyodide in Chromium), for bench/bench_agent_page.py.

Runs real PlanAndResolveAgent tasks against an in-memory phone (real screenshots that alternate
after each action, a fixed UI tree) that answers at once, or after a set latency whose time is then
subtracted, with three model/codec set-ups:

- ``null``: pre-recorded SSE bytes through the real OpenAI-compatible client, image work excluded;
- ``canvas``: the same, with the page's CanvasImageCodec scaling the real screenshot;
- ``fetch``: the canvas codec and the page's FetchHttpClient streaming from a model server on
  loopback that answers at once (``model_url``): what a real task costs besides the model and phone.

Imported only when ``window.phoneAgent.benchAgent`` is called; nothing else in the page uses it.
"""

from __future__ import annotations

import time
from typing import Any

from ..agent.benchkit import (
    InstantHttp,
    InstantPhone,
    NullCodec,
    TimedCodec,
    TimedDevice,
    script,
    sse_reply,
)
from ..agent.config import AgentConfig
from ..agent.openai_client import OpenAIChatModel
from ..agent.settings import ModelSettings
from ..agent.task_runner import PlanAndResolveAgent
from ..device.interface import Device
from ..tasks import AgentTask, TaskStatus
from .canvas_codec import CanvasImageCodec
from .fetch_http import FetchHttpClient


async def run_variant(
    variant: str,
    steps: int,
    screens: list[bytes],
    model_url: str = "",
    latency_ms: float = 0.0,
    actions: int = 3,
    device: Device | None = None,
) -> dict[str, Any]:
    """One task of ``steps`` steps of ``actions`` taps and a finish_step; its time per model turn
    and per step (ms).

    With ``latency_ms`` each screenshot, UI dump and app query of the phone takes that long; the
    phone's busy time (at least one of them running) is reported, and ``aloneMsPerStep`` is the time
    per step when neither the phone nor the model was working: what the agent adds to a task. With
    ``device`` (the page's connected phone) the task runs on it instead, every call of it timed.
    """
    answers = script(steps, actions, switch_apps=device is not None)
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
    phone: InstantPhone | TimedDevice = (
        InstantPhone(screens, latency_ms) if device is None else TimedDevice(device)
    )
    started = time.perf_counter()
    await agent.run(task, phone, 600_000, lines.append)
    elapsed_ms = (time.perf_counter() - started) * 1000
    if task.status is not TaskStatus.FINISHED:
        raise RuntimeError(f"the bench task ended {task.status}: {task.error}")
    turns = len(answers)
    alone_ms = elapsed_ms - phone.busy_ms
    return {
        "variant": variant,
        "turns": turns,
        "steps": steps,
        "ms": elapsed_ms,
        "msPerTurn": elapsed_ms / turns,
        "msPerStep": (elapsed_ms - elapsed_ms / turns) / steps,  # the planning turn left out
        "phoneBusyMs": phone.busy_ms,
        "aloneMsPerTurn": alone_ms / turns,
        "aloneMsPerStep": (alone_ms - alone_ms / turns) / steps,
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


async def measure_looks(device: Device, live: Any, rounds: int, max_side: int = 1024) -> dict[str, Any]:
    """The picture part of the agent's looks (take it, scale it for the model, its thumbnail) on the
    connected phone, interleaved: from the live view's latest scrcpy frame (``live``) and from
    ``screencap``; each in ms, and the source each live look really had (bench/bench_scrcpy.py)."""
    from ..agent.screen import observe

    codec = CanvasImageCodec()
    times: dict[str, list[float]] = {"live": [], "screencap": []}
    sources: list[str] = []
    for round_ in range(2 * rounds):
        which = "live" if round_ % 2 == 0 else "screencap"
        started = time.perf_counter()
        observation = await observe(
            device,
            codec,
            max_side=max_side,
            with_nodes=False,
            with_app=False,
            live=live if which == "live" else None,
        )
        times[which].append((time.perf_counter() - started) * 1000)
        if which == "live":
            sources.append(observation.source)
    return {**times, "liveSources": sources}
