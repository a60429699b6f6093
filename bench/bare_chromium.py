"""Debian's Chromium driven over the DevTools protocol with nothing but ``Runtime`` (benchmarks only).

Playwright enables the ``Network`` domain on every page it drives, so Chromium reports every WebSocket
frame to it, binary payloads base64-encoded: 32 MiB through the ADB bridge cost the renderer, the
browser process and Playwright's node driver about as much CPU as the transfer itself, the same for
every client in the page. ``BareChromium`` opens tabs and evaluates expressions and nothing else, so a
benchmark times the page and the link alone.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

SEND_TIMEOUT_S = 300.0  # one DevTools call (a whole measured round may run inside one evaluate)


class BareChromium:
    """``async with BareChromium(executable, args) as browser: tab = await browser.new_tab(url)``."""

    def __init__(self, executable: str, args: list[str]) -> None:
        self.executable = executable
        self.args = args
        self._profile = Path(tempfile.mkdtemp(prefix="bare-chromium-"))
        self._process: subprocess.Popen[bytes] | None = None
        self._socket: Any = None
        self._ids = itertools.count(1)
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self._reader: asyncio.Task[None] | None = None
        self._events: dict[str, asyncio.Queue[dict[str, Any]]] = {}

    async def __aenter__(self) -> BareChromium:
        import websockets

        self._process = subprocess.Popen(
            [
                self.executable,
                "--headless=new",
                "--remote-debugging-port=0",
                f"--user-data-dir={self._profile}",
                *self.args,
                "about:blank",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            port_file = self._profile / "DevToolsActivePort"
            deadline = time.monotonic() + 30
            while not (port_file.exists() and len(port_file.read_text().split()) >= 2):
                if time.monotonic() > deadline or self._process.poll() is not None:
                    raise RuntimeError("Chromium did not start its DevTools endpoint")
                await asyncio.sleep(0.05)
            port, path = port_file.read_text().split()[:2]
            self._socket = await asyncio.wait_for(
                websockets.connect(f"ws://127.0.0.1:{port}{path}", max_size=None), 30
            )
        except BaseException:
            await self.__aexit__()  # no Chromium or profile left behind
            raise
        self._reader = asyncio.ensure_future(self._read())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._reader is not None:
            self._reader.cancel()
        if self._socket is not None:
            await self._socket.close()
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(timeout=10)
        shutil.rmtree(self._profile, ignore_errors=True)

    async def _read(self) -> None:
        try:
            async for text in self._socket:
                message = json.loads(text)
                if "method" in message and message["method"] in self._events:
                    self._events[message["method"]].put_nowait(message.get("params", {}))
                future = self._waiting.pop(message.get("id", -1), None)
                if future is not None and not future.done():
                    if "error" in message:
                        future.set_exception(RuntimeError(message["error"].get("message", message["error"])))
                    else:
                        future.set_result(message.get("result", {}))
        finally:  # Chromium went away: nobody waits for an answer that cannot come
            for future in self._waiting.values():
                if not future.done():
                    future.set_exception(RuntimeError("Chromium closed its DevTools connection"))
            self._waiting.clear()

    async def send(
        self, method: str, params: dict[str, Any] | None = None, session: str | None = None
    ) -> Any:
        message_id = next(self._ids)
        future = asyncio.get_running_loop().create_future()
        self._waiting[message_id] = future
        message: dict[str, Any] = {"id": message_id, "method": method, "params": params or {}}
        if session is not None:
            message["sessionId"] = session
        await self._socket.send(json.dumps(message))
        return await asyncio.wait_for(future, SEND_TIMEOUT_S)

    def events(self, method: str) -> asyncio.Queue[dict[str, Any]]:
        """The parameters of every ``method`` event from now on (the browser's session), in order."""
        return self._events.setdefault(method, asyncio.Queue())

    async def new_tab(self, url: str, new_window: bool = False) -> Tab:
        """A tab at ``url``; with ``new_window`` in a window of its own, so that several pages are all
        visible at once (a background tab is hidden: a page pauses its live view there)."""
        target = await self.send("Target.createTarget", {"url": url, "newWindow": new_window})
        attached = await self.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True})
        return Tab(self, attached["sessionId"])


class Tab:
    """One page: evaluate JavaScript (a function of one JSON argument, awaited), poll a condition."""

    def __init__(self, browser: BareChromium, session: str) -> None:
        self.browser = browser
        self.session = session

    async def evaluate(self, function: str, arg: Any = None) -> Any:
        expression = f"({function})({json.dumps(arg)})"
        result = await self.browser.send(
            "Runtime.evaluate",
            {"expression": expression, "awaitPromise": True, "returnByValue": True},
            self.session,
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            raise RuntimeError(details.get("exception", {}).get("description") or details.get("text"))
        return result["result"].get("value")

    async def send(self, method: str, params: dict[str, Any] | None = None) -> Any:
        """A DevTools command to this page (e.g. ``HeapProfiler.collectGarbage``)."""
        return await self.browser.send(method, params, self.session)

    async def wait_for(self, condition: str, timeout: float = 60.0) -> None:
        """Poll a JavaScript expression until it is true."""
        deadline = time.monotonic() + timeout
        # While the page loads there may be no document yet: that counts as false.
        probe = f"() => {{ try {{ return Boolean({condition}); }} catch {{ return false; }} }}"
        while not await self.evaluate(probe):
            if time.monotonic() > deadline:
                raise TimeoutError(f"{condition} still false after {timeout:g} s")
            await asyncio.sleep(0.1)
