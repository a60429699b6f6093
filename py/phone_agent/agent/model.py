"""The chat model as the agent sees it: OpenAI-style messages and tools in, a stream of events out.

Both the OpenAI-compatible client and the page's Chrome built-in model (Prompt API) implement
``ChatModel``. Messages are OpenAI chat messages (dicts) with images as ``image_url`` data URLs; an
adapter for another API converts them at its edge.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

Message = dict[str, Any]
ToolSchema = dict[str, Any]  # {"type": "function", "function": {"name", "description", "parameters"}}


@dataclass(frozen=True)
class TextDelta:
    """A piece of the model's text (its thinking or answer) as it streams."""

    text: str
    reasoning: bool = False  # from a separate reasoning channel (``reasoning_content``)


@dataclass(frozen=True)
class ToolCall:
    """One function call the model made. ``error`` is set when its arguments were not a JSON object."""

    name: str
    arguments: dict[str, Any]
    id: str = ""
    raw_arguments: str = ""
    error: str | None = None
    normalized: bool = False  # coordinates are 0–1000 of the image (text action formats)


@dataclass(frozen=True)
class TurnEnd:
    """The model finished its answer."""

    finish_reason: str | None = None
    usage: dict[str, Any] | None = None


ModelEvent = TextDelta | ToolCall | TurnEnd


class ModelError(Exception):
    """The model could not be asked or gave no usable answer; the message says why, for a person."""

    def __init__(self, message: str, *, status: int | None = None, retryable: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable


class ChatModel(Protocol):
    """A model the agent can ask. ``stream`` yields text deltas and tool calls, then one ``TurnEnd``.

    Raise ``ModelError`` for every failure (HTTP status, network or CORS, malformed answer, a stream
    that stalls); cancellation of the iteration must stop the request.
    """

    @property
    def label(self) -> str:
        """Provider and model name, for messages (never the API key)."""
        ...

    def stream(self, messages: list[Message], tools: list[ToolSchema]) -> AsyncIterator[ModelEvent]: ...


@dataclass
class ModelTurn:
    """One collected answer: all text, the tool calls, how it ended."""

    text: str = ""
    reasoning: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None


async def collect_turn(
    model: ChatModel,
    messages: list[Message],
    tools: list[ToolSchema],
    on_text: Callable[[str], None] | None = None,
) -> ModelTurn:
    """Run one model request to its end, passing text deltas to ``on_text`` as they arrive."""
    turn = ModelTurn()
    text: list[str] = []
    reasoning: list[str] = []
    stream = model.stream(messages, tools)
    try:
        async for event in stream:
            if isinstance(event, TextDelta):
                (reasoning if event.reasoning else text).append(event.text)
                if on_text is not None and event.text:
                    on_text(event.text)
            elif isinstance(event, ToolCall):
                turn.tool_calls.append(event)
            elif isinstance(event, TurnEnd):
                turn.finish_reason = event.finish_reason
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()
    turn.text = "".join(text)
    turn.reasoning = "".join(reasoning)
    return turn


def parse_arguments(name: str, raw: str | dict[str, Any] | None, call_id: str = "") -> ToolCall:
    """A ToolCall from a name and its JSON arguments text; bad JSON is kept as ``error``, not raised."""
    if isinstance(raw, dict):
        return ToolCall(name, raw, call_id, json.dumps(raw, ensure_ascii=False))
    text = (raw or "").strip()
    if not text:
        return ToolCall(name, {}, call_id, "")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        return ToolCall(name, {}, call_id, text, error=f"arguments are not valid JSON ({exc.msg})")
    if not isinstance(value, dict):
        return ToolCall(name, {}, call_id, text, error="arguments must be a JSON object")
    return ToolCall(name, value, call_id, text)
