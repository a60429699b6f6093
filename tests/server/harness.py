"""Helpers for the server tests: a scripted page (WebSocket peer that pairs as the page does), an MCP
client driving a real ``phone-agent mcp`` front (and the background server it starts) through the SDK's
stdio client, an MCP client on ``/mcp`` over streamable HTTP, a ``phone-agent serve`` subprocess, and a
page root of throwaway files.

Every wait is bounded: a hung server fails a test instead of hanging the suite. The config and state
directories are the test session's own (``PHONE_AGENT_HOME``, set in ``tests/conftest.py``), and every
helper that starts a background server stops it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx2
import mcp.types as types
from mcp.client.client import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from websockets.asyncio.client import ClientConnection, connect

from tests.support import free_port as free_port  # the server tests take it from here too
from tests.support import stop_process

PHONE_AGENT = str(Path(sys.executable).with_name("phone-agent"))
WAIT_S = 10.0

# Files the page root holds in these tests; the real index.html and static/vendor may not exist yet.
PAGE_FILES = {
    "index.html": b"<!doctype html><title>phone-agent test page</title>",
    "pyscript.toml": b'name = "phone-agent"\n',
    "py/main.py": b"print('hello from the page')\n",
    "py/phone_agent/__pycache__/x.cpython-311.pyc": b"\x00compiled",
    "static/app.css": b"body { margin: 0 }\n",
    "static/app.js": b"export const x = 1;\n",
    "static/icon.svg": b"<svg xmlns='http://www.w3.org/2000/svg'/>",
    "static/icon.png": b"\x89PNG\r\n\x1a\n",
    "static/vendor/pyodide/pyodide.asm.wasm": b"\x00asm\x01\x00\x00\x00" + b"\x00" * 1000,
    "static/vendor/pyodide/pyodide.mjs": b"export default 1;\n",
    "static/vendor/pyodide/pyodide-lock.json": b"{}",
    "static/vendor/pyodide/python_stdlib.zip": b"PK\x05\x06" + b"\x00" * 18,
    "static/.hidden": b"secret",
    ".env": b"SECRET=1",
    "README.md": b"not served",
}


def port_is_free(port: int) -> bool:
    """Whether nothing listens on 127.0.0.1:``port`` (a bind there succeeds)."""
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


def origin_of(port: int, host: str = "127.0.0.1") -> str:
    return f"http://{host}:{port}"


def sample_of(schema: dict[str, Any]) -> Any:
    """A minimal instance of a JSON schema of the catalog's kind (objects, enums, scalars, nullables)."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = "null" if "null" in kind else kind[0]
    if kind == "object":
        properties = schema.get("properties", {})
        return {name: sample_of(properties.get(name, {})) for name in schema.get("required", [])}
    return {"null": None, "string": "x", "integer": 0, "number": 0, "boolean": False, "array": []}[kind]


def with_structured_content(tool: Any, result: dict[str, Any]) -> dict[str, Any]:
    from phone_agent.tools.catalog import TOOLS_BY_NAME

    spec = TOOLS_BY_NAME.get(tool) if isinstance(tool, str) else None
    if spec is None or not spec.output_schema or result.get("isError") or "structuredContent" in result:
        return result
    return {**result, "structuredContent": sample_of(spec.output_schema)}


def page_token() -> str:
    """The token of the page's link of this test session's servers (made on first use)."""
    from phone_agent.server.credentials import load_page_token

    return load_page_token()


def page_cookie(port: int, link_token: str | None = None) -> str:
    """The page cookie (``name=value``) as the user's browser gets it: by trading the page link's token
    (this session's, unless given) on ``/api/page-key``."""

    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/api/page-key",
        data=json.dumps({"token": link_token or page_token()}).encode(),
        headers={"Origin": origin_of(port), "Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=WAIT_S) as response:
        return response.headers["Set-Cookie"].split(";", 1)[0]


def api_config(port: int, browser: bool = True) -> dict[str, Any]:
    """``/api/config`` as the user's browser reads it (with the page cookie), or, without ``browser``,
    as any other process does."""
    headers = {"Cookie": page_cookie(port)} if browser else {}
    request = urllib.request.Request(f"http://127.0.0.1:{port}/api/config", headers=headers)
    with urllib.request.urlopen(request, timeout=WAIT_S) as response:
        return json.loads(response.read())


def token() -> str:
    """The bearer token of this test session's servers (made on first use, like a server does)."""
    done = subprocess.run([PHONE_AGENT, "token"], capture_output=True, timeout=30, check=True)
    return done.stdout.decode().strip()


def _bearer_http(bearer: str | None) -> httpx2.AsyncClient:
    headers = {"Authorization": f"Bearer {bearer}"} if bearer else {}
    return httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30.0, read=None))


