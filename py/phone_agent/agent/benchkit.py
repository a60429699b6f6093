"""An instant phone, codec and model for measuring the agent's own time (bench/ in CPython, and
``window.phoneAgent.benchAgent`` in the page): everything answers at once (or, for the phone, after a
set latency whose time is accounted for), so what a benchmark times is the agent's work — prompts,
JSON, stream parsing, validation, bookkeeping — plus what it chooses to include (a real codec, a real
HTTP client).
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from ..device.interface import Bounds, Device, UiNode
from ..device.wrapper import DeviceWrapper
from .ports import Crop, RgbaImage

T = TypeVar("T")
WIDTH, HEIGHT = 1080, 2400
MODEL_IMAGE_BYTES = 70_000  # a 461x1024 JPEG of a phone screen is 40-90 kB
ACTIONS_PER_STEP = 3  # taps per step, then finish_step: 4 model turns per step


def ui_nodes(count: int = 60) -> list[UiNode]:
    """A screen's worth of nodes: a frame and ``count`` rows, some clickable, some labelled."""
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


class BusyClock:
    """Wall time during which at least one call was running (overlapping calls count once), read from
    ``now`` (seconds; ``time.perf_counter`` unless a test gives its own clock)."""

    def __init__(self, now: Callable[[], float] = time.perf_counter) -> None:
        self.now = now
        self.busy_ms = 0.0
        self._running = 0
        self._since = 0.0

    async def timed(self, call: Awaitable[Any]) -> Any:
        if self._running == 0:
            self._since = self.now()
        self._running += 1
        try:
            return await call
        finally:
            self._running -= 1
            if self._running == 0:
                self.busy_ms += (self.now() - self._since) * 1000


class TimedDevice(DeviceWrapper):
    """A real Device whose every call is timed on a ``BusyClock``: the phone's share of a task."""

    def __init__(self, device: Device) -> None:
        super().__init__(device)
        self.clock = BusyClock()

    @property
    def busy_ms(self) -> float:
        return self.clock.busy_ms

    async def _around(self, call: Awaitable[T]) -> T:
        return await self.clock.timed(call)


class InstantPhone:
    """A Device with a fixed UI tree whose screen alternates between the given screenshots after each
    action (so no screenshot equals the one before: an agent cannot skip scaling it).

    ``latency_ms`` makes each screenshot, UI dump and app query take that long, like a (fast) real
    phone; ``busy_ms`` is then the wall time during which at least one of them was running, so a
    benchmark can subtract the phone's time from a task's and keep what the agent adds.
    """

    def __init__(self, png: bytes | Sequence[bytes], latency_ms: float = 0.0) -> None:
        self.screens = [png] if isinstance(png, bytes) else list(png)
        self.png = self.screens[0]
        self.nodes = ui_nodes()
        self.latency_ms = latency_ms
        self.clock = BusyClock()
        self._actions = 0

    @property
    def busy_ms(self) -> float:
        return self.clock.busy_ms

    async def _answer(self, value: Any) -> Any:
        if self.latency_ms:
            await self.clock.timed(asyncio.sleep(self.latency_ms / 1000))
        return value

    def _acted(self) -> None:
        self._actions += 1
        self.png = self.screens[self._actions % len(self.screens)]

    async def info(self) -> dict[str, Any]:
        return {}

    async def screenshot_png(self) -> bytes:
        return await self._answer(self.png)

    async def tap(self, x: int, y: int) -> None:
        self._acted()

    async def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        self._acted()

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        self._acted()

    async def type_text(self, text: str) -> None:
        self._acted()

    async def press_key(self, key: str) -> None:
        self._acted()

    async def delete_chars(self, count: int) -> None:
        self._acted()

    async def open_app(self, package: str) -> None:
        self._acted()

    async def stop_app(self, package: str) -> None:
        self._acted()

    async def open_url(self, url: str) -> None:
        self._acted()

    async def list_apps(self, third_party_only: bool = False) -> list[str]:
        return []

    async def current_app(self) -> str | None:
        return await self._answer("com.example/.Main")

    async def ui_nodes(self) -> list[UiNode]:
        return await self._answer(self.nodes)

    async def screen_info(self) -> dict[str, Any]:
        return await self._answer(
            {
                "width": WIDTH,
                "height": HEIGHT,
                "density": 420,
                "orientation": "portrait",
                "rotation": 0,
                "screenOn": True,
            }
        )

    async def set_orientation(self, orientation: str) -> None:
        self._acted()

    async def shell(self, command: str, timeout_ms: int = 10_000) -> Any:
        raise NotImplementedError


class NullCodec:
    """Image work excluded: a fixed 70 kB 'JPEG'; thumbnails alternate so the screen 'changes'."""

    def __init__(self) -> None:
        self.image = random.Random(1).randbytes(MODEL_IMAGE_BYTES)
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


SWITCH_APPS = ("com.android.settings", "com.google.android.apps.messaging")


def script(
    steps: int, actions_per_step: int = ACTIONS_PER_STEP, switch_apps: bool = False
) -> list[tuple[str, dict[str, Any]]]:
    """The model's answers for a task of ``steps`` steps: a plan, then taps and finish_step each.

    ``switch_apps``: open_app between two apps instead of taps, so that on a real (or the simulated)
    phone every action changes the screen and every look is a new image to scale."""
    plan = [{"title": f"Step {i}", "description": "Tap around."} for i in range(steps)]
    answers: list[tuple[str, dict[str, Any]]] = [("submit_plan", {"steps": plan})]
    for i in range(steps):
        for j in range(actions_per_step):
            if switch_apps:
                answers.append(("open_app", {"packageName": SWITCH_APPS[(i * actions_per_step + j) % 2]}))
            else:
                answers.append(("tap", {"x": 100 + i % 300, "y": 200 + j * 50}))
        answers.append(("finish_step", {"summary": f"step {i} done"}))
    return answers


def sse_reply(name: str, args: dict[str, Any], thinking_words: int = 40) -> bytes:
    """A streamed chat-completions answer: some thinking, then one tool call in small pieces."""
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


class RecordedResponse:
    """An HTTP answer already in memory, handed out in 512-byte chunks as a stream would."""

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
        self.sent = 0  # request bytes, to report the body size per turn

    async def post(
        self, url: str, body: bytes, headers: Mapping[str, str], timeout_ms: int
    ) -> RecordedResponse:
        self.sent += len(body)
        return RecordedResponse(self.replies.pop(0))
