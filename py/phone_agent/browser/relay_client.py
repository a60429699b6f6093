"""McpRelayClient: Channel A in the page. Connects to ``phone-agent mcp``'s relay WebSocket.

Connects on load, retries after every disconnect (30 s by default), runs each ``{id, tool, args}``
frame through the shared McpServiceContext (the same dispatch WebMCP uses), answers ``{id, result}``,
streams progress frames numbered per request, and cancels a call when the server sends
``{id, type: "cancel"}``. Frame parsing and numbering live in the pure ``relay_frames`` module.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import js  # type: ignore[import-not-found]
from pyodide.ffi import create_proxy  # type: ignore[import-not-found]

from .. import errors
from ..context import McpServiceContext
from ..relay_frames import (
    CLOSE_REPLACED,
    BadFrame,
    CallFrame,
    CancelFrame,
    ProgressSequence,
    parse_server_frame,
    result_frame,
)
from ..tools import Channel

StatusCallback = Callable[[bool], None]
ReplacedCallback = Callable[[], None]


class McpRelayClient:
    def __init__(
        self,
        context: McpServiceContext,
        url: str,
        retry_ms: int,
        on_status_change: StatusCallback | None = None,
        on_replaced: ReplacedCallback | None = None,
    ) -> None:
        self.url = url
        self.retry_ms = retry_ms
        self.connected = False
        self._context = context
        self._on_status_change = on_status_change
        self._on_replaced = on_replaced
        self.replaced = False
        self._socket: Any = None
        self._calls: dict[str, asyncio.Task[None]] = {}
        self._progress = ProgressSequence()
        self._runner: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()

    def connect(self) -> None:
        """Start connecting (and reconnecting) in the background."""
        if self._runner is None or self._runner.done():
            self._runner = asyncio.ensure_future(self._run())

    def retry_now(self) -> None:
        """Skip the rest of the wait before the next attempt (the page's Reconnect button)."""
        self._wake.set()

    async def _run(self) -> None:
        while True:
            self._wake.clear()
            self.replaced = await self._connect_once() == CLOSE_REPLACED
            if self.replaced:
                js.console.warn(
                    "[MCP relay] another phone-agent page took over the relay; "
                    "this page waits until you press Reconnect"
                )
                if self._on_replaced is not None:
                    self._on_replaced()
                await self._wake.wait()
                continue
            try:
                await asyncio.wait_for(self._wake.wait(), self.retry_ms / 1000)
            except TimeoutError:
                pass

    async def _connect_once(self) -> int | None:
        """One connection, from opening to closing; answers the close code."""
        closed: asyncio.Future[int | None] = asyncio.get_event_loop().create_future()
        try:
            socket = js.WebSocket.new(self.url)
        except Exception as exc:  # a malformed ?relay= URL throws SyntaxError at once
            js.console.warn(f"[MCP relay] cannot connect to {self.url}: {exc}")
            return None

        def on_open(_event: Any) -> None:
            self._set_connected(True)
            js.console.log(f"[MCP relay] connected to {self.url}")

        def on_message(event: Any) -> None:
            data = event.data
            if isinstance(data, str):
                self._handle_frame(data)

        def on_close(event: Any) -> None:
            if not closed.done():
                closed.set_result(int(event.code))

        handlers = {"open": on_open, "message": on_message, "close": on_close}
        proxies = {name: create_proxy(handler) for name, handler in handlers.items()}
        for name, proxy in proxies.items():
            socket.addEventListener(name, proxy)
        self._socket = socket
        try:
            return await closed
        finally:
            for name, proxy in proxies.items():
                socket.removeEventListener(name, proxy)
                proxy.destroy()
            self._socket = None
            if self.connected:
                js.console.log(f"[MCP relay] disconnected; retrying every {self.retry_ms // 1000 or 1}s")
            self._set_connected(False)

    def _set_connected(self, connected: bool) -> None:
        if connected == self.connected:
            return
        self.connected = connected
        if self._on_status_change is not None:
            self._on_status_change(connected)

    def _handle_frame(self, text: str) -> None:
        frame = parse_server_frame(text)
        if isinstance(frame, CallFrame):
            if frame.id in self._calls:
                return  # a duplicate id: the first call answers it
            # Started eagerly: a call answered from memory (abort_task, get_task_result …) runs to its
            # answer inside this message event, without two more turns of the browser's event loop
            # (each a task of its own, ~0.5 ms here); one that waits is a task like any other.
            task = asyncio.Task(self._serve(frame), loop=asyncio.get_event_loop(), eager_start=True)
            if not task.done():
                self._calls[frame.id] = task
        elif isinstance(frame, CancelFrame):
            call = self._calls.get(frame.id)
            if call is not None:
                call.cancel()
        elif isinstance(frame, BadFrame):
            js.console.warn(f"[MCP relay] ignored a frame: {frame.reason}")
            if frame.id is not None:
                failure = errors.ToolError(
                    errors.ErrorCode.INVALID_ARGUMENT,
                    f"The page could not read the relay frame: {frame.reason}.",
                    remedy="Upgrade phone-agent so that server and page match.",
                )
                self._send(result_frame(frame.id, failure.to_result()))

    async def _serve(self, frame: CallFrame) -> None:
        try:
            result = await self._context.dispatch(
                frame.tool,
                frame.args,
                Channel.RELAY,
                progress=lambda message: self._send(self._progress.frame(frame.id, message)),
            )
        except asyncio.CancelledError:
            return  # the server gave up on this call (cancel or timeout): nobody waits for an answer
        finally:
            self._calls.pop(frame.id, None)
            self._progress.forget(frame.id)
        self._send(result_frame(frame.id, result))

    def _send(self, text: str) -> None:
        """Send if connected; a closed or broken socket loses the frame, never the call."""
        socket = self._socket
        if socket is None or socket.readyState != 1:
            return
        try:
            socket.send(text)
        except Exception:
            pass
