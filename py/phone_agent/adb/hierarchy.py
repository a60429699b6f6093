"""The persistent hierarchy server (u2.jar) over any ADB ``ServiceOpener``: our own client of it.

``HierarchyServer.dump()`` answers the screen's XML (the same format ``uiautomator dump`` writes) in
one HTTP round trip over an ADB ``tcp:9008`` stream instead of a fresh ``uiautomator`` process per
look (1–3 s on a real phone). The first call puts the jar on the phone (skipped when its md5 already
matches, as uiautomator2 does), starts it (``CLASSPATH=… app_process / com.wetest.uia2.Main -p 9008``
on a shell stream held open: closing it ends the server) and waits for ``GET /ping`` to say ``pong``.
A call that fails — the server gone (killed, or died mid-call), its UiAutomation lost, the jar
missing — restarts it once; if that fails too, ``HierarchyUnavailable`` says why (another
UiAutomation user's "already registered" included) and the caller falls back to ``uiautomator dump``.
No host ``adb forward``: the stream is opened by our own ADB client (WebUSB, the bridge, an adb
server's transport). Pure asyncio: runs in CPython and in Pyodide.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import Awaitable, Callable
from typing import Protocol

from phone_agent.adb.client import AdbError, AdbOutputTooLarge, ServiceOpener, ServiceStream
from phone_agent.adb.hierarchy_protocol import (
    ALREADY_REGISTERED,
    JAR_MD5,
    JAR_PATH,
    JAR_SHA256,
    MAX_DEPTH,
    SERVER_PORT,
    HttpProtocolError,
    HttpResponseParser,
    RpcError,
    http_request,
    jsonrpc_request,
    jsonrpc_result,
    start_command,
)
from phone_agent.adb.services import SyncClient, shell
from phone_agent.adb.shell_protocol import ShellId, ShellPacketDecoder, ShellProtocolError
from phone_agent.adb.sync_protocol import SyncError


class JarStream(Protocol):
    """The jar as it arrives (the page's fetch): ``size`` bytes in all, ``read`` the next chunk, None
    at the end. Pushed as it comes, so no copy of the whole jar is ever held."""

    size: int

    async def read(self) -> bytes | None: ...


JarSource = bytes | Callable[[], Awaitable[bytes | JarStream]]
NOT_OUR_JAR = "the page's u2.jar is not uiautomator2 3.7.1's (run scripts/setup)"
START_TIMEOUT = 15.0  # a real phone's server answers its first ping in 1–3 s
PING_INTERVAL = 0.05
CALL_TIMEOUT = 20.0
OUTPUT_KEPT = 64 * 1024  # of the server's own output (its errors come first): a phone may print forever
RETRY_AFTER_S = 60.0  # after falling back, the next look tries the server again only this much later


class HierarchyUnavailable(Exception):
    """The hierarchy server could not answer (after one restart); the message says why."""


class _ServerGone(Exception):
    """The call failed in a way a restart may cure (the server gone, cut off, or lost its UiAutomation)."""


class HierarchyServer:
    """u2.jar on one phone. ``dump()``/``wait_idle()`` start it on first use and restart it once."""

    def __init__(
        self,
        opener: ServiceOpener,
        jar: JarSource,
        *,
        port: int = SERVER_PORT,
        monotonic: Callable[[], float] | None = None,
    ) -> None:
        self.opener = opener
        self.port = port
        self._jar = jar
        self._monotonic = monotonic or (lambda: asyncio.get_running_loop().time())
        self._lock = asyncio.Lock()
        self._process: ServiceStream | None = None
        self._process_task: asyncio.Task[None] | None = None
        self._output = bytearray()  # what the server printed (its first OUTPUT_KEPT bytes)
        self._exit: int | None = None
        self._stream: ServiceStream | None = None
        self._up = False  # the latest exchange with the server worked
        self._ids = 0
        self.pushed = False
        self.starts = 0
        self.restart_reason: str | None = None  # why the latest call restarted the server
        self.failure: str | None = None  # why the server is not used now (fell back)
        self._failed_at = 0.0

    @property
    def running(self) -> bool:
        """Our own server process runs (its shell stream is open)."""
        return self._process_task is not None and not self._process_task.done()

    @property
    def up(self) -> bool:
        """The latest exchange with the server worked (it is running now, as far as we know)."""
        return self._up

    def usable(self) -> bool:
        """False for a while after the server failed twice (looks then go to ``uiautomator dump``)."""
        return self.failure is None or self._monotonic() - self._failed_at >= RETRY_AFTER_S
        # (``_failed_at`` is infinite for a phone that cannot run it: never again)

    # ----- what callers use

    async def dump(self, timeout: float = CALL_TIMEOUT) -> str:
        """The window hierarchy as ``uiautomator dump`` XML."""
        result = await self.call("dumpWindowHierarchy", [False, MAX_DEPTH], timeout)
        if not isinstance(result, str) or "<hierarchy" not in result:
            raise HierarchyUnavailable(f"the hierarchy server answered no hierarchy: {str(result)[:120]!r}")
        return result

    async def wait_idle(self, timeout_ms: int) -> bool:
        """True once the screen is idle (no accessibility events for a moment), False at the limit."""
        return bool(await self.call("waitForIdle", [int(timeout_ms)], timeout_ms / 1000 + CALL_TIMEOUT))

    async def call(self, method: str, params: list[object], timeout: float = CALL_TIMEOUT) -> object:
        """One JSON-RPC call; the server started (or restarted once) as needed."""
        async with self._lock:
            self.restart_reason = None
            try:
                if not self._up:
                    await self._start()
                return await self._call(method, params, timeout)
            except (_ServerGone, HierarchyUnavailable) as first:
                self.restart_reason = str(first)
            try:
                await self._stop()
                await self._start()
                result = await self._call(method, params, timeout)
            except (_ServerGone, HierarchyUnavailable) as second:
                self.failure = f"{second} (after a restart; first: {self.restart_reason})"
                # a phone with no app_process never runs it: no later attempt; else one after a while
                never = "inaccessible or not found" in self.failure
                self._failed_at = float("inf") if never else self._monotonic()
                await self._stop()
                raise HierarchyUnavailable(self.failure) from None
            self.failure = None
            return result

    async def close(self) -> None:
        async with self._lock:
            await self._stop()

    # ----- the HTTP exchange

    async def _call(self, method: str, params: list[object], timeout: float) -> object:
        self._ids += 1
        body = await self._exchange(jsonrpc_request(method, params, self._ids, port=self.port), timeout)
        try:
            return jsonrpc_result(body)
        except RpcError as exc:
            if exc.not_connected:
                self._up = False
                raise _ServerGone(f"the hierarchy server lost its UiAutomation: {exc.message}") from None
            raise HierarchyUnavailable(f"the hierarchy server refused {method}: {exc}") from None
        except HttpProtocolError as exc:
            raise _ServerGone(str(exc)) from None

    async def _exchange(self, request: bytes, timeout: float) -> bytes:
        """Send one request on the kept-alive stream (a new one if the server closed it); its body."""
        for attempt in (1, 2):
            fresh = self._stream is None
            try:
                if self._stream is None:
                    self._stream = await self.opener.open_stream(f"tcp:{self.port}", timeout=5.0)
                stream = self._stream
                await stream.write(request)
                parser = HttpResponseParser()
                async with asyncio.timeout(timeout):
                    response = None
                    while response is None:
                        chunk = await stream.read()
                        response = parser.feed(chunk) if chunk else parser.close()
                if not response.keep_alive:
                    await self._drop_stream()
                if response.status != 200:
                    raise _ServerGone(
                        f"the hierarchy server answered HTTP {response.status} {response.reason}"
                    )
                return response.body
            except (asyncio.CancelledError, AdbOutputTooLarge):
                # The rest of that answer would meet the next request: a fresh stream next time. (Too
                # large is not a server gone: restarting it would only ask for the same again.)
                await self._drop_stream()
                raise
            except TimeoutError:
                self._up = False
                await self._drop_stream()
                raise _ServerGone(f"the hierarchy server did not answer within {timeout:g} s") from None
            except (AdbError, HttpProtocolError, ConnectionError) as exc:
                self._up = False
                await self._drop_stream()
                if fresh or attempt == 2:  # a kept-alive stream the server closed: once more, fresh
                    raise _ServerGone(self._why(f"could not reach the hierarchy server: {exc}")) from None
        raise AssertionError("unreachable")

    async def _drop_stream(self) -> None:
        stream, self._stream = self._stream, None
        if stream is not None:
            with contextlib.suppress(AdbError, ConnectionError):
                await stream.close()

    # ----- the process

    async def _start(self) -> None:
        """Use the server that answers on the port, else put the jar on the phone and start one."""
        if await self._ping():
            return
        await self._stop()  # a start of ours that was cut short (cancelled) must not hold UiAutomation
        await self._ensure_jar()
        self._output.clear()
        self._exit = None
        v2 = "shell_v2" in self.opener.features
        command = start_command(self.port)
        try:
            self._process = await self.opener.open_stream(
                f"shell,v2,raw:{command}" if v2 else f"shell:{command}"
            )
        except AdbError as exc:
            raise HierarchyUnavailable(f"could not start the hierarchy server: {exc}") from None
        self._process_task = asyncio.ensure_future(self._collect(self._process, v2))
        self.starts += 1
        deadline = self._monotonic() + START_TIMEOUT
        while True:
            said = bytes(self._output).decode("utf-8", "replace")
            if ALREADY_REGISTERED in said:
                raise HierarchyUnavailable(
                    "another UiAutomation user holds the phone (the hierarchy server said "
                    f'"{_line_with(said, ALREADY_REGISTERED)}")'
                )
            if not self.running:
                raise HierarchyUnavailable(self._why("the hierarchy server exited as it started"))
            if await self._ping():
                return
            if self._monotonic() >= deadline:
                raise HierarchyUnavailable(
                    self._why(f"the hierarchy server did not answer /ping within {START_TIMEOUT:g} s")
                )
            await asyncio.sleep(PING_INTERVAL)  # a poll while the server comes up, not a settle wait

    async def _ping(self) -> bool:
        try:
            body = await self._exchange(http_request("GET", "/ping", port=self.port), 5.0)
        except _ServerGone:
            return False
        self._up = body.strip() == b"pong"
        return self._up

    async def _ensure_jar(self) -> None:
        """Push the jar unless the phone has exactly this file (its md5, as uiautomator2 checks)."""
        try:
            result = await shell(self.opener, f"md5sum {JAR_PATH}", timeout=10.0)
            if result.exit_code == 0 and result.stdout.split()[:1] == [JAR_MD5.encode()]:
                return
            jar = self._jar if isinstance(self._jar, bytes) else await self._jar()
            if isinstance(jar, bytes):
                if hashlib.sha256(jar).hexdigest() != JAR_SHA256:
                    raise HierarchyUnavailable(NOT_OUR_JAR)
                async with await SyncClient.open(self.opener, timeout=30.0) as sync:
                    await sync.push(jar, JAR_PATH, 0o644)
            else:
                await self._push_stream(jar)
        except (AdbError, SyncError, OSError, TimeoutError) as exc:
            raise HierarchyUnavailable(f"could not put u2.jar on the phone: {exc}") from None
        self.pushed = True

    async def _push_stream(self, jar: JarStream) -> None:
        """Push the jar chunk by chunk as it arrives, hashing it on the way; a jar that turns out not
        to be ours is removed from the phone again."""
        digest = hashlib.sha256()

        async def read() -> bytes | None:
            chunk = await jar.read()
            if chunk is not None:
                digest.update(chunk)
            return chunk

        async with await SyncClient.open(self.opener, timeout=30.0) as sync:
            await sync.push_stream(read, jar.size, JAR_PATH, 0o644)
        if digest.hexdigest() != JAR_SHA256:
            await shell(self.opener, f"rm -f {JAR_PATH}", timeout=10.0)
            raise HierarchyUnavailable(NOT_OUR_JAR)

    async def _collect(self, stream: ServiceStream, v2: bool) -> None:
        decoder = ShellPacketDecoder()
        with contextlib.suppress(AdbError, ShellProtocolError, ConnectionError):
            while chunk := await stream.read(None):
                if not v2:
                    self._keep(chunk)
                    continue
                for packet in decoder.receive_data(chunk):
                    if packet.id in (ShellId.STDOUT, ShellId.STDERR):
                        self._keep(packet.data)
                    elif packet.id == ShellId.EXIT:
                        self._exit = packet.data[0] if packet.data else 0
                        return

    def _keep(self, data: bytes) -> None:
        room = OUTPUT_KEPT - len(self._output)
        if room > 0:
            self._output += data[:room]

    def _why(self, reason: str) -> str:
        """``reason``, with what the server printed when it has ended."""
        if self.running or not self._output.strip():
            return reason
        said = bytes(self._output).decode("utf-8", "replace").strip().splitlines()
        errors = [line for line in said if "rror" in line or "xception" in line or "not found" in line]
        status = f", status {self._exit}" if self._exit is not None else ""
        return f"{reason} (it exited{status}: {(errors or said)[0][:200]})"

    async def _stop(self) -> None:
        self._up = False
        await self._drop_stream()
        process, self._process = self._process, None
        task, self._process_task = self._process_task, None
        if process is not None:
            with contextlib.suppress(AdbError, ConnectionError):
                await process.close()
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task


def _line_with(text: str, mark: str) -> str:
    for line in text.splitlines():
        if mark in line:
            return line.strip()[:200]
    return mark
