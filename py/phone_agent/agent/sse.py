"""Server-sent events and OpenAI chat-completion chunks, sans-I/O: bytes in, events out.

``SseParser`` splits a byte stream into events (any line ending, comments, multi-line data, UTF-8
split across chunks). ``ChatChunkAssembler`` turns ``chat.completion.chunk`` objects into text deltas
and, at the end, whole tool calls assembled from their argument fragments.
"""

from __future__ import annotations

import codecs
from dataclasses import dataclass, field
from typing import Any

from .model import ModelEvent, TextDelta, TurnEnd, parse_arguments


@dataclass(frozen=True)
class SseEvent:
    data: str
    event: str = "message"
    id: str | None = None


class SseParser:
    """Feed bytes, get the events completed so far."""

    def __init__(self) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._buffer = ""
        self._data: list[str] = []
        self._event = ""
        self._id: str | None = None
        self._skip_lf = False

    def feed(self, chunk: bytes) -> list[SseEvent]:
        text = self._decoder.decode(chunk)
        if self._skip_lf and text.startswith("\n"):
            text = text[1:]
        self._skip_lf = False
        self._buffer += text
        events: list[SseEvent] = []
        while True:
            cr, lf = self._buffer.find("\r"), self._buffer.find("\n")
            if cr < 0 and lf < 0:
                break
            if cr >= 0 and (lf < 0 or cr < lf):
                end, skip = cr, 1
                if cr + 1 < len(self._buffer):
                    if self._buffer[cr + 1] == "\n":
                        skip = 2
                else:
                    self._skip_lf = True  # a CRLF may be split across chunks
            else:
                end, skip = lf, 1
            line = self._buffer[:end]
            self._buffer = self._buffer[end + skip :]
            event = self._line(line)
            if event is not None:
                events.append(event)
        return events

    def finish(self) -> list[SseEvent]:
        """End of stream: a last event without its blank line still counts."""
        tail = self._buffer + self._decoder.decode(b"", final=True)
        self._buffer = ""
        events = []
        if tail:
            event = self._line(tail)
            if event is not None:
                events.append(event)
        event = self._line("")
        if event is not None:
            events.append(event)
        return events

    def _line(self, line: str) -> SseEvent | None:
        if line == "":
            if not self._data:
                self._event = ""
                return None
            event = SseEvent("\n".join(self._data), self._event or "message", self._id)
            self._data, self._event = [], ""
            return event
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            self._id = value
        return None


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


class ChatChunkAssembler:
    """Folds ``chat.completion`` chunks (or one whole non-streamed completion) into model events."""

    def __init__(self) -> None:
        self._calls: dict[int, _PartialCall] = {}
        self.finish_reason: str | None = None
        self.usage: dict[str, Any] | None = None
        self.saw_choice = False

    def add_chunk(self, chunk: dict[str, Any]) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            self.saw_choice = True
            delta = choice.get("delta") or choice.get("message") or {}
            events += self._delta(delta)
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        return events

    def _delta(self, delta: dict[str, Any]) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        for key in ("reasoning_content", "reasoning"):
            value = delta.get(key)
            if isinstance(value, str) and value:
                events.append(TextDelta(value, reasoning=True))
        content = delta.get("content")
        if isinstance(content, str) and content:
            events.append(TextDelta(content))
        elif isinstance(content, list):  # some servers send content parts
            for part in content:
                if isinstance(part, dict) and isinstance(part.get("text"), str):
                    events.append(TextDelta(part["text"]))
        for position, call in enumerate(delta.get("tool_calls") or []):
            if not isinstance(call, dict):
                continue
            index = call.get("index", position)
            partial = self._calls.setdefault(index if isinstance(index, int) else position, _PartialCall())
            if call.get("id"):
                partial.id = call["id"]
            function = call.get("function") or {}
            if function.get("name") and not partial.name:
                partial.name = function["name"]
            arguments = function.get("arguments")
            if isinstance(arguments, str):
                partial.arguments.append(arguments)
            elif isinstance(arguments, dict):
                partial.arguments = [parse_arguments("", arguments).raw_arguments]
        # Older servers: a single function_call.
        legacy = delta.get("function_call")
        if isinstance(legacy, dict):
            partial = self._calls.setdefault(0, _PartialCall())
            if legacy.get("name"):
                partial.name = legacy["name"]
            if isinstance(legacy.get("arguments"), str):
                partial.arguments.append(legacy["arguments"])
        return events

    def finish(self) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        for index in sorted(self._calls):
            partial = self._calls[index]
            if partial.name:
                events.append(parse_arguments(partial.name, "".join(partial.arguments), partial.id))
        events.append(TurnEnd(self.finish_reason, self.usage))
        return events
