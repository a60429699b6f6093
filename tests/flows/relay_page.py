"""A page on the relay for the command-line tests: it pairs with a real ``phone-agent serve`` the way the
page does, reads the server's frames with the page's own frame code (``relay/frames.py``) and answers
each call through the page's one dispatch (``ToolDispatcher``) on a real simulated phone, progress
included. Only the browser around the page's Python is missing; the browser tests cover that."""

from __future__ import annotations

import asyncio
import contextlib
import json
import urllib.request
from collections.abc import AsyncIterator

from websockets.asyncio.client import connect

from phone_agent.relay import frames
from phone_agent.tools.dispatch import ToolDispatcher
from phone_agent.tools.spec import Channel
from tests.server.harness import page_cookie


class RelayedPage:
    def __init__(self, ws, dispatcher: ToolDispatcher) -> None:
        self.ws, self.dispatcher = ws, dispatcher
        self.calls: list[str] = []
        self._progress = frames.ProgressSequence()
        self._running: dict[str, asyncio.Task[None]] = {}
        self._sends: set[asyncio.Task[None]] = set()
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for message in self.ws:
            frame = frames.parse_server_frame(message)
            if isinstance(frame, frames.CallFrame):
                self._running[frame.id] = asyncio.create_task(self._answer(frame))
            elif isinstance(frame, frames.CancelFrame) and frame.id in self._running:
                self._running.pop(frame.id).cancel()

    async def _answer(self, frame: frames.CallFrame) -> None:
        self.calls.append(frame.tool)

        def progress(message: str) -> None:
            send = asyncio.ensure_future(self.ws.send(self._progress.frame(frame.id, message)))
            self._sends.add(send)
            send.add_done_callback(self._sends.discard)

        result = await self.dispatcher.dispatch(frame.tool, frame.args, Channel.RELAY, progress=progress)
        self._progress.forget(frame.id)
        self._running.pop(frame.id, None)
        await self.ws.send(frames.ResultFrame(frame.id, result).to_wire())

    async def close(self) -> None:
        for task in self._running.values():
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.ws.close(), 5)
        self._reader.cancel()
        with contextlib.suppress(BaseException):
            await self._reader


@contextlib.asynccontextmanager
async def relayed_page(port: int, dispatcher: ToolDispatcher) -> AsyncIterator[RelayedPage]:
    origin = f"http://127.0.0.1:{port}"

    def secret() -> str:  # as the user's browser reads it: with the cookie the page's link gave it
        request = urllib.request.Request(f"{origin}/api/config", headers={"Cookie": page_cookie(port)})
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read())["pairing"]

    ws = await connect(f"ws://127.0.0.1:{port}/relay", origin=origin, open_timeout=10, max_size=None)
    await ws.send(frames.HelloFrame(await asyncio.to_thread(secret)).to_wire())
    assert isinstance(frames.parse_server_frame(await asyncio.wait_for(ws.recv(), 10)), frames.PairedFrame)
    page = RelayedPage(ws, dispatcher)
    try:
        yield page
    finally:
        await page.close()