@contextlib.asynccontextmanager
async def http_session(
    port: int, bearer: str | None, *, elicitation_callback: Any = None
) -> AsyncIterator[ClientSession]:
    """The SDK's streamable HTTP client on ``/mcp``, with ``Authorization: Bearer`` when given (and
    answering the server's elicitations with ``elicitation_callback``)."""
    async with (
        _bearer_http(bearer) as http,
        streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http) as (read, write),
        ClientSession(read, write, elicitation_callback=elicitation_callback) as session,
    ):
        with anyio.fail_after(30):
            await session.initialize()
        yield session


@contextlib.asynccontextmanager
async def modern_client(port: int, *, elicitation_callback: Any = None) -> AsyncIterator[Client]:
    """The SDK's ``Client`` on ``/mcp`` with the session's token, speaking MCP 2026-07-28 (input
    requests answered by ``elicitation_callback``)."""
    url = f"http://127.0.0.1:{port}/mcp"
    async with _bearer_http(await asyncio.to_thread(token)) as http:
        transport = streamable_http_client(url, http_client=http)
        async with Client(transport, mode="auto", elicitation_callback=elicitation_callback) as client:
            assert client.protocol_version == "2026-07-28"
            yield client


def stop_server(port: int) -> None:
    """``phone-agent stop --port PORT``: the background server (if any) is gone when this returns."""
    subprocess.run([PHONE_AGENT, "stop", "--port", str(port)], capture_output=True, timeout=30)


# -- the scripted page ----------------------------------------------------------------------------


class Peer:
    """A WebSocket client standing in for the page: it reads the server's frames and answers them."""

    def __init__(self, ws: ClientConnection) -> None:
        self.ws = ws
        self.frames: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def connect(
        cls, port: int, path: str = "/relay", origin: str | None = None, hello: str | None = "config"
    ) -> Peer:
        """A connected page. It pairs as the real page does (``hello="config"``: the secret from
        ``/api/config``), with the given first frame, or not at all (``hello=None``)."""
        ws = await asyncio.wait_for(
            connect(f"ws://127.0.0.1:{port}{path}", origin=origin or origin_of(port), open_timeout=WAIT_S),
            WAIT_S,
        )
        if hello == "config":
            secret = (await asyncio.to_thread(api_config, port))["pairing"]
            await ws.send(json.dumps({"type": "hello", "secret": secret}))
            paired = json.loads(await asyncio.wait_for(ws.recv(), WAIT_S))
            assert paired == {"type": "paired"}, paired
        elif hello is not None:
            await ws.send(hello)
        return cls(ws)

    async def _read(self) -> None:
        with contextlib.suppress(Exception):
            async for message in self.ws:
                self.frames.put_nowait(json.loads(message))

    async def next_frame(self, timeout: float = WAIT_S) -> dict[str, Any]:
        return await asyncio.wait_for(self.frames.get(), timeout)

    async def next_request(self, tool: str, timeout: float = WAIT_S) -> dict[str, Any]:
        frame = await self.next_frame(timeout)
        assert frame.get("tool") == tool, f"expected a {tool} request, got {frame}"
        return frame

    async def send(self, frame: Any) -> None:
        await self.ws.send(frame if isinstance(frame, str) else json.dumps(frame))

    async def answer(self, request: dict[str, Any], result: dict[str, Any]) -> None:
        """Answer a call. Like the real page, a success of a tool with an output schema carries
        structured content: a minimal valid one is added when the test gives none."""
        await self.send({"id": request["id"], "result": with_structured_content(request.get("tool"), result)})

    async def progress(self, request: dict[str, Any], seq: int, message: str) -> None:
        await self.send({"id": request["id"], "type": "progress", "seq": seq, "message": message})

    async def wait_closed(self, timeout: float = WAIT_S) -> int | None:
        """The close code the server sent."""
        await asyncio.wait_for(self._reader, timeout)
        return self.ws.close_code

    async def close(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.ws.close(), WAIT_S)
        self._reader.cancel()
        with contextlib.suppress(BaseException):
            await self._reader


@contextlib.asynccontextmanager
async def page_peer(port: int, path: str = "/relay") -> AsyncIterator[Peer]:
    peer = await Peer.connect(port, path)
    try:
        yield peer
    finally:
        await peer.close()


# -- an MCP client on a real phone-agent mcp --------------------------------------------------------


