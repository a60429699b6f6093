"""Channel A over streamable HTTP: the SDK's session manager at ``/mcp``, behind a bearer token.

``BearerGuard`` answers every request without the right ``Authorization: Bearer <token>`` with 401,
``{"error": "Missing or invalid bearer token"}`` and ``WWW-Authenticate: Bearer``; the comparison takes
constant time and the token is never logged. ``McpHttpEndpoint`` runs the SDK's
``StreamableHTTPSessionManager`` for one low-level ``Server`` (many clients at once, each its own
session, all sharing the one relay and page) and counts the requests in flight, which is how the server
knows whether any client is still there (``idle_for``). When the server stops, ``close_streams`` ends
the requests still open (a client's standing GET stream) as if their clients had gone, so the stop
waits on none of them.

Both MCP revisions share the endpoint. The SDK sends a request whose ``MCP-Protocol-Version`` header names
2026-07-28 to its stateless entry (no session; the envelope in ``_meta``; a header that contradicts the
body is answered -32020); a POST without that header whose body carries the 2026-07-28 envelope
(``_meta["io.modelcontextprotocol/protocolVersion"]``) is routed there too, as if the header were sent,
instead of being taken for a 2025-11-25 request without a session. Everything else is 2025-11-25 as
before (``initialize``, ``Mcp-Session-Id``). A plain ``GET /mcp`` that does not ask for an event stream is
the health check longarm answers too: ``{"status": "running", "transport": "mcp"}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import DEFAULT_MAX_REQUEST_BODY_SIZE, StreamableHTTPSessionManager
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import Message, Receive, Scope, Send

from .credentials import same_secret
from .mcp_quick import QuickCalls, held_session

MCP_PATH = "/mcp"
UNAUTHORIZED_BODY = {"error": "Missing or invalid bearer token"}
# An HTTP client that vanished without a DELETE leaves a session behind: reap it after this long idle.
SESSION_IDLE_S = 30 * 60.0
HEALTH_BODY = {"status": "running", "transport": "mcp"}
PROTOCOL_VERSION_HEADER = b"mcp-protocol-version"
PROTOCOL_VERSION_META_KEY = "io.modelcontextprotocol/protocolVersion"


def bearer_token(headers: Headers) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header, or None."""
    value = headers.get("authorization")
    if value is None:
        return None
    scheme, _, token = value.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def unauthorized() -> JSONResponse:
    return JSONResponse(UNAUTHORIZED_BODY, status_code=401, headers={"WWW-Authenticate": "Bearer"})


