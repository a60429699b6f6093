"""The relay between ``phone-agent mcp`` and the page, without I/O: pending calls, frames, ids, time limits.

``RelayCore`` holds the one thing the relay must get right — which call is waiting for which answer from
which page — and nothing that waits: it never touches a socket, a clock or a task. The asyncio front end
(``relay.Relay``) feeds it the page's text frames and turns what it returns into futures, notifications
and frames to send. Frames are the specification's, plus ``cancel``::

    server → page  {"id", "tool", "args"}
    page → server  {"id", "result"}                              result = CallToolResult, wire form
    page → server  {"id", "type": "progress", "seq", "message"}  seq 1, 2, 3 … per id
    server → page  {"id", "type": "cancel"}
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import browser_not_connected
from ..tools.catalog import get_tool
from ..tools.spec import ToolSpec, validate_arguments
from .frames import CLOSE_REPLACED as CLOSE_REPLACED  # one source: the page stops retrying on it

# WebSocket close codes the server uses towards a page (4000–4999 are free for applications).
CLOSE_REPLACED_REASON = "replaced by a newer phone-agent page"
CLOSE_SHUTDOWN = 1001
CLOSE_SHUTDOWN_REASON = "phone-agent is shutting down"


def new_request_id() -> str:
    """A unique request id: milliseconds since the epoch and a random part (the specification's shape)."""
    return f"{int(time.time() * 1000):x}-{secrets.token_hex(6)}"


@dataclass
class PendingCall:
    """One call sent to a page and not answered yet."""

    id: str
    tool: str
    args: dict[str, Any]
    timeout_ms: int
    page: int
    last_seq: int = 0
    # Whatever the front end keeps with the call (its future, its progress queue); the core never reads it.
    context: Any = None


@dataclass(frozen=True)
class CallAnswered:
    """The page answered ``call``; it is no longer pending."""

    call: PendingCall
    result: dict[str, Any]


@dataclass(frozen=True)
class CallProgress:
    """The page reported progress on ``call``, which is still pending."""

    call: PendingCall
    seq: int
    message: str


@dataclass(frozen=True)
class FrameIgnored:
    """A frame that changes nothing; ``reason`` says why, for a debug log."""

    reason: str


RelayEvent = CallAnswered | CallProgress | FrameIgnored


@dataclass
class RelayCore:
    """Which page is connected and which calls wait for it.

    A page connection is a token (an int) handed out by ``attach_page``. Each call belongs to the page it
    was sent to; a page that is replaced or disconnects takes its calls with it (they can never be
    answered), and frames from any page but the current one are ignored.
    """

    timeout_overrides: Mapping[str, int] = field(default_factory=dict)
    new_id: Callable[[], str] = new_request_id
    page: int | None = None
    pending: dict[str, PendingCall] = field(default_factory=dict)
    _pages_seen: int = 0

    # -- pages ----------------------------------------------------------------------------------

    def attach_page(self) -> tuple[int, list[PendingCall]]:
        """A new page connected: it becomes the page. Answers its token and the replaced page's calls."""
        dropped = self._drop_calls_of(self.page) if self.page is not None else []
        self._pages_seen += 1
        self.page = self._pages_seen
        return self.page, dropped

    def detach_page(self, page: int) -> list[PendingCall]:
        """Page ``page`` disconnected. Answers its calls still pending (none if it was already replaced)."""
        if page != self.page:
            return []
        self.page = None
        return self._drop_calls_of(page)

    def _drop_calls_of(self, page: int) -> list[PendingCall]:
        dropped = [call for call in self.pending.values() if call.page == page]
        for call in dropped:
            del self.pending[call.id]
        return dropped

    # -- calls ----------------------------------------------------------------------------------

    def timeout_ms(self, tool: ToolSpec, args: dict[str, Any]) -> int:
        """The relay's time limit for one call: the catalog's, unless overridden (tests, slow pages)."""
        if tool.name in self.timeout_overrides:
            return int(self.timeout_overrides[tool.name])
        return tool.timeout_ms(args)

    def start_call(self, tool_name: Any, args: Any) -> PendingCall:
        """Check a call and register it for the current page.

        Raises ToolError for an unknown tool, bad arguments (the page is not bothered) or no page.
        """
        tool = get_tool(tool_name)
        clean = validate_arguments(tool, args)
        if self.page is None:
            raise browser_not_connected()
        call_id = self.new_id()
        while call_id in self.pending:  # a clash is near impossible, but a clash would cross answers
            call_id = self.new_id()
        call = PendingCall(
            id=call_id, tool=tool.name, args=clean, timeout_ms=self.timeout_ms(tool, clean), page=self.page
        )
        self.pending[call_id] = call
        return call

    def end_call(self, call_id: str) -> PendingCall | None:
        """Forget a call the server gave up on (timeout, cancellation, failed send); None if already over."""
        return self.pending.pop(call_id, None)

    # -- frames ---------------------------------------------------------------------------------

    @staticmethod
    def request_frame(call: PendingCall) -> str:
        return json.dumps({"id": call.id, "tool": call.tool, "args": call.args}, ensure_ascii=False)

    @staticmethod
    def cancel_frame(call_id: str) -> str:
        return json.dumps({"id": call_id, "type": "cancel"})

    def receive_frame(self, page: int, text: str | bytes) -> RelayEvent:
        """Interpret one frame from page ``page``. Never raises: a bad frame is ``FrameIgnored``."""
        if page != self.page:
            return FrameIgnored("frame from a page that is no longer the relay's page")
        try:
            frame = json.loads(text)
        except (ValueError, RecursionError):  # RecursionError: absurdly nested JSON
            return FrameIgnored("not JSON")
        if not isinstance(frame, dict):
            return FrameIgnored(f"not a JSON object but {type(frame).__name__}")
        call_id = frame.get("id")
        if not isinstance(call_id, str):
            return FrameIgnored("no string id")
        call = self.pending.get(call_id)
        if call is None:
            return FrameIgnored(f"unknown id {call_id!r} (answered, timed out or cancelled already)")
        if call.page != page:  # pragma: no cover - calls of a replaced page are dropped on attach
            return FrameIgnored(f"id {call_id!r} belongs to another page")
        kind = frame.get("type")
        if kind == "progress":
            seq = frame.get("seq")
            message = frame.get("message")
            if isinstance(seq, bool) or not isinstance(seq, int) or seq < 1:
                return FrameIgnored(f"progress for {call_id!r} without a positive integer seq")
            if not isinstance(message, str):
                return FrameIgnored(f"progress for {call_id!r} without a string message")
            if seq <= call.last_seq:
                return FrameIgnored(f"progress seq {seq} for {call_id!r} after seq {call.last_seq}")
            call.last_seq = seq
            return CallProgress(call, seq, message)
        if kind is not None:
            return FrameIgnored(f"unknown frame type {kind!r} for {call_id!r}")
        if "result" not in frame:
            return FrameIgnored(f"frame for {call_id!r} has neither result nor type")
        result = frame["result"]
        if not isinstance(result, dict):
            return FrameIgnored(f"result for {call_id!r} is not an object but {type(result).__name__}")
        del self.pending[call_id]
        return CallAnswered(call, result)
