"""The relay between ``phone-agent mcp`` and the page, without I/O: pending calls, ids, time limits.

``RelayCore`` holds the one thing the relay must get right — which call is waiting for which answer from
which page — and nothing that waits: it never touches a socket, a clock or a task. The asyncio front end
(``server.relay.Relay``) feeds it the page's text frames and turns what it returns into futures,
notifications and frames to send. The frames themselves (their shapes, building and reading them) are
``relay.frames``'s; the core reads each page frame through ``parse_page_frame`` and judges it against
the calls it holds.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import browser_not_connected
from ..tools.catalog import get_tool
from ..tools.spec import ToolSpec, validate_arguments
from .frames import AskFrame, BadFrame, ProgressFrame, WithdrawFrame, parse_page_frame


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
class CallAsks:
    """The page asks ``call``'s client a question (``ask``: its id; ``kind``: takeover or confirm)."""

    call: PendingCall
    ask: str
    kind: str
    message: str


@dataclass(frozen=True)
class CallWithdraws:
    """The page no longer needs the answer to question ``ask`` of ``call``."""

    call: PendingCall
    ask: str


@dataclass(frozen=True)
class FrameIgnored:
    """A frame that changes nothing; ``reason`` says why, for a debug log."""

    reason: str


RelayEvent = CallAnswered | CallProgress | CallAsks | CallWithdraws | FrameIgnored


@dataclass
class RelayCore:
    """Which page is connected and which calls wait for it.

    A page connection is a token (an int) handed out by ``attach_page``. Each call belongs to the page it
    was sent to; a page that is replaced or disconnects takes its calls with it (they can never be
    answered), and frames from any page but the current one are ignored.
    """

    timeout_overrides: Mapping[str, int] = field(default_factory=dict)
    new_id: Callable[[], str] = new_request_id
    # Where the page is (``http://127.0.0.1:7788/``): said after "Open the phone-agent page first.".
    page_url: str | None = None
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
            raise browser_not_connected(self.page_url)
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

    def receive_frame(self, page: int, text: str | bytes) -> RelayEvent:
        """Interpret one frame from page ``page``. Never raises: a bad frame is ``FrameIgnored``."""
        if page != self.page:
            return FrameIgnored("frame from a page that is no longer the relay's page")
        frame = parse_page_frame(text)
        if isinstance(frame, BadFrame) and frame.id is None:  # unreadable before it named a call
            return FrameIgnored(frame.reason)
        call = self.pending.get(frame.id) if frame.id is not None else None
        if call is None:
            return FrameIgnored(f"unknown id {frame.id!r} (answered, timed out or cancelled already)")
        if call.page != page:  # pragma: no cover - calls of a replaced page are dropped on attach
            return FrameIgnored(f"id {frame.id!r} belongs to another page")
        if isinstance(frame, BadFrame):
            return FrameIgnored(frame.reason)
        if isinstance(frame, ProgressFrame):
            if frame.seq <= call.last_seq:
                return FrameIgnored(f"progress seq {frame.seq} for {call.id!r} after seq {call.last_seq}")
            call.last_seq = frame.seq
            return CallProgress(call, frame.seq, frame.message)
        if isinstance(frame, AskFrame):
            return CallAsks(call, frame.ask, frame.kind, frame.message)
        if isinstance(frame, WithdrawFrame):
            return CallWithdraws(call, frame.ask)
        del self.pending[call.id]
        return CallAnswered(call, frame.result)
