"""The simulated phone's hierarchy server: what u2.jar does when ``app_process`` starts it with
``CLASSPATH=/data/local/tmp/u2.jar app_process / com.wetest.uia2.Main -p PORT``.

It listens on the phone's TCP ``PORT`` (an ADB ``tcp:PORT`` stream reaches it, as does ``adb forward
tcp:N tcp:PORT``), answers ``GET /ping`` with ``pong`` and JSON-RPC at ``POST /jsonrpc/0``
(``dumpWindowHierarchy`` gives the very XML ``uiautomator dump`` writes, ``waitForIdle``,
``deviceInfo``; another method: JSON-RPC's "Method not found"), keep-alive, until its shell stream
closes or ``kill`` ends it. As on Android: the jar must be on the CLASSPATH (else the class is not
found), and only one UiAutomation user at a time (a second server prints "already registered" and
exits). Protocol details are shared with the client (``adb/hierarchy_protocol.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import json
import time
from collections.abc import Callable
from typing import Any

from phone_agent.adb.hierarchy_protocol import (
    JAR_SHA256,
    JSONRPC_PATH,
    SERVER_CLASS,
    SERVER_PORT,
    HttpProtocolError,
    HttpRequest,
    HttpRequestParser,
    http_response,
)
from phone_agent.adb.shell_protocol import ShellId, encode_shell_packet
from phone_agent.sim.connection import AdbdStream, AdbdStreamClosedError, ServiceHandler
from phone_agent.sim.hostile import endless_http_body
from phone_agent.sim.scrcpy_server.command_line import AppProcessCommand, parse_app_process

_pids = itertools.count(6100)
STARTED = b"[server] INFO: [UiAutomator2Server] Starting Server\n"
ALREADY = (
    b"java.lang.IllegalStateException: UiAutomationService "
    b"android.accessibilityservice.IAccessibilityServiceClient$Stub$Proxy@5deffd5already registered!\n"
    b"\tat android.app.UiAutomation.connect(UiAutomation.java:323)\n"
    b"\tat com.wetest.uia2.Main.main(Main.java:53)\n"
)


class HierarchyProcess:
    """One running server: its port, its connections, its life."""

    def __init__(self, owner: SimHierarchy, port: int) -> None:
        self.owner = owner
        self.port = port
        self.pid = next(_pids)
        self.ended = asyncio.Event()
        self.requests = 0
        self._streams: list[AdbdStream] = []

    async def serve_connection(self, stream: AdbdStream) -> None:
        """One TCP connection: requests in order, each answered, until either side closes."""
        self._streams.append(stream)
        parser = HttpRequestParser()
        try:
            while not self.ended.is_set():
                data = await stream.read()
                if not data:
                    break
                for request in parser.feed(data):
                    self.requests += 1
                    if self._hostile_dump(request):
                        await endless_http_body(stream)
                        return
                    if request.method == "GET" and request.path == "/ping":
                        answer = http_response(200, b"pong", "text/plain")
                    elif request.path == JSONRPC_PATH and request.method == "POST":
                        answer = http_response(200, await self._jsonrpc(request.body))
                    else:
                        answer = http_response(404, b"Not Found", "text/plain")
                    if self.ended.is_set():  # killed while it worked: the caller sees the cut
                        return
                    await stream.write(answer)
        except (AdbdStreamClosedError, HttpProtocolError):
            pass
        finally:
            if not stream.closed:
                stream.connection.close_stream(stream)

    def _hostile_dump(self, request: HttpRequest) -> bool:
        """A dump asked of a phone told to answer it without end (sim/hostile.py's huge-hierarchy)."""
        if "huge-hierarchy" not in getattr(self.owner.adbd, "hostile", ()):
            return False
        return request.path == JSONRPC_PATH and b"dumpWindowHierarchy" in request.body

    async def _jsonrpc(self, body: bytes) -> bytes:
        try:
            call = json.loads(body.decode("utf-8"))
            method, params, call_id = call["method"], call.get("params") or [], call.get("id")
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            return _rpc_error(None, -32700, "Parse error")
        handler = self.owner.methods.get(method)
        if handler is None:
            return _rpc_error(call_id, -32601, "Method not found")
        try:
            result = await handler(params if isinstance(params, list) else [params])
        except (TypeError, ValueError, IndexError) as exc:
            return _rpc_error(call_id, -32602, f"Invalid params: {exc}")
        return json.dumps({"jsonrpc": "2.0", "id": call_id, "result": result}).encode()

    def stop(self) -> None:
        if self.ended.is_set():
            return
        self.ended.set()
        phone = self.owner.adbd.phone
        getattr(phone, "processes", {}).pop(self.pid, None)
        getattr(phone, "process_stoppers", {}).pop(self.pid, None)
        for stream in self._streams:
            if not stream.closed:
                stream.connection.close_stream(stream)


def _rpc_error(call_id: Any, code: int, message: str) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": call_id, "error": {"code": code, "message": message}}).encode()


class SimHierarchy:
    """The hierarchy side of one simulated phone: starts servers, routes ``tcp:`` opens to them."""

    def __init__(self, adbd: Any, *, enabled: bool = True) -> None:
        self.adbd = adbd
        self.enabled = enabled
        self.processes: dict[int, HierarchyProcess] = {}
        self.dumps = 0
        self.methods: dict[str, Callable[[list[Any]], Any]] = {
            "dumpWindowHierarchy": self._dump,
            "waitForIdle": self._wait_idle,
            "deviceInfo": self._device_info,
        }

    def running(self) -> list[HierarchyProcess]:
        return [p for p in self.processes.values() if not p.ended.is_set()]

    # ----- the JSON-RPC methods

    async def _dump(self, params: list[Any]) -> str:
        from phone_agent.sim.android.commands.capture import screen_dump

        phone = self.adbd.phone
        self.dumps += 1
        await asyncio.sleep(self._cost("hierarchy_dump"))  # --realistic: a real phone's dump time
        injected = getattr(phone, "hierarchy_dump_seconds", None)
        if callable(injected):  # a test's slow dump (to kill the server mid-call)
            await asyncio.sleep(injected())
        return await self.adbd.run_blocking(lambda: screen_dump(phone))

    async def _wait_idle(self, params: list[Any]) -> bool:
        """UiDevice.waitForIdle: idle once no screen change for the quiet time (the default phone is
        always idle; the realistic one after its animations end)."""
        from phone_agent.sim.realistic import HIERARCHY_IDLE_QUIET_S

        timeout_s = (int(params[0]) if params else 10_000) / 1000
        motion = getattr(self.adbd.phone, "motion", None)
        if motion is None:
            return True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while True:
            idle_at = motion.busy_until + HIERARCHY_IDLE_QUIET_S
            wait = idle_at - time.monotonic()
            if motion.busy_until <= 0 or wait <= 0:
                return True
            if loop.time() + wait > deadline:
                await asyncio.sleep(max(0.0, deadline - loop.time()))
                return False
            await asyncio.sleep(wait)  # a new animation may have begun meanwhile: look again

    def _cost(self, name: str) -> float:
        motion = getattr(self.adbd.phone, "motion", None)
        return motion.profile.draw(name) if motion is not None else 0.0

    async def _device_info(self, params: list[Any]) -> dict[str, Any]:
        from phone_agent.sim.android.props import SCREEN_HEIGHT, SCREEN_WIDTH

        props = self.adbd.phone.props
        return {
            "currentPackageName": "",
            "displayWidth": SCREEN_WIDTH,
            "displayHeight": SCREEN_HEIGHT,
            "displayRotation": 0,
            "productName": props.get("ro.product.name", ""),
            "sdkInt": int(props.get("ro.build.version.sdk", "34") or 34),
            "naturalOrientation": True,
        }

    # ----- hooks for services.find_service

    def shell_handler(self, command: str, *, v2: bool) -> ServiceHandler | None:
        """A handler for ``app_process`` starting u2.jar's class; None for any other command."""
        parsed = parse_app_process(command)
        if parsed is None or parsed.class_name != SERVER_CLASS or not self.enabled:
            return None
        return lambda stream: self._serve_process(stream, parsed, v2)

    def tcp_handler(self, target: str) -> ServiceHandler | None:
        """``tcp:PORT``: the server listening there, or None (connection refused: the OPEN fails)."""
        if not target.isdigit():
            return None
        for process in self.running():
            if process.port == int(target):
                return process.serve_connection
        return None

    # ----- the process behind the shell stream

    async def _serve_process(self, stream: AdbdStream, command: AppProcessCommand, v2: bool) -> None:
        async def out(fd: int, data: bytes) -> None:
            await stream.write(encode_shell_packet(fd, data) if v2 else data)

        async def finish(code: int) -> None:
            if v2 and not stream.closed:
                with contextlib.suppress(AdbdStreamClosedError):
                    await stream.write(encode_shell_packet(ShellId.EXIT, bytes([code & 0xFF])))

        jar = command.env.get("CLASSPATH", "")
        try:
            digest = hashlib.sha256(self.adbd.fs.read_file(jar)).hexdigest() if jar else ""
        except OSError:
            digest = ""
        if digest != JAR_SHA256:
            await out(ShellId.STDERR, f"Error: could not find class '{SERVER_CLASS}'\n".encode())
            return await finish(1)
        port = SERVER_PORT
        if "-p" in command.args[:-1]:
            value = command.args[command.args.index("-p") + 1]
            port = int(value) if value.isdigit() else SERVER_PORT
        await asyncio.sleep(self._cost("hierarchy_start"))  # --realistic: app_process, UiAutomation
        await out(ShellId.STDOUT, STARTED)
        if self.running():  # one UiAutomation user at a time
            await out(ShellId.STDERR, ALREADY)
            return await finish(1)
        process = HierarchyProcess(self, port)
        self.processes[process.pid] = process
        phone = self.adbd.phone
        getattr(phone, "processes", {})[process.pid] = "app_process"
        loop = asyncio.get_running_loop()  # `kill` runs in the shell's worker thread
        getattr(phone, "process_stoppers", {})[process.pid] = lambda: loop.call_soon_threadsafe(process.stop)
        hangup = asyncio.create_task(_wait_for_hangup(stream))
        ended = asyncio.create_task(process.ended.wait())
        try:
            await asyncio.wait({hangup, ended}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            process.stop()
            hangup.cancel()
            ended.cancel()
            self.processes.pop(process.pid, None)
        if not stream.closed:
            await finish(143 if ended.done() else 0)  # killed: SIGTERM's status
            with contextlib.suppress(AdbdStreamClosedError):
                stream.connection.close_stream(stream)


async def _wait_for_hangup(stream: AdbdStream) -> None:
    with contextlib.suppress(AdbdStreamClosedError):
        while await stream.read():
            pass
