"""``phone-agent mcp``'s relay of JSON-RPC messages: stdio to the shared server's ``/mcp`` as they are.

When the server offers exactly the tools the front would (its ``--tools`` profile is the front's),
the front has nothing to add to most messages: each line its client writes is POSTed to ``/mcp`` as it
came, and each message of the answer (progress, the server's own requests such as an elicitation,
then the answer) is written to stdout as it came — no second MCP session, no models, no re-encoding
(``http_link``). The client's ``initialize`` goes upstream too, so the server sees the client's own
capabilities (elicitation, MCP Apps) and protocol revision; a 2026-07-28 request (its revision in
``_meta``) goes without a session, with the revision's header, and is cancelled by closing its stream.

What the front still does itself: ``ping``; a file tool's ``path`` (``client_files.streamed_call``:
the file is read or written here, on the client's machine); a session's standing event stream (the
server's ``notifications/tools/list_changed``); and the server gone or started again: a request that
cannot reach the server finds or starts one (the session opened again with the client's own
``initialize``) and is sent once more, and a call the server stopped answering half-way answers a
clear isError result (``errors.server_gone``), never a hang.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.streamable_http import MCP_SESSION_ID_HEADER as SESSION_HEADER
from mcp.shared.inbound import MCP_METHOD_HEADER, MCP_NAME_HEADER, NAME_BEARING_METHODS, encode_header_value
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER as VERSION_HEADER
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..errors import server_gone, server_unreachable
from . import client_files
from .http_link import HttpAnswer, HttpConnectError, HttpLink, HttpLinkError
from .mcp_http import MCP_PATH, PROTOCOL_VERSION_META_KEY

log = logging.getLogger("phone_agent.front")

INTERNAL_ERROR = -32603
LISTEN_RETRY_S = 1.0
MAX_LINE = 256 * 1024 * 1024  # a client's message (a file's bytes inline may be large)
CLOSE_S = 3.0
# After stdin closed, how long answers still due may take: below the 2 s an SDK stdio client gives a
# server to exit before it signals it.
CLOSE_GRACE_S = 1.0
# A JSON-RPC answer as the SDK writes it: "jsonrpc", "id", then "result" or "error" (a request or a
# notification has "method" there instead).
_ANSWER_HEAD = re.compile(
    rb'\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*(?:-?\d+|"(?:[^"\\]|\\.)*")\s*,\s*"(result|error|method)"'
)

# Finds or starts the server (a thread's work); its bearer token.
Ensure = Callable[[], Awaitable[str]]
# Writes one message (a line) to the client.
Write = Callable[[bytes], Awaitable[None]]


def is_answer(data: bytes) -> bool:
    """Whether a message is a JSON-RPC answer (not a request or notification)."""
    found = _ANSWER_HEAD.match(data, 0, 256)
    if found is not None:
        return found.group(1) != b"method"
    try:
        message = json.loads(data)
    except ValueError:
        return False
    return isinstance(message, dict) and "method" not in message and "id" in message


def _modern_version(message: dict[str, Any]) -> str | None:
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    version = meta.get(PROTOCOL_VERSION_META_KEY) if isinstance(meta, dict) else None
    return version if isinstance(version, str) and version in MODERN_PROTOCOL_VERSIONS else None


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode()


class JsonRpcRelay:
    """One stdio client's messages to the server and back."""

    def __init__(self, host: str, port: int, base_url: str, ensure: Ensure, write: Write) -> None:
        self.host, self.port, self.base_url = host, port, base_url
        self._ensure, self._write = ensure, write
        self.token = ""
        self.link: HttpLink | None = None
        self.session_id: str | None = None
        self.version: str | None = None  # the handshake revision the session speaks
        self._initialize: dict[str, Any] | None = None  # the client's, to open the session again
        self._lock = asyncio.Lock()
        self._generation = 0  # bumped each time the server is found again
        self._tasks: dict[Any, asyncio.Task[None]] = {}  # requests in flight, by id
        self._background: set[asyncio.Task[Any]] = set()
        self._cancelled: set[Any] = set()
        self._listener: asyncio.Task[None] | None = None
        # Cleared while the client's initialize is on its way: what the client sent after it (without
        # waiting for its answer, as a pipe may) goes in the session it opens.
        self._session_open = asyncio.Event()
        self._session_open.set()

    # -- the server ---------------------------------------------------------------------------------

    async def connect(self, generation: int | None = None, token: str | None = None) -> None:
        """Find or start the server (again, unless another request did since ``generation``); with
        ``token``, the server was found just now."""
        async with self._lock:
            if generation is not None and generation != self._generation:
                return
            self.token = token if token is not None else await self._ensure()
            if self.link is not None:
                self.link.close()
            self.link = HttpLink(self.host, self.port, {
                "Authorization": f"Bearer {self.token}",
                "Accept": "application/json, text/event-stream",
                "Content-Type": "application/json",
            })  # fmt: skip
            self._generation += 1
            self.session_id = None
            if self._initialize is not None:  # the client's session, opened again on this server
                await self._handshake(self._initialize)

    async def _handshake(self, initialize: dict[str, Any]) -> None:
        assert self.link is not None
        answer = await self.link.request("POST", MCP_PATH, _line({**initialize, "id": "front-reopen"}))
        async for _ in answer.messages():
            pass
        self.session_id = answer.headers.get(SESSION_HEADER)
        if answer.status != 200 or self.session_id is None:
            raise HttpLinkError(f"the server refused to open the session again ({answer.status})")
        await self._post_quietly({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self._listen()

    async def _post_quietly(self, message: dict[str, Any]) -> None:
        assert self.link is not None
        answer = await self.link.request("POST", MCP_PATH, _line(message), self._headers(message))
        async for _ in answer.messages():
            pass

    def _headers(self, message: dict[str, Any]) -> dict[str, str]:
        modern = _modern_version(message)
        if modern is not None:  # the revision's routing headers, which must agree with the body
            method = str(message.get("method") or "")
            headers = {VERSION_HEADER: modern, MCP_METHOD_HEADER: method}
            name = (message.get("params") or {}).get(NAME_BEARING_METHODS.get(method, ""))
            if isinstance(name, str):
                headers[MCP_NAME_HEADER] = encode_header_value(name)
            return headers
        if self.session_id is None:
            return {}
        headers = {SESSION_HEADER: self.session_id}
        if self.version is not None:
            headers[VERSION_HEADER] = self.version
        return headers

    def _listen(self) -> None:
        """The session's standing event stream (the server's messages outside any call)."""
        if self._listener is not None:
            self._listener.cancel()
        self._listener = asyncio.create_task(self._listening(self.session_id))

    async def _listening(self, session_id: str | None) -> None:
        while session_id is not None and session_id == self.session_id and self.link is not None:
            try:
                answer = await self.link.request("GET", MCP_PATH, headers=self._headers({}))
                if answer.status != 200:
                    async for _ in answer.messages():
                        pass
                    return
                async for data in answer.messages():
                    await self._write(data)
            except HttpConnectError:
                return  # the server is gone: the next request finds or starts one
            except HttpLinkError as exc:
                log.debug("the session's event stream ended: %s", exc)
            await asyncio.sleep(LISTEN_RETRY_S)

    # -- the client's messages ------------------------------------------------------------------------

    def receive(self, line: bytes) -> None:
        """One line from the client."""
        try:
            message = json.loads(line)
        except ValueError as exc:
            error = {"code": -32700, "message": f"Parse error: {exc}"}
            self._spawn(self._write(_line({"jsonrpc": "2.0", "id": None, "error": error})))
            return
        if not isinstance(message, dict):
            self._spawn(self._forward({}, line))
            return
        method, request_id = message.get("method"), message.get("id")
        if method == "ping" and request_id is not None:
            self._spawn(self._write(_line({"jsonrpc": "2.0", "id": request_id, "result": {}})))
            return
        if method == "notifications/cancelled":
            cancelled = (message.get("params") or {}).get("requestId")
            self._cancelled.add(cancelled)
            running = self._tasks.get(cancelled)
            if _modern_version(message) is not None or self.session_id is None:
                if running is not None:  # 2026-07-28 over HTTP: closing the request's stream cancels it
                    running.cancel()
                return
        if method == "initialize":
            self._initialize = message
            self.session_id = None
            self._session_open.clear()
        work = self._forward(message, line)
        if method == "tools/call" and client_files.streams(*_name_and_arguments(message)):
            work = self._file_call(message)
        task = self._spawn(work)
        if method == "initialize":
            task.add_done_callback(lambda _t: self._session_open.set())
        if method is not None and request_id is not None:
            self._tasks[request_id] = task
            task.add_done_callback(lambda _t, key=request_id: self._tasks.pop(key, None))

    def _spawn(self, work: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)
        return task

    async def _forward(self, message: dict[str, Any], line: bytes) -> None:
        answered = await self._exchange(message, line, self._write)
        if answered is None:
            await self._fail(message, "it answered nothing")

    async def _exchange(self, message: dict[str, Any], line: bytes, deliver: Write) -> str | None:
        """Send one message upstream, its answer's messages to ``deliver``; None when nothing answered
        a request (a failure already said), else ``"answered"``."""
        if message.get("method") != "initialize" and _modern_version(message) is None:
            await self._session_open.wait()
        for attempt in range(3):
            generation = self._generation
            if self.link is None:
                try:
                    await self.connect(generation)
                except Exception as exc:
                    await self._fail(message, str(exc), reached=False)
                    return "failed"
                continue
            try:
                answer = await self.link.request("POST", MCP_PATH, line, self._headers(message))
            except HttpConnectError as exc:  # nothing reached the server: find or start one, send again
                if attempt == 2:
                    await self._fail(message, str(exc), reached=False)
                    return "failed"
                await self._reconnect(message, generation)
                continue
            except (HttpLinkError, OSError) as exc:
                await self._fail(message, str(exc))
                return "failed"
            if answer.status == 404 and self.session_id is not None and message.get("method") != "initialize":
                async for _ in answer.messages():  # the session is unknown there (a new server): reopen
                    pass
                await self._reconnect(message, generation)
                continue
            return await self._relay(message, answer, deliver)
        await self._fail(message, "the server did not take the session", reached=False)
        return "failed"

    async def _reconnect(self, message: dict[str, Any], generation: int) -> None:
        try:
            await self.connect(generation)
        except Exception as exc:
            log.info("cannot reach the phone-agent server again: %s", exc)
            self.link = None

    async def _relay(self, message: dict[str, Any], answer: HttpAnswer, deliver: Write) -> str | None:
        request_id = message.get("id")
        answered = "id" not in message or "method" not in message  # a notification or a client's answer
        try:
            async for data in answer.messages():
                if not answered and is_answer(data):
                    answered = True
                    if answer.status >= 400 or data.find(b'"id":null', 0, 64) >= 0:
                        data = _with_id(data, request_id)
                    if message.get("method") == "initialize":
                        self._opened(answer, data)
                await deliver(data)
        except HttpLinkError as exc:
            if not answered and request_id not in self._cancelled:
                await self._fail(message, str(exc))
                return "failed"
        if answered or request_id in self._cancelled:
            self._cancelled.discard(request_id)
            return "answered"
        if answer.status >= 400:
            await self._fail(message, f"it answered HTTP {answer.status}")
            return "failed"
        return None

    def _opened(self, answer: HttpAnswer, data: bytes) -> None:
        """The client's session was opened: keep its id and revision, and listen on it."""
        self.session_id = answer.headers.get(SESSION_HEADER)
        with contextlib.suppress(ValueError, AttributeError, TypeError):
            self.version = json.loads(data)["result"]["protocolVersion"]
        if self.session_id is not None:
            self._listen()

    async def _fail(self, message: dict[str, Any], reason: str, reached: bool = True) -> None:
        """Answer a request the server did not: a tool call with an isError result, else an error."""
        request_id = message.get("id")
        if request_id is None or "method" not in message or request_id in self._cancelled:
            log.info("a message to the phone-agent server was lost: %s", reason)
            return
        name, _ = _name_and_arguments(message)
        if message.get("method") == "tools/call":
            failure = server_gone(name, reason) if reached else server_unreachable(name, reason)
            await self._write(_line({"jsonrpc": "2.0", "id": request_id, "result": failure.to_result()}))
            return
        error = {"code": INTERNAL_ERROR, "message": f"The phone-agent server did not answer ({reason})"}
        await self._write(_line({"jsonrpc": "2.0", "id": request_id, "error": error}))

    async def _file_call(self, message: dict[str, Any]) -> None:
        """A file tool whose ``path`` is a file of this machine: moved in chunks (``client_files``)."""
        params = message["params"]
        name, arguments = _name_and_arguments(message)
        kept: list[bytes] = []

        async def deliver(data: bytes) -> None:
            if is_answer(data):
                kept.append(data)
            else:
                await self._write(data)

        async def wire_call(relayed: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
            meta = {**(params.get("_meta") or {}), **meta}
            sent = {**message, "params": {**params, "arguments": relayed, "_meta": meta}}
            if await self._exchange(sent, _line(sent), deliver) is None or not kept:
                return server_gone(name, "it answered nothing").to_result()
            answer = json.loads(kept[-1])
            if "result" in answer:
                return dict(answer["result"])
            return server_unreachable(name, str((answer.get("error") or {}).get("message"))).to_result()

        wire = await client_files.streamed_call(name, arguments or {}, self.base_url, self.token, wire_call)
        await self._write(_line({"jsonrpc": "2.0", "id": message.get("id"), "result": wire}))

    async def close(self, grace_s: float = 0.0) -> None:
        """The client went: what it asked before is answered within ``grace_s`` (a one-shot client's
        pipe), then the rest is cancelled and the session ends on the server (as an SDK client's does:
        the server cancels the session's calls in the page)."""
        if self._background and grace_s > 0:
            await asyncio.wait(set(self._background), timeout=grace_s)
        for task in [*self._background, *([self._listener] if self._listener else [])]:
            task.cancel()
        if self.link is not None and self.session_id is not None:
            with contextlib.suppress(Exception):
                async with asyncio.timeout(CLOSE_S):
                    answer = await self.link.request("DELETE", MCP_PATH, headers=self._headers({}))
                    async for _ in answer.messages():
                        pass
        if self.link is not None:
            self.link.close()


def _name_and_arguments(message: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
    params = message.get("params")
    if not isinstance(params, dict):
        return "", None
    arguments = params.get("arguments")
    return str(params.get("name") or ""), arguments if isinstance(arguments, dict) else None


def _with_id(data: bytes, request_id: Any) -> bytes:
    """An answer the transport made without the request's id (an HTTP error's body), given it."""
    try:
        message = json.loads(data)
    except ValueError:
        return data
    if isinstance(message, dict):
        message["id"] = request_id
        return _line(message)
    return data


async def stdio_lines() -> tuple[asyncio.StreamReader, Write]:
    """This process's stdin as lines and a writer of lines to its stdout: pipes, as MCP clients give
    (a regular file, as a script may give, is read whole and written without the event loop)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    except ValueError:
        reader.feed_data(await asyncio.to_thread(sys.stdin.buffer.read))
        reader.feed_eof()
    try:
        pipe = sys.stdout.buffer
        transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, pipe)
    except ValueError:

        async def write_file(data: bytes) -> None:
            sys.stdout.buffer.write(data + b"\n")
            sys.stdout.buffer.flush()

        return reader, write_file
    writer = asyncio.StreamWriter(transport, protocol, None, loop)

    async def write(data: bytes) -> None:
        writer.write(data + b"\n")
        await writer.drain()

    return reader, write


async def serve_stdio(
    relay_of: Callable[[Write], JsonRpcRelay], first: Callable[[JsonRpcRelay], Awaitable[None]]
) -> None:
    """Relay stdin's lines until it closes (``first`` connects the relay before the first line)."""
    reader, write = await stdio_lines()
    relay = relay_of(write)
    closed = False
    try:
        await first(relay)
        while line := await reader.readline():
            if line.strip():
                relay.receive(line)
        closed = True
    finally:
        # stdin closed: a moment for the answers still due; a signal: none.
        await relay.close(CLOSE_GRACE_S if closed else 0.0)