class BearerGuard:
    """An ASGI wrapper that lets through only requests carrying the bearer token."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], token: str) -> None:
        self.app = app
        self._token = token

    def __repr__(self) -> str:  # never show the token, even in a debugger's or a log's repr
        return "BearerGuard(token=<hidden>)"

    def allows(self, headers: Headers) -> bool:
        return same_secret(bearer_token(headers), self._token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not self.allows(Headers(scope=scope)):
            await unauthorized()(scope, receive, send)
            return
        await self.app(scope, receive, send)


class McpHttpEndpoint:
    """``/mcp``: the SDK's streamable HTTP transport for ``server``, with the bearer check in front."""

    def __init__(self, server: Server[Any], token: str, quick: QuickCalls | None = None) -> None:
        self.manager = StreamableHTTPSessionManager(app=server, session_idle_timeout=SESSION_IDLE_S)
        self.quick = quick
        self.in_flight = 0
        self._last_request = time.monotonic()
        self._closing = asyncio.Event()
        self._answering = 0  # requests in flight that are not standing GET streams
        self.guard = BearerGuard(self._serve, token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.guard(scope, receive, send)

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        if scope.get("method") == "GET" and "text/event-stream" not in headers.get("accept", ""):
            await JSONResponse(HEALTH_BODY, headers={"Cache-Control": "no-store"})(scope, receive, send)
            return
        self.in_flight += 1
        answering = scope.get("method") != "GET"  # a call (POST) rather than a standing stream
        self._answering += answering
        closing = self._closing

        async def receive_until_closed() -> Message:
            """The client's next message, or a disconnect once the server is stopping."""
            if closing.is_set():
                return {"type": "http.disconnect"}
            message = asyncio.ensure_future(receive())
            stop = asyncio.ensure_future(closing.wait())
            try:
                await asyncio.wait({message, stop}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                stop.cancel()
            if message.done():
                return message.result()
            message.cancel()
            return {"type": "http.disconnect"}

        response = {"started": False, "complete": False}

        async def send_watched(message: Message) -> None:
            if message["type"] == "http.response.start":
                response["started"] = True
            elif message["type"] == "http.response.body" and not message.get("more_body", False):
                response["complete"] = True
            await send(message)

        try:
            reader: Receive = receive_until_closed
            session = self._quick_session(scope, headers)
            if session is not None:
                assert self.quick is not None
                body, reader = await read_replayed(receive_until_closed)
                call = self.quick.quick_call(session, body) if body is not None else None
                if call is not None:
                    with held_session(self.manager._server_instances.get(session)):
                        await self.quick.serve(session, call, receive_until_closed, send)
                    return
            elif scope.get("method") == "POST" and PROTOCOL_VERSION_HEADER.decode() not in headers:
                scope, reader = await envelope_routed(scope, receive_until_closed)
            await self.manager.handle_request(scope, reader, send_watched)
            if closing.is_set() and response["started"] and not response["complete"]:
                # A stream ended by the stop (its client is still there): end the response properly.
                with contextlib.suppress(Exception):
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            self.in_flight -= 1
            self._answering -= answering
            self._last_request = time.monotonic()

    def _quick_session(self, scope: Scope, headers: Headers) -> str | None:
        """The session of a POST the quick way may answer (``mcp_quick``), else None."""
        if self.quick is None or scope.get("method") != "POST":
            return None
        return self.quick.session_of(headers, self.manager._server_instances)

    async def close_streams(self, grace_s: float = 1.0) -> None:
        """The server is stopping (the relay has answered every pending call): let the calls send their
        answers (within ``grace_s``), then every request still open sees its client disconnect."""
        deadline = time.monotonic() + grace_s
        while self._answering and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        self._closing.set()

    def idle_for(self) -> float:
        """Seconds since the last request ended; 0 while any request (a call, a GET stream) is open."""
        if self.in_flight:
            return 0.0
        return time.monotonic() - self._last_request

    @contextlib.asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """The session manager's task group; requests are served only inside it."""
        async with self.manager.run():
            yield


async def envelope_routed(scope: Scope, receive: Receive) -> tuple[Scope, Receive]:
    """A POST without ``MCP-Protocol-Version``: its body read (up to the SDK's limit) and replayed, and,
    when the body is one request carrying a revision in its ``_meta`` envelope, the header that names it
    added, so that the SDK routes the request by the revision it says it speaks."""
    body, replay = await read_replayed(receive)
    version = None if body is None else envelope_version(body)
    if version is not None:
        named = (PROTOCOL_VERSION_HEADER, version.encode("latin-1"))
        scope = {**scope, "headers": [*scope["headers"], named]}
    return scope, replay


async def read_replayed(receive: Receive) -> tuple[bytes | None, Receive]:
    """A POST's body (None when it is over the SDK's limit or the client went first) and a ``receive``
    that hands the same messages on as they came."""
    chunks: list[bytes] = []
    size = 0
    more = True
    first: Message | None = None
    while more and size <= DEFAULT_MAX_REQUEST_BODY_SIZE:
        message = await receive()
        if message["type"] != "http.request":
            first = message  # a disconnect: handed on as it came
            break
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        more = bool(message.get("more_body"))
    body = b"".join(chunks)
    replayed = [{"type": "http.request", "body": body, "more_body": more}] if first is None else [first]

    async def replay() -> Message:
        return replayed.pop(0) if replayed else await receive()

    return (None if more or first is not None else body), replay


def envelope_version(body: bytes) -> str | None:
    """The protocol revision a JSON-RPC request's ``params._meta`` names, or None."""
    try:
        message = json.loads(body)
    except ValueError:
        return None
    params = message.get("params") if isinstance(message, dict) else None
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
    return version if isinstance(version, str) and version.isascii() and 0 < len(version) <= 64 else None
