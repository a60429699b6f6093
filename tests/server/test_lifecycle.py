"""The ``phone-agent`` process as an MCP client sees it: stdout is JSON-RPC only, closing stdin ends the
``mcp`` front (the shared server and its page stay until ``phone-agent stop``), a taken port is a clear
one-line error, a signal stops a server promptly and frees the port."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from phone_agent.tools.catalog import listed_tools
from tests.server.harness import (
    PHONE_AGENT,
    Peer,
    free_port,
    page_token,
    phone_agent_process,
    port_is_free,
    stop_server,
    wait_listening,
)


def jsonrpc(message_id: int | None, method: str, params: dict | None = None) -> bytes:
    message: dict = {"jsonrpc": "2.0", "method": method}
    if message_id is not None:
        message["id"] = message_id
    if params is not None:
        message["params"] = params
    return (json.dumps(message) + "\n").encode()


def read_line(process: subprocess.Popen[bytes], timeout: float = 10) -> dict:
    """One JSON-RPC message from the server's stdout; a server silent for ``timeout`` is killed."""
    assert process.stdout is not None
    watchdog = threading.Timer(timeout, process.kill)
    watchdog.start()
    try:
        line = process.stdout.readline()
    finally:
        watchdog.cancel()
    assert line, "the server closed stdout (or said nothing in time)"
    return json.loads(line)


async def test_stdout_is_json_rpc_only_and_closing_stdin_ends_the_front_but_not_the_server(
    page_root: Path, tmp_path: Path, phone_agent_home: Path
) -> None:
    port = free_port()
    stderr_path = tmp_path / "stderr.txt"
    process = phone_agent_process(
        "mcp", "--port", str(port), "--root", str(page_root), "--self-check-delay", "0.2",
        log=stderr_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert process.stdin is not None and process.stdout is not None
        wait_listening(port, process)
        # A page is connected (and its self-check pending) while the client goes away: exit anyway.
        peer = await Peer.connect(port)
        process.stdin.write(
            jsonrpc(
                1,
                "initialize",
                {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "raw-test", "version": "0"},
                },
            )
        )
        process.stdin.flush()
        init = read_line(process)
        assert init["id"] == 1 and init["result"]["serverInfo"]["name"] == "phone-agent"
        assert "tools" in init["result"]["capabilities"] and "logging" in init["result"]["capabilities"]
        process.stdin.write(jsonrpc(None, "notifications/initialized"))
        process.stdin.write(jsonrpc(2, "tools/list"))
        process.stdin.flush()
        listed = read_line(process)
        assert listed["id"] == 2 and len(listed["result"]["tools"]) == len(listed_tools())
        await peer.next_request("get_device_status")  # the self-check reached the page; never answered

        started = time.monotonic()
        process.stdin.close()
        process.wait(10)
        assert time.monotonic() - started < 8
        assert process.returncode == 0
        rest = process.stdout.read().decode()
        for line in rest.splitlines():
            assert json.loads(line)["jsonrpc"] == "2.0", line
        # The shared server and its page stay: a client's exit costs them nothing.
        assert not port_is_free(port)
        assert peer.ws.close_code is None
        await asyncio.to_thread(stop_server, port)
        assert port_is_free(port)
        assert await peer.wait_closed() is not None
        await peer.close()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        if process.stdout is not None:
            process.stdout.close()
        stop_server(port)
    log = stderr_path.read_text()
    assert f"started phone-agent serve in the background on port {port}" in log
    assert "Traceback" not in log, log
    background_log = (phone_agent_home / "state" / f"server-{port}.log").read_text()
    # A log file is no terminal: never the page's token there (here a page may even have paired before
    # the server said how to open it, and then it says nothing about it).
    assert "phone-agent: serving" in background_log and page_token() not in background_log


def test_a_client_that_sends_before_the_handshake_is_answered_is_served_in_its_session(
    page_root: Path, tmp_path: Path
) -> None:
    # initialize, initialized and a call written at once, as a pipe may (the front relays them in order
    # of the session: the call waits for the session the initialize opens).
    port = free_port()
    process = phone_agent_process(
        "mcp", "--port", str(port), "--root", str(page_root), "--self-check-delay", "0",
        "--page-wait-ms", "0",
        log=tmp_path / "stderr.txt", stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert process.stdin is not None
        hello = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "pipe", "version": "0"},
        }
        process.stdin.write(jsonrpc(1, "initialize", hello))
        process.stdin.write(jsonrpc(None, "notifications/initialized"))
        process.stdin.write(jsonrpc(2, "tools/call", {"name": "get_device_status", "arguments": {}}))
        process.stdin.flush()
        answers = {message["id"]: message for message in (read_line(process, 30), read_line(process, 30))}
        assert answers[1]["result"]["serverInfo"]["name"] == "phone-agent"
        called = answers[2]["result"]
        assert called["isError"] and "No phone-agent page has connected" in called["content"][0]["text"]
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        stop_server(port)