@dataclass
class McpHarness:
    """``phone-agent mcp`` run by the SDK's stdio client, with a ClientSession on it.

    The client lives in a task of its own (anyio cancel scopes must be entered and left by one task),
    and records every notification the server sends.
    """

    port: int
    args: list[str]
    stderr_path: Path
    session: ClientSession | None = None
    notifications: list[types.ServerNotification] = field(default_factory=list)
    _ready: asyncio.Event = field(default_factory=asyncio.Event)
    _stop: asyncio.Event = field(default_factory=asyncio.Event)
    _task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        self._task = asyncio.create_task(self._run())
        ready = asyncio.create_task(self._ready.wait())
        done, _ = await asyncio.wait({ready, self._task}, timeout=30, return_when=asyncio.FIRST_COMPLETED)
        if self._task in done:
            ready.cancel()
            self._task.result()
        if ready not in done:
            ready.cancel()
            raise TimeoutError(f"phone-agent mcp did not start; stderr:\n{self.stderr()}")

    async def _run(self) -> None:
        params = StdioServerParameters(
            command=PHONE_AGENT,
            args=["mcp", "--port", str(self.port), *self.args],
            env=dict(os.environ),  # the session's PHONE_AGENT_HOME (the SDK passes only a few variables)
        )
        with self.stderr_path.open("w") as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                ClientSession(read, write, message_handler=self._on_message) as session,
            ):
                await session.initialize()
                self.session = session
                self._ready.set()
                await self._stop.wait()

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.LoggingMessageNotification | types.ProgressNotification):
            self.notifications.append(message)

    def log_messages(self) -> list[types.LoggingMessageNotificationParams]:
        return [n.params for n in self.notifications if isinstance(n, types.LoggingMessageNotification)]

    def progress_notifications(self) -> list[types.ProgressNotificationParams]:
        return [n.params for n in self.notifications if isinstance(n, types.ProgressNotification)]

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace") if self.stderr_path.exists() else ""

    async def stop(self, server_too: bool = True) -> None:
        self._stop.set()
        if self._task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._task, 15)
        if server_too:
            await asyncio.to_thread(stop_server, self.port)

    async def call(
        self, tool: str, args: dict[str, Any] | None = None, **kwargs: Any
    ) -> types.CallToolResult:
        assert self.session is not None
        with anyio.fail_after(30):
            return await self.session.call_tool(tool, args, **kwargs)

    async def wait_no_page(self) -> None:
        """Until the server has let go of every page (a closed peer is noticed asynchronously): its
        ``/api/server`` says ``pagePaired: false``."""
        from phone_agent.server.background import probe
        from phone_agent.server.credentials import load_token

        deadline = time.monotonic() + WAIT_S
        while time.monotonic() < deadline:
            found = await asyncio.to_thread(probe, "127.0.0.1", self.port, load_token())
            if found.identity.get("pagePaired") is False:
                return
            await asyncio.sleep(0.05)
        raise AssertionError("the server still thinks a page is connected")


@contextlib.asynccontextmanager
async def started_front(port: int, log: Path, *args: str) -> AsyncIterator[McpHarness]:
    """``phone-agent mcp --port PORT ARGS`` with its session (its stderr in ``log``); at the end it is
    stopped, and the shared server it started or found with it."""
    client = McpHarness(port=port, args=list(args), stderr_path=log)
    try:
        await client.start()
        yield client
    finally:
        await client.stop()


# Overrides for the shared server: a short limit for abort_task (the timeout test); no self-check, so
# every frame a peer sees comes from the test that connected it; no wait for a page, so "no page" is
# answered at once.
SHARED_MCP_ARGS = ["--self-check-delay", "0", "--tool-timeout", "abort_task=1500", "--page-wait-ms", "0"]


# -- a phone-agent serve process ------------------------------------------------------------------


@dataclass
class ServeProcess:
    process: subprocess.Popen[bytes]
    port: int
    stderr_path: Path

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def wait_stderr(self, text: str, timeout: float = WAIT_S) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in (log := self.stderr()):
                return log
            time.sleep(0.05)
        raise AssertionError(f"{text!r} not in stderr:\n{self.stderr()}")


def wait_listening(port: int, process: subprocess.Popen[bytes], timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"phone-agent exited with {process.returncode}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return
        time.sleep(0.05)
    raise AssertionError(f"nothing listens on {port}")


def phone_agent_process(
    *args: str, log: Path, stdin: int = subprocess.DEVNULL, stdout: int = subprocess.DEVNULL, env: Any = None
) -> subprocess.Popen[bytes]:
    """``phone-agent ARGS`` as a subprocess, its stderr written to ``log``."""
    with log.open("wb") as sink:
        return subprocess.Popen([PHONE_AGENT, *args], stdin=stdin, stdout=stdout, stderr=sink, env=env)


@contextlib.contextmanager
def serve_process(
    args: list[str], stderr_path: Path, env: dict[str, str] | None = None
) -> Iterator[ServeProcess]:
    """``phone-agent serve`` with ``args``; the port comes from ``--port`` or ``PHONE_AGENT_WS_PORT``."""
    environment = {**os.environ, **(env or {})}
    port = (
        int(args[args.index("--port") + 1]) if "--port" in args else int(environment["PHONE_AGENT_WS_PORT"])
    )
    process = phone_agent_process("serve", *args, log=stderr_path, stdout=subprocess.PIPE, env=environment)
    try:
        wait_listening(port, process)
        yield ServeProcess(process, port, stderr_path)
    finally:
        stop_process(process)
        if process.stdout is not None:
            process.stdout.close()
