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
        """The events of one chunk. A provider's JSON is taken as it comes: fields of the wrong type
        are skipped, never raised on (a broken provider shows as a turn without content)."""
        events: list[ModelEvent] = []
        if isinstance(chunk.get("usage"), dict):
            self.usage = chunk["usage"]
        choices = chunk.get("choices")
        for choice in choices if isinstance(choices, list) else []:
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            self.saw_choice = True
            delta = choice.get("delta") or choice.get("message") or {}
            if isinstance(delta, dict):
                events += self._delta(delta)
            if isinstance(choice.get("finish_reason"), str) and choice["finish_reason"]:
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
        tool_calls = delta.get("tool_calls")
        for position, call in enumerate(tool_calls if isinstance(tool_calls, list) else []):
            if not isinstance(call, dict):
                continue
            index = call.get("index", position)
            key = index if isinstance(index, int) and not isinstance(index, bool) else position
            self._add_call(self._calls.setdefault(key, _PartialCall()), call.get("id"), call.get("function"))
        # Older servers: a single function_call.
        legacy = delta.get("function_call")
        if isinstance(legacy, dict):
            self._add_call(self._calls.setdefault(0, _PartialCall()), None, legacy, rename=True)
        return events

    @staticmethod
    def _add_call(partial: _PartialCall, call_id: Any, function: Any, rename: bool = False) -> None:
        if isinstance(call_id, str) and call_id:
            partial.id = call_id
        if not isinstance(function, dict):
            return
        name = function.get("name")
        if isinstance(name, str) and name and (rename or not partial.name):
            partial.name = name
        arguments = function.get("arguments")
        if isinstance(arguments, str):
            partial.arguments.append(arguments)
        elif isinstance(arguments, dict):
            partial.arguments = [parse_arguments("", arguments).raw_arguments]

    def finish(self) -> list[ModelEvent]:
        events: list[ModelEvent] = []
        for index in sorted(self._calls):
            partial = self._calls[index]
            if partial.name:
                events.append(parse_arguments(partial.name, "".join(partial.arguments), partial.id))
        events.append(TurnEnd(self.finish_reason, self.usage))
        return events