def test_a_taken_port_is_a_one_line_error_and_exit_code_1(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        for command in ("serve", "mcp"):
            done = subprocess.run(
                [PHONE_AGENT, command, "--port", str(port)],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=30,
            )
            assert done.returncode == 1
            assert done.stdout == b""
            lines = done.stderr.decode().strip().splitlines()
            assert len(lines) == 1, lines
            assert lines[0].startswith("phone-agent: error: port ") and "already in use" in lines[0]


def test_a_bad_port_in_the_environment_is_refused(tmp_path: Path) -> None:
    done = subprocess.run(
        [PHONE_AGENT, "serve"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=30,
        env={**os.environ, "PHONE_AGENT_WS_PORT": "not-a-port"},
    )
    assert done.returncode != 0
    assert "PHONE_AGENT_WS_PORT" in done.stderr.decode()


@pytest.mark.parametrize("command", ["serve", "mcp"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_the_process_promptly(
    page_root: Path, tmp_path: Path, command: str, sig: signal.Signals
) -> None:
    """``serve`` frees the port; the ``mcp`` front ends alone and the shared server stays."""
    port = free_port()
    process = subprocess.Popen(
        [PHONE_AGENT, command, "--port", str(port), "--root", str(page_root)],
        # mcp keeps stdin open (a client that signals instead of closing stdin)
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(port, process)
        time.sleep(0.5 if command == "mcp" else 0)  # the front connects to its server after it listens
        started = time.monotonic()
        process.send_signal(sig)
        process.wait(10)
        assert time.monotonic() - started < 5
        assert port_is_free(port) is (command == "serve")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        assert process.stdin is not None
        process.stdin.close()
        stop_server(port)
    assert port_is_free(port)


class ReturningPage:
    """A scripted page that, like the real one, reconnects at once whenever its socket closes, and
    answers nothing (its calls stay pending)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.peer: Peer | None = None
        self.task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        while True:
            try:
                self.peer = await Peer.connect(self.port)
                await self.peer.wait_closed(timeout=3600)  # closed: straight back, as the page does
            except Exception:
                await asyncio.sleep(0.2)  # refused: again soon

    async def close(self) -> None:
        self.task.cancel()
        with contextlib.suppress(BaseException):
            await self.task
        if self.peer is not None:
            await self.peer.close()


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_a_stop_is_quiet_and_in_order_whatever_the_signal(
    page_root: Path, tmp_path: Path, sig: signal.Signals
) -> None:
    """With a page that comes straight back, an MCP client holding its stream and a call pending, a
    signal stops ``serve`` at once: the call gets an answer, nothing is logged after "stopping" (no page
    reconnecting, no traceback, no cancelled task)."""
    from tests.support import mcp_stdio_session

    port = free_port()
    errlog = tmp_path / "serve.err"
    process = phone_agent_process(
        "serve", "--port", str(port), "--root", str(page_root), "--self-check-delay", "0", log=errlog
    )
    page = None
    try:
        await asyncio.to_thread(wait_listening, port, process)
        page = ReturningPage(port)
        async with mcp_stdio_session("--port", str(port), stop_server=False) as session:
            call = asyncio.ensure_future(session.call_tool("get_device_status", {}))
            deadline = time.monotonic() + 10
            while "connected to the relay" not in errlog.read_text() and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.5)  # the call reaches the page, the client's GET stream is open
            started = time.monotonic()
            process.send_signal(sig)
            await asyncio.to_thread(process.wait, 10)
            assert time.monotonic() - started < 5  # (the graceful limit alone is 1 s; load adds)
            answer = await asyncio.wait_for(call, 10)
            assert answer.is_error  # answered (the page went with the server), not left hanging
    finally:
        if page is not None:
            await page.close()
        if process.poll() is None:
            process.kill()
            process.wait(10)
    log = errlog.read_text()
    after = log[log.index("; stopping") :].splitlines()[1:]
    assert after == [], log
    assert "Traceback" not in log and "Cancel" not in log, log
