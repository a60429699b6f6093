"""One tool call as the pipeline carries it (``Call``): the tool, its arguments, who made it and
under which call, and what the steps learn on the way; what a step is (``Step``) and what the activity
log is told when a call ends (``CallRecord``).

The call being handled now is kept in a context variable (``current``): a call made while another
one's handler runs (a flow's step under ``run_flow``, the agent's action under ``run_agent_task``)
is that call's child, on whatever road it was made. Pure: no I/O.
"""

from __future__ import annotations

import contextvars
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from ...errors import ToolError
from ..named_secrets import SecretBook
from ..session import DeviceSession
from ..spec import Channel, ProgressSink, ToolSpec

Result = dict[str, Any]


class Caller(StrEnum):
    """Who made a call: an MCP client (through the server), an MCP App view (an MCP client's view that
    says so in ``_meta``), an in-page agent over WebMCP, the page's agent, a flow's step, or the person
    at the page (the live view and the page's own panels)."""

    MCP = "mcp"
    APP = "app"
    WEBMCP = "webmcp"
    AGENT = "agent"
    FLOW = "flow"
    LIVE = "live"


# The caller a channel's calls have unless the call says otherwise.
CHANNEL_CALLERS = {
    Channel.RELAY: Caller.MCP,
    Channel.FARM: Caller.MCP,
    Channel.WEBMCP: Caller.WEBMCP,
    Channel.AGENT: Caller.AGENT,
    Channel.PAGE: Caller.LIVE,
}


def new_call_id() -> str:
    return "c-" + secrets.token_hex(5)


@dataclass
class Call:
    """One call on its way through the pipeline. ``name`` and ``args`` are as asked; ``spec`` and
    ``clean`` are filled by the validation step; ``error`` keeps the failure a result was made of (a
    nested caller raises it again); ``session`` is a caller's own view of the phone (the agent's, taken
    from the screen it has just seen), else the page's; ``secrets``: the caller's own book, else the
    page's; ``confirmed``: the person already allowed it."""

    name: str
    args: Any
    channel: Channel
    caller: Caller
    parent: str | None = None
    depth: int = 0
    id: str = field(default_factory=new_call_id)
    progress: ProgressSink | None = None
    transfer: Any = None
    session: DeviceSession | None = None
    confirmed: bool = False
    secrets: SecretBook | None = None
    spec: ToolSpec | None = None
    clean: dict[str, Any] = field(default_factory=dict)
    error: ToolError | None = None
    duration_ms: int = 0

    def under(self, parent: Call | None) -> Call:
        """This call as a child of ``parent`` (None: a call of its own)."""
        if parent is not None:
            self.parent, self.depth = parent.id, parent.depth + 1
        return self


@dataclass(frozen=True)
class CallRecord:
    """One finished tool call, as the page's activity log shows it: who made it and under which call."""

    channel: Channel
    tool: str
    result: Result
    duration_ms: int
    caller: Caller = Caller.LIVE
    call_id: str = ""
    parent: str | None = None
    depth: int = 0


CallListener = Callable[[CallRecord], None]
Next = Callable[[Call], Awaitable[Result]]


class Step(Protocol):
    """One step of the pipeline: does its part around ``call_next`` (the steps after it, then the
    handler) and answers the call's result."""

    async def __call__(self, call: Call, call_next: Next) -> Result: ...


class CallRunner(Protocol):
    """A pipeline as its handlers' nested calls see it (``chain.CallPipeline``)."""

    async def run(self, call: Call) -> Result: ...

    async def run_nested(self, call: Call) -> Result: ...


@dataclass(frozen=True)
class Scope:
    """Where a handler runs: its pipeline (nested calls enter the same one) and its call (their parent)."""

    pipeline: CallRunner
    call: Call | None


_SCOPE: contextvars.ContextVar[Scope | None] = contextvars.ContextVar("phone_agent_call", default=None)


def current() -> Scope | None:
    """The pipeline and call whose handler runs now, if any."""
    return _SCOPE.get()


def enter(scope: Scope) -> contextvars.Token[Scope | None]:
    return _SCOPE.set(scope)


def leave(token: contextvars.Token[Scope | None]) -> None:
    _SCOPE.reset(token)
