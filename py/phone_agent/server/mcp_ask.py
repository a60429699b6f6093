"""Asking the MCP caller's user, too, when the agent needs a person: a take over or a confirmation.

The page asks the person at the page and, over the relay, the client of the call that runs the agent
(``relay.frames``: ``ask``/``answer``/``withdraw``). Here the question becomes the client's own prompt: on
handshake revisions (2025-11-25 and earlier) a form-mode ``elicitation/create`` request, sent on the
call's own stream, to a client that declared ``elicitation`` (form mode) in its capabilities; a client
that did not declare it is never sent one (the answer is None: only the person at the page can answer).
A take over is "Done"/"Cancel" (accept: done; decline or cancel: cancel); a confirmation yes/no (accept:
yes unless ``allow`` is false; decline or cancel: no). The message says the reason or the action, never
a secret's value (the page never has one in its question). Whoever answers first wins: when the person
at the page does, the relay cancels the request (``notifications/cancelled``) and a late reply is ignored.

The 2026-07-28 revision has no server-to-client requests on a call's stream: its clients that declared
``elicitation`` are asked with the revision's input requests instead (``mcp_input``).

``phone-agent mcp`` (the stdio front) relays the server's elicitation to its own client the same way
(``relay_elicitation``: an elicitation or an input request), or answers an error when its client
cannot be asked, which the server takes as "no answer".
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import mcp.types as types
from mcp.server.context import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

log = logging.getLogger("phone_agent.mcp_ask")

_TAKEOVER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "done": {
            "type": "boolean",
            "title": "Done",
            "description": "You have finished on the phone: the agent looks at the screen again and goes on. "
            "Decline (Cancel) ends the task.",
            "default": True,
        }
    },
}
_CONFIRM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "allow": {
            "type": "boolean",
            "title": "Allow",
            "description": "Allow the agent to do this action (accept: yes; decline: no, the step fails).",
        }
    },
}
SCHEMAS: dict[str, dict[str, Any]] = {"takeover": _TAKEOVER_SCHEMA, "confirm": _CONFIRM_SCHEMA}
# What the client's accept / decline / cancel mean, by question kind (the answer field, the answers).
_ANSWERS: dict[str, tuple[str, str, str]] = {
    "takeover": ("done", "done", "cancel"),
    "confirm": ("allow", "yes", "no"),
}


def can_ask(ctx: ServerRequestContext[Any]) -> bool:
    """Whether this call's client may be sent a form-mode elicitation: a handshake revision, and the
    ``elicitation`` capability (an empty object means form mode) declared."""
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS or ctx.request_id is None:
        return False
    capabilities = ctx.session.client_capabilities
    elicitation = capabilities.elicitation if capabilities is not None else None
    if elicitation is None:
        return False
    return elicitation.form is not None or elicitation.url is None


def answer_of(kind: str, result: types.ElicitResult) -> str:
    """The page's answer (done/cancel, yes/no) for the client's reply to a ``kind`` question."""
    field, yes, no = _ANSWERS[kind]
    if result.action != "accept":
        return no
    return no if (result.content or {}).get(field) is False else yes


def form_of(kind: str, message: str) -> types.ElicitRequestFormParams:
    """The page's question as a form-mode elicitation."""
    return types.ElicitRequestFormParams(message=message, requested_schema=SCHEMAS[kind])


async def ask_with(
    elicit: Callable[[types.ElicitRequestFormParams], Awaitable[types.ElicitResult | None]],
    kind: str,
    message: str,
) -> str | None:
    """Ask a ``kind`` question through ``elicit`` (an elicitation request, or an input request on
    2026-07-28: ``mcp_input``); the page's answer, or None when the client cannot be asked."""
    if kind not in SCHEMAS:
        return None
    result = await elicit(form_of(kind, message))
    return None if result is None else answer_of(kind, result)


async def elicit_client(
    ctx: ServerRequestContext[Any], form: types.ElicitRequestFormParams
) -> types.ElicitResult | None:
    """A form-mode ``elicitation/create`` to the client of the call ``ctx``, on the call's stream (the
    relay cancels it when the question is withdrawn); None when that client cannot be sent one."""
    if not can_ask(ctx):
        return None
    log.info("asking the MCP client too")
    session = ctx.session
    return await session.elicit_form(form.message, form.requested_schema, related_request_id=ctx.request_id)


async def relay_elicitation(
    caller: Any, params: types.ElicitRequestParams
) -> types.ElicitResult | types.ErrorData:
    """The stdio front: pass the server's form elicitation on to the front's own client (``caller``: the
    progress forwarder of the call it belongs to, which elicits as its client's revision allows), or
    answer an error when that client cannot be asked (the server then leaves it to the page)."""
    elicit = getattr(caller, "elicit", None)
    result = None
    if elicit is not None and isinstance(params, types.ElicitRequestFormParams):
        result = await elicit(params)
    if result is None:
        return types.ErrorData(code=types.INVALID_REQUEST, message="this MCP client cannot be asked")
    return result
