"""The quick way for a plain tool call on ``/mcp``: straight from the POST to the relay and back.

The SDK's session transport carries each request of a 2025-11-25 session through memory streams, its
session's dispatcher, per-request task groups and an event-stream library: about as much CPU again as
the rest of a call. A plain call needs none of it — its answer is the page's, and its only messages
besides are progress — so ``QuickCalls`` answers it in ``McpHttpEndpoint`` itself: the request is read
once, relayed (``Relay.call``), and the page's answer written as the one event of the POST's stream
(progress before it, as the SDK writes it: ``notifications/progress`` for a progressToken, else
``notifications/message`` at info unless the session's ``logging/setLevel`` said less). A client that
cancels it (``notifications/cancelled``) or drops its connection cancels it in the page.

Plain means: a ``tools/call`` in a session the SDK holds (its id known there, a handshake revision),
of a tool of the server's profile whose call cannot ask the caller or run as an MCP task, with no
``_meta`` of the protocol's or ours but a progressToken and who made it (``frames.CALLER_META``; a
client's own keys pass unread). Everything else — the handshake, lists, tool_groups, answer_question,
run_agent_task, file transfers, 2026-07-28 requests — goes to the SDK as before (the body read here
is handed on as it came).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import math
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any

import anyio
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER as SESSION_HEADER
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER as VERSION_HEADER
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.datastructures import Headers
from starlette.types import Message, Receive, Send

from ..relay.frames import CALLER_META, META_CALLERS
from ..tools.catalog import ToolProfile, tools_for_profile
from ..tools.groups import GROUPS_TOOL_NAME
from .mcp_apps import ANSWER_TOOL_NAME
from .mcp_bridge import LOGGER_NAME, PROGRESS_LEVEL, level_allows, to_call_tool_result
from .mcp_input import ASKING_TOOLS
from .mcp_tasks import TASK_TOOLS
from .relay import Relay

log = logging.getLogger("phone_agent.mcp")

NOT_QUICK = frozenset({GROUPS_TOOL_NAME, ANSWER_TOOL_NAME, *ASKING_TOOLS, *TASK_TOOLS})
# A call's _meta keys that the quick way knows; a client's own keys (another vendor's) pass unread, as
# the SDK's way does; the protocol's (io.modelcontextprotocol/…) and ours (a transfer) go to the SDK.
QUICK_META = frozenset({"progressToken", CALLER_META})
RESERVED_META = ("io.modelcontextprotocol/", "modelcontextprotocol.io/", "phone-agent/")
MAX_LEVELS = 1000
# Relays one call: the tool, its arguments, where its progress goes, who made it; the page's answer.
RelayCall = Callable[..., Awaitable[dict[str, Any]]]


@dataclass(frozen=True)
class QuickCall:
    request_id: int | str
    name: str
    arguments: dict[str, Any] | None
    progress_token: Any
    caller: str | None


def _sse(message: dict[str, Any]) -> bytes:
    data = json.dumps(message, ensure_ascii=False, separators=(",", ":"))
    return b"event: message\r\ndata: " + data.encode() + b"\r\n\r\n"


class QuickCalls:
    """The plain calls of the sessions the SDK holds, answered here (``McpHttpEndpoint``)."""

    def __init__(self, relay_call: RelayCall, offered: frozenset[str]) -> None:
        self.relay_call = relay_call
        self.offered = offered - NOT_QUICK
        self.levels: dict[str, str] = {}  # each session's logging/setLevel
        self.running: dict[tuple[str, Any], asyncio.Task[dict[str, Any]]] = {}

    def session_of(self, headers: Headers, sessions: dict[str, Any]) -> str | None:
        """The request's session, when it is one the SDK holds on a handshake revision."""
        session = headers.get(SESSION_HEADER)
        version = headers.get(VERSION_HEADER)
        if session is None or session not in sessions:
            return None
        return session if version is None or version in HANDSHAKE_PROTOCOL_VERSIONS else None

    def quick_call(self, session: str, body: bytes) -> QuickCall | None:
        """The call, when the body is a plain one; else None (after noting a cancellation or a level,
        which the SDK gets too)."""
        try:
            message = json.loads(body)
        except ValueError:
            return None
        if not isinstance(message, dict) or not isinstance(params := message.get("params"), dict):
            return None
        method = message.get("method")
        if method == "notifications/cancelled":
            running = self.running.get((session, params.get("requestId")))
            if running is not None:
                running.cancel()
            return None
        if method == "logging/setLevel" and isinstance(params.get("level"), str):
            if len(self.levels) > MAX_LEVELS:
                self.levels.clear()  # sessions long gone; a session's level is set again rarely
            self.levels[session] = params["level"]
            return None
        request_id, name, arguments = message.get("id"), params.get("name"), params.get("arguments")
        meta = params.get("_meta") or {}
        plain = (
            method == "tools/call"
            and isinstance(request_id, int | str)
            and not isinstance(request_id, bool)
            and name in self.offered
            and set(params) <= {"name", "arguments", "_meta"}
            and (arguments is None or isinstance(arguments, dict))
            and isinstance(meta, dict)
            and all(map(_plain_meta_key, meta))
        )
        if not plain:
            return None
        caller = meta.get(CALLER_META)
        return QuickCall(
            request_id, name, arguments, meta.get("progressToken"), caller if caller in META_CALLERS else None
        )

    async def serve(self, session: str, call: QuickCall, receive: Receive, send: Send) -> None:
        """Answer ``call`` on the POST's own event stream; cancelled when its client goes."""
        head = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache, no-transform")]
        head.append((SESSION_HEADER.encode(), session.encode()))
        await send({"type": "http.response.start", "status": 200, "headers": head})
        open_ = [True]

        async def write(message: dict[str, Any]) -> None:
            if open_[0]:
                try:
                    await send({"type": "http.response.body", "body": _sse(message), "more_body": True})
                except Exception:  # the client went
                    open_[0] = False

        async def progress(seq: int, text: str) -> None:
            if call.progress_token is not None:
                params = {"progressToken": call.progress_token, "progress": seq, "message": text}
                await write({"jsonrpc": "2.0", "method": "notifications/progress", "params": params})
            elif level_allows(self.levels.get(session), PROGRESS_LEVEL):
                params = {"level": PROGRESS_LEVEL, "logger": LOGGER_NAME, "data": text}
                await write({"jsonrpc": "2.0", "method": "notifications/message", "params": params})

        key = (session, call.request_id)
        task = asyncio.ensure_future(self.relay_call(call.name, call.arguments, progress, caller=call.caller))
        self.running[key] = task
        watcher = asyncio.ensure_future(_until_disconnect(receive))
        try:
            await asyncio.wait({task, watcher}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the server stops
            task.cancel()
            raise
        finally:
            watcher.cancel()
            self.running.pop(key, None)
        if not task.done():  # the client went: no one can receive the answer, the page stops
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait({task})
        # A cancelled call (the client's notifications/cancelled, or gone) is not answered, as the SDK does.
        wire = None if task.cancelled() else task.result()
        if wire is not None:
            result = _checked(call.name, wire)
            await write({"jsonrpc": "2.0", "id": call.request_id, "result": result})
        with contextlib.suppress(Exception):
            await send({"type": "http.response.body", "body": b"", "more_body": False})


def quick_calls(relay: Relay, profile: str | ToolProfile) -> QuickCalls:
    """The quick way for the calls of the server's tools (those of ``profile``) to ``relay``'s page."""
    return QuickCalls(relay.call, frozenset(spec.name for spec in tools_for_profile(profile)))


def _plain_meta_key(key: str) -> bool:
    return key in QUICK_META or not key.startswith(RESERVED_META)


def _checked(tool: str, wire: dict[str, Any]) -> dict[str, Any]:
    """The page's answer as it came, when it is a well-formed tool result; else the isError saying not."""
    checked = to_call_tool_result(tool, wire)
    if checked.is_error and not wire.get("isError"):
        return checked.model_dump(by_alias=True, mode="json", exclude_none=True)
    return wire


async def _until_disconnect(receive: Receive) -> None:
    while True:
        message: Message = await receive()
        if message["type"] == "http.disconnect":
            return


@contextlib.contextmanager
def held_session(transport: Any) -> Iterator[None]:
    """Hold the SDK's session while a quick call is served, as its own requests do: its idle countdown
    (``session_idle_timeout``) stops meanwhile and starts again when the last request ends — else a
    client making nothing but plain calls would see its session reaped as idle. The SDK counts its
    requests in private fields (no public way in mcp 2.x); a transport without them is left as it is."""
    scope = getattr(transport, "idle_scope", None)
    timeout = getattr(transport, "_idle_timeout", None)
    if scope is None or timeout is None or not hasattr(transport, "_requests_in_flight"):
        yield
        return
    transport._requests_in_flight += 1
    scope.deadline = math.inf
    try:
        yield
    finally:
        transport._requests_in_flight -= 1
        if not transport._requests_in_flight:
            scope.deadline = anyio.current_time() + timeout
