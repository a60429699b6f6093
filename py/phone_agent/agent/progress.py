"""Live progress of a task: the specification's lifecycle callbacks as structured events for the page's
chat panel and as the text lines the relay forwards (through ``ProgressSink``).

Thinking text arrives token by token; it is buffered and sent as one 💭 line before the next tool call
or at the step's end, never one relay frame per token. A failing sink or listener never stops the task.
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..tasks import AgentStep, StepStatus
from ..tools.results import STEP_ICONS, format_seconds, truncate
from ..tools.spec import ProgressSink

THINKING_CHARS = 1_000  # a flushed 💭 line keeps the end of longer thinking


@dataclass(frozen=True)
class ProgressEvent:
    """One lifecycle event. ``kind`` is planned, step_start, step_text, tool_call, tool_result,
    step_end, thinking, screen, error or done; ``text`` is the line sent to the relay (None: not sent)."""

    kind: str
    text: str | None = None
    step: int | None = None  # the step's index (from 1)
    data: dict[str, Any] = field(default_factory=dict)


Listener = Callable[[ProgressEvent], None]


class Listeners:
    """Who receives progress events: ``subscribe`` returns the function that unsubscribes."""

    def __init__(self) -> None:
        self._listeners: list[Listener] = []

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def __iter__(self) -> Iterator[Listener]:
        return iter(list(self._listeners))


def _args_text(args: dict[str, Any]) -> str:
    return json.dumps(args, ensure_ascii=False, separators=(",", ":"))


class ProgressReporter:
    """Turns the agent's lifecycle into events; ``sink`` gets the text lines, listeners everything."""

    def __init__(self, sink: ProgressSink | None = None) -> None:
        self._sink = sink
        self._listeners = Listeners()
        self._thinking: list[str] = []
        self._step: int | None = None

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Receive every event (step_text per token too); returns a function that unsubscribes."""
        return self._listeners.subscribe(listener)

    # -- the specification's callbacks ---------------------------------------------------------

    def on_planned(self, steps: Sequence[AgentStep], replanned: bool = False) -> None:
        self.flush()
        head = "📋 Plan revised" if replanned else "📋 Execution plan generated"
        lines = [f"{head} ({len(steps)} steps total)"]
        lines += [f"{step.index}. {step.title}" for step in steps]
        self._emit(
            ProgressEvent(
                "planned",
                "\n".join(lines),
                data={
                    "steps": [
                        {"index": s.index, "title": s.title, "description": s.description} for s in steps
                    ]
                },
            )
        )

    def on_step_start(self, step: AgentStep) -> None:
        self.flush()
        self._step = step.index
        text = f"▶️ Step {step.index}: {step.title}"
        if step.description:
            text += f"\n{step.description}"
        self._emit(ProgressEvent("step_start", text, step.index, {"title": step.title}))

    def on_step_text(self, delta: str) -> None:
        self._thinking.append(delta)
        self._emit(ProgressEvent("step_text", None, self._step, {"delta": delta}))

    def on_tool_call(self, name: str, args: dict[str, Any]) -> None:
        self.flush()
        self._emit(
            ProgressEvent(
                "tool_call",
                f"🔧 Calling {name}({_args_text(args)})",
                self._step,
                {"name": name, "args": args},
            )
        )

    def on_tool_result(self, name: str, result: str, ok: bool = True) -> None:
        prefix = "→" if ok else "→ ❌"
        self._emit(
            ProgressEvent(
                "tool_result",
                f"{prefix} {truncate(result)}",
                self._step,
                {"name": name, "result": result, "ok": ok},
            )
        )

    def on_step_end(self, step: AgentStep) -> None:
        self.flush()
        icon = STEP_ICONS.get(step.status, "⏭️")
        text = (
            f"{icon} Step {step.index} completed ({step.status}, duration {format_seconds(step.duration_ms)})"
        )
        if step.status is StepStatus.FAILED and step.error:
            text += f": {step.error}"
        self._emit(
            ProgressEvent(
                "step_end",
                text,
                step.index,
                {"status": str(step.status), "durationMs": step.duration_ms, "summary": step.summary},
            )
        )
        self._step = None

    def on_screen(self, line: str) -> None:
        """The agent's looks switched source (scrcpy frame ↔ screencap): ``line`` says to which, why."""
        self.flush()
        self._emit(ProgressEvent("screen", line, self._step, {"line": line}))

    def on_person(self, line: str) -> None:
        """The agent waits for the person (``Waiting for you: <reason>``) or hears back from them."""
        self.flush()
        self._emit(ProgressEvent("person", line, self._step, {"line": line}))

    def on_error(self, message: str) -> None:
        self.flush()
        self._emit(
            ProgressEvent("error", f"❌ Agent execution error: {message}", self._step, {"message": message})
        )

    def on_done(self, status: str, conclusion: str | None, error: str | None) -> None:
        """The task ended (for the panel; the relay's answer carries the report, so no text)."""
        self.flush()
        self._emit(
            ProgressEvent("done", None, None, {"status": status, "conclusion": conclusion, "error": error})
        )

    def flush(self) -> None:
        """Send buffered thinking as one 💭 line (nothing when there is none)."""
        text = "".join(self._thinking).strip()
        self._thinking.clear()
        if not text:
            return
        if len(text) > THINKING_CHARS:
            text = "…" + text[-(THINKING_CHARS - 1) :]
        self._emit(ProgressEvent("thinking", f"💭 {text}", self._step, {"text": text}))

    def _emit(self, event: ProgressEvent) -> None:
        for listener in self._listeners:
            try:
                listener(event)
            except Exception:  # the panel must never break a task; say why it failed
                traceback.print_exc()
        if event.text is not None and self._sink is not None:
            try:
                self._sink(event.text)
            except Exception:  # progress is supplementary (the specification): never fail the task
                traceback.print_exc()
