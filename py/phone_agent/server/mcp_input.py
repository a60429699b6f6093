"""Asking a 2026-07-28 caller: the revision's input requests (multi round-trip) for a call whose agent
needs a person.

On 2026-07-28 a server sends no request of its own on a call's stream; it answers the call with an
``InputRequiredResult`` (``resultType: "input_required"``: ``inputRequests`` and an opaque
``requestState``) and the client retries the same ``tools/call`` with ``inputResponses`` and that
``requestState``. A call of ``ASKING_TOOLS`` (``run_agent_task``) from a client that declared
``elicitation`` runs *parked* here, in the background, while its requests come and go: each request
(the first, each retry) waits for the call's result or for the page's next question, whichever comes
first; a question becomes one form-mode ``elicitation/create`` input request, and the retry's response
is handed back to the page (``mcp_ask``). Progress goes to whichever request of the call is waiting.

The person at the page may answer first: the question is withdrawn, and a response to it that comes
with a later retry is ignored (the retry simply waits on). A client that cancels the request it has in
flight cancels the call, as with any call; a client that never retries leaves the call to the person at
the page, and its result is kept ``PARKED_TTL_S`` after it ends. ``requestState`` is an unguessable id
of a parked call of this process; an unknown or expired one is -32602.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import mcp.types as types
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from .mcp_ask import ask_with

log = logging.getLogger("phone_agent.mcp_input")

# The tools whose calls may ask the caller (their agent may need a person).
ASKING_TOOLS = frozenset({"run_agent_task"})
PARKED_TTL_S = 600.0

Progress = Callable[[int, str], Awaitable[None]]


@dataclass
class _Question:
    form: types.ElicitRequestFormParams
    answer: asyncio.Future[types.ElicitResult]


@dataclass
class ParkedCall:
    """One call running in the background while its client answers the page's questions."""

    state: str
    tool: str
    runner: asyncio.Task[types.CallToolResult] | None = None
    questions: dict[str, _Question] = field(default_factory=dict)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    # Where progress goes now: the progress of the call's request in flight; None between rounds.
    progress: Progress | None = None
    _asked: int = 0

    # -- the call's side (ProgressForwarder's shape: progress, elicit, ask) -------------------------

    async def __call__(self, seq: int, message: str) -> None:
        if self.progress is not None:
            await self.progress(seq, message)

    async def elicit(self, form: types.ElicitRequestFormParams) -> types.ElicitResult | None:
        """Put a question to the client with the next round; its answer when it retries. Cancelled
        (withdrawn) when the person at the page answered first or the call ended."""
        self._asked += 1
        key = f"ask-{self._asked}"
        question = _Question(form, asyncio.get_running_loop().create_future())
        self.questions[key] = question
        self.changed.set()
        try:
            return await question.answer
        finally:
            self.questions.pop(key, None)

    async def ask(self, kind: str, message: str) -> str | None:
        return await ask_with(self.elicit, kind, message)

    # -- the client's side ----------------------------------------------------------------------

    def respond(self, responses: dict[str, Any] | None) -> None:
        for key, response in (responses or {}).items():
            question = self.questions.get(key)
            if question is None or question.answer.done():
                log.info("a response to a question that is over (%s) is ignored", key)
                continue
            if isinstance(response, types.ElicitResult):
                question.answer.set_result(response)
            else:
                try:
                    question.answer.set_result(types.ElicitResult.model_validate(response))
                except Exception as exc:
                    log.info("an unreadable response to %s is ignored: %s", key, exc)

    async def next_round(self) -> types.CallToolResult | types.InputRequiredResult:
        """The call's result, or the questions open now (for the client to answer and retry)."""
        assert self.runner is not None
        while True:
            self.changed.clear()
            if self.runner.done():
                return self.runner.result()
            open_questions = {k: q for k, q in self.questions.items() if not q.answer.done()}
            if open_questions:
                return types.InputRequiredResult(
                    input_requests={k: types.ElicitRequest(params=q.form) for k, q in open_questions.items()},
                    request_state=self.state,
                )
            changed = asyncio.ensure_future(self.changed.wait())
            try:
                await asyncio.wait({changed, self.runner}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                changed.cancel()


class ParkedCalls:
    """The parked calls of one MCP server (``build_relaying_server``), by their ``requestState``."""

    def __init__(self) -> None:
        self._calls: dict[str, ParkedCall] = {}

    async def run(
        self,
        name: str,
        params: types.CallToolRequestParams,
        progress: Progress,
        start: Callable[[ParkedCall], Awaitable[types.CallToolResult]],
    ) -> types.CallToolResult | types.InputRequiredResult:
        """One request of a parked call: the first (``start`` runs the call) or a retry."""
        if params.request_state is not None:
            parked = self._calls.get(params.request_state)
            if parked is None or parked.tool != name:
                raise MCPError(
                    code=INVALID_PARAMS,
                    message="Unknown or expired requestState: call the tool again without it",
                )
            parked.respond(params.input_responses)
        else:
            parked = ParkedCall(secrets.token_urlsafe(24), name)
            parked.runner = asyncio.ensure_future(start(parked))
            self._calls[parked.state] = parked
            parked.runner.add_done_callback(lambda _t, state=parked.state: self._expire_later(state))
        parked.progress = progress
        try:
            answer = await parked.next_round()
        except asyncio.CancelledError:
            # The client cancelled its request: the call ends, as any cancelled call does.
            if parked.runner is not None:
                parked.runner.cancel()
            raise
        finally:
            if parked.progress is progress:
                parked.progress = None
        if isinstance(answer, types.CallToolResult):
            self._calls.pop(parked.state, None)
        return answer

    def _expire_later(self, state: str) -> None:
        asyncio.get_running_loop().call_later(PARKED_TTL_S, self._calls.pop, state, None)
