"""Many MCP clients, one phone: ``phone-agent mcp`` fronts and HTTP clients share one server and one page.

Real parts throughout: the SDK's stdio client spawning ``phone-agent mcp`` (which starts ``phone-agent
serve`` in the background), the SDK's streamable HTTP client on ``/mcp`` with the bearer token, and a
scripted page on the relay WebSocket. Every test stops the servers it started (and the session's
``PHONE_AGENT_HOME`` catches any left behind).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import stat
import subprocess
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import mcp.types as types
import pytest

from phone_agent.errors import BROWSER_NOT_CONNECTED_TEXT
from phone_agent.tools.catalog import TOOLS_BY_NAME, listed_tools, tools_for_profile
from tests.server.harness import (
    PHONE_AGENT,
    McpHarness,
    Peer,
    ServeProcess,
    free_port,
    http_session,
    origin_of,
    port_is_free,
    serve_process,
    started_front,
    stop_server,
    token,
    wait_listening,
    with_structured_content,
)


class AnsweringPage:
    """A scripted page that answers every call at once (get_device_status: a connected phone), except
    the tools in ``hold``, whose requests it keeps for the test."""

    def __init__(self, peer: Peer, hold: tuple[str, ...] = ()) -> None:
        self.peer = peer
        self.hold = hold
        self.held: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.cancels: list[str] = []
        self.answered = 0
        self._task = asyncio.create_task(self._answer())

    async def _answer(self) -> None:
        while True:
            frame = await self.peer.frames.get()
            if frame.get("type") == "cancel":
                self.cancels.append(frame["id"])
                continue
            tool = frame.get("tool")
            if tool in self.hold:
                self.held.put_nowait(frame)
                continue
            if tool == "get_device_status":
                result = {
                    "content": [{"type": "text", "text": '{"connected":true}'}],
                    "structuredContent": {"connected": True},
                }
            else:
                result = with_structured_content(tool, {"content": [{"type": "text", "text": f"{tool} ok"}]})
            await self.peer.answer(frame, result)
            self.answered += 1

    async def close(self) -> None:
        self._task.cancel()
        with contextlib.suppress(BaseException):
            await self._task
        await self.peer.close()


async def wait_for(check: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{what}: not within {timeout}s")


def connected(result: types.CallToolResult) -> bool:
    return not result.is_error and result.structured_content == {"connected": True}


# -- many clients, one page ---------------------------------------------------------------------------


async def test_two_stdio_fronts_and_two_http_clients_share_one_page_and_one_leaving_costs_the_others_nothing(
    page_root: Path, tmp_path: Path
) -> None:
    port = free_port()
    args = ["--root", str(page_root), "--self-check-delay", "0"]
    first = McpHarness(port=port, args=args, stderr_path=tmp_path / "first.txt")
    second = McpHarness(port=port, args=args, stderr_path=tmp_path / "second.txt")
    page: AnsweringPage | None = None
    try:
        await first.start()  # starts the shared server in the background
        await second.start()  # finds it
        assert "started phone-agent serve in the background" in first.stderr()
        assert "using the phone-agent server on port" in second.stderr()
        page = AnsweringPage(await Peer.connect(port), hold=("run_agent_task",))
        bearer = token()
        async with http_session(port, bearer) as one, http_session(port, bearer) as two:
            # All four at once, several calls each, through the one page.
            async def calls(call: Any, n: int) -> list[bool]:
                return [connected(await call("get_device_status", {})) for _ in range(n)]

            results = await asyncio.gather(
                calls(first.call, 5),
                calls(second.call, 5),
                calls(lambda name, a: one.call_tool(name, a), 5),
                calls(lambda name, a: two.call_tool(name, a), 5),
            )
            assert all(all(batch) for batch in results), results
            assert page.answered == 20

            # The first client leaves in the middle of a long call: only its own front ends.
            pending = asyncio.create_task(first.call("run_agent_task", {"goal": "a long one"}))
            held = await asyncio.wait_for(page.held.get(), 10)
            await first.stop(server_too=False)
            pending.cancel()
            with contextlib.suppress(BaseException):
                await pending
            # Its call has no caller any more: the page is told to stop working on it.
            await wait_for(lambda: held["id"] in page.cancels, 10, "the page cancelled the orphaned call")

            results = await asyncio.gather(
                calls(second.call, 3),
                calls(lambda name, a: one.call_tool(name, a), 3),
                calls(lambda name, a: two.call_tool(name, a), 3),
            )
            assert all(all(batch) for batch in results), results
            assert page.peer.ws.close_code is None  # the page (and its phone) stayed connected
            assert not port_is_free(port)
    finally:
        if page is not None:
            await page.close()
        await first.stop(server_too=False)
        await second.stop()
    assert port_is_free(port)


async def test_a_call_while_the_page_is_away_is_served_once_the_page_is_back(
    page_root: Path, tmp_path: Path
) -> None:
    port = free_port()
    async with started_front(port, tmp_path / "stderr.txt", "--root", str(page_root)) as client:
        # A page paired, then went (a reload): a call waits for it to come back (10 s by default).
        await (await Peer.connect(port)).close()
        await client.wait_no_page()
        started = time.monotonic()
        call = asyncio.create_task(client.call("get_device_status", {}))
        await asyncio.sleep(1.5)  # the page is not back yet; the call waits for it
        assert not call.done()
        page = AnsweringPage(await Peer.connect(port))
        try:
            result = await asyncio.wait_for(call, 15)
        finally:
            await page.close()
        assert connected(result)
        assert 1.5 <= time.monotonic() - started < 10


async def test_before_any_page_paired_a_call_answers_at_once_with_the_command_that_gives_the_link(
    page_root: Path, tmp_path: Path
) -> None:
    port = free_port()
    async with started_front(port, tmp_path / "stderr.txt", "--root", str(page_root)) as client:
        started = time.monotonic()
        result = await client.call("get_device_status", {})
        assert time.monotonic() - started < 2  # not the 10 s page wait
        assert result.is_error and result.content[0].text == (
            f"{BROWSER_NOT_CONNECTED_TEXT} No phone-agent page has connected since the server started: run "
            f"`phone-agent url --port {port}` and open the link it prints in Chrome."
        )


async def test_a_front_whose_server_went_starts_one_again_and_a_call_held_when_it_went_says_so(
    page_root: Path, tmp_path: Path
) -> None:
    port = free_port()
    args = ("--root", str(page_root), "--self-check-delay", "0")
    async with started_front(port, tmp_path / "stderr.txt", *args) as client:
        page = AnsweringPage(await Peer.connect(port), hold=("take_screenshot",))
        try:
            assert connected(await client.call("get_device_status", {}))
            held = asyncio.create_task(client.call("take_screenshot", {}))
            await asyncio.wait_for(page.held.get(), 10)
            await asyncio.to_thread(stop_server, port)
            gone = await asyncio.wait_for(held, 15)
        finally:
            await page.close()
        assert gone.is_error and gone.structured_content["code"] == "browser_not_connected"
        assert "went away" in gone.content[0].text or "disconnected" in gone.content[0].text
        # The next call finds no server, starts one, opens the client's session on it again, and is
        # answered there (no page has paired with the new server yet).
        again = await client.call("get_device_status", {})
        assert again.is_error and "No phone-agent page has connected since the server started" in (
            again.content[0].text
        )
        page = AnsweringPage(await Peer.connect(port))
        try:
            assert connected(await client.call("get_device_status", {}))
        finally:
            await page.close()


async def test_with_no_page_back_within_the_wait_a_call_answers_browser_not_connected(
    page_root: Path, tmp_path: Path
) -> None:
    port = free_port()
    args = ("--root", str(page_root), "--page-wait-ms", "700")
    async with started_front(port, tmp_path / "stderr.txt", *args) as client:
        await (await Peer.connect(port)).close()
        await client.wait_no_page()
        started = time.monotonic()
        result = await client.call("get_device_status", {})
        assert 0.6 <= time.monotonic() - started < 5
        # the specification's words, then where the page is
        assert result.is_error and result.content[0].text == (
            f"{BROWSER_NOT_CONNECTED_TEXT} The page: http://127.0.0.1:{port}/ (phone-agent's page; open the "
            "link `phone-agent url` prints in Chrome)."
        )


async def test_the_background_server_exits_after_its_idle_time_with_no_client_and_no_page(
    page_root: Path, tmp_path: Path, phone_agent_home: Path
) -> None:
    port = free_port()
    args = ("--root", str(page_root), "--idle-exit-s", "1.5")
    async with started_front(port, tmp_path / "stderr.txt", *args) as client:
        # A client is connected (idle, no page): the server stays.
        await asyncio.sleep(3)
        assert not port_is_free(port)
        page = await Peer.connect(port)
        await client.stop(server_too=False)
        # A page is still there: the server stays.
        await asyncio.sleep(3)
        assert not port_is_free(port)
        await page.close()
        # No client and no page: gone after its idle time (bounded here at 10 s).
        await wait_for(lambda: port_is_free(port), 10, "the idle server exited")
        log = (phone_agent_home / "state" / f"server-{port}.log").read_text()
        assert "no MCP client and no page for 1.5 s; exiting" in log
        assert not (phone_agent_home / "state" / f"server-{port}.json").exists()


# -- /mcp over HTTP: the token, Host and Origin ---------------------------------------------------


@pytest.fixture
def mcp_serve(page_root: Path, tmp_path: Path) -> Any:
    port = free_port()
    args = ["--port", str(port), "--root", str(page_root), "--self-check-delay", "0", "--page-wait-ms", "0"]
    with serve_process(args, tmp_path / "serve.txt") as process:
        yield process


def post_mcp(port: int, headers: dict[str, str]) -> tuple[int, Any, bytes]:
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "0"},
            },
        }
    ).encode()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/mcp", data=body, method="POST")
    for name, value in {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        **headers,
    }.items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers, response.read(200)
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


def test_mcp_without_the_right_bearer_token_is_401_and_the_token_is_never_logged(
    mcp_serve: ServeProcess,
) -> None:
    bearer = token()
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {bearer}"}):
        status, response_headers, body = post_mcp(mcp_serve.port, headers)
        assert status == 401, headers
        assert json.loads(body) == {"error": "Missing or invalid bearer token"}
        assert response_headers.get("WWW-Authenticate") == "Bearer"
    status, _, _ = post_mcp(mcp_serve.port, {"Authorization": f"Bearer {bearer}"})
    assert status == 200
    assert bearer not in mcp_serve.stderr()


def test_mcp_refuses_a_rebinding_host_and_a_foreign_origin(mcp_serve: ServeProcess) -> None:
    auth = {"Authorization": f"Bearer {token()}"}
    status, _, _ = post_mcp(mcp_serve.port, {**auth, "Host": f"evil.example:{mcp_serve.port}"})
    assert status == 421
    status, _, _ = post_mcp(mcp_serve.port, {**auth, "Origin": "http://evil.example"})
    assert status == 403
    status, _, _ = post_mcp(mcp_serve.port, {**auth, "Origin": origin_of(mcp_serve.port)})
    assert status == 200


async def test_http_clients_get_progress_and_cancel_the_call_in_the_page(mcp_serve: ServeProcess) -> None:
    page = await Peer.connect(mcp_serve.port)
    try:
        async with http_session(mcp_serve.port, token()) as session:
            progressed: list[tuple[float, str | None]] = []

            async def on_progress(value: float, total: float | None, message: str | None) -> None:
                progressed.append((value, message))

            call = asyncio.create_task(
                session.call_tool("run_agent_task", {"goal": "g"}, progress_callback=on_progress)
            )
            request = await page.next_request("run_agent_task")
            await page.progress(request, 1, "planning")
            await page.progress(request, 2, "step 1")
            await wait_for(lambda: len(progressed) == 2, 10, "progress reached the HTTP client")
            assert progressed == [(1.0, "planning"), (2.0, "step 1")]
            call.cancel()
            with contextlib.suppress(BaseException):
                await call
            cancel = await page.next_frame()
            assert cancel == {"id": request["id"], "type": "cancel"}
    finally:
        await page.close()


# -- tool profiles ----------------------------------------------------------------------------------


@pytest.mark.parametrize("profile", ["all", "agent", "read-only"])
async def test_the_server_lists_exactly_its_tool_profile_and_refuses_other_tools(
    page_root: Path, tmp_path: Path, profile: str
) -> None:
    port = free_port()
    args = ["--port", str(port), "--root", str(page_root), "--tools", profile, "--page-wait-ms", "0"]
    with serve_process(args, tmp_path / "serve.txt"):
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/config", timeout=10) as response:
            assert json.loads(response.read())["toolProfile"] == profile
        async with http_session(port, token()) as session:
            listed = [tool.name for tool in (await session.list_tools()).tools]
            assert listed == [spec.name for spec in tools_for_profile(profile)]
            if profile == "agent":
                assert len(listed) == 6
            if profile == "read-only":
                assert all(TOOLS_BY_NAME[name].read_only for name in listed)
            outside = [name for name in TOOLS_BY_NAME if name not in listed]
            assert bool(outside) is (profile != "all")
            for name in outside[:3]:
                result = await session.call_tool(name, {})
                assert result.is_error and result.structured_content["code"] == "unknown_tool"
                assert name in result.content[0].text and profile in result.content[0].text


async def test_a_front_with_a_narrower_profile_narrows_only_its_own_client(
    page_root: Path, tmp_path: Path
) -> None:
    port = free_port()
    wide = McpHarness(port=port, args=["--root", str(page_root)], stderr_path=tmp_path / "wide.txt")
    narrow = McpHarness(
        port=port, args=["--root", str(page_root), "--tools", "agent"], stderr_path=tmp_path / "narrow.txt"
    )
    try:
        await wide.start()
        await narrow.start()
        assert narrow.session is not None and wide.session is not None
        narrow_tools = [tool.name for tool in (await narrow.session.list_tools()).tools]
        wide_tools = [tool.name for tool in (await wide.session.list_tools()).tools]
        assert len(narrow_tools) == 6 and wide_tools == [spec.name for spec in listed_tools()]
        outside = next(name for name in wide_tools if name not in narrow_tools)
        result = await narrow.call(outside, {})
        assert result.is_error and result.structured_content["code"] == "unknown_tool"
    finally:
        await narrow.stop(server_too=False)
        await wide.stop()


# -- who holds the port -------------------------------------------------------------------------------


class _FakeServer(BaseHTTPRequestHandler):
    answer: ClassVar[dict[str, Any]] = {}

    def do_GET(self) -> None:
        body = json.dumps(self.answer).encode()
        self.send_response(200 if self.path == "/api/config" else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


def run_mcp_expecting_failure(port: int, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [PHONE_AGENT, "mcp", "--port", str(port)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )
    assert done.returncode == 1
    assert done.stdout == b""
    return done.stderr.decode()


def test_an_older_phone_agent_on_the_port_is_reported_and_never_used() -> None:
    handler = type("Old", (_FakeServer,), {"answer": {"server": "phone-agent", "version": "0.0.1"}})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        err = run_mcp_expecting_failure(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()
    assert "phone-agent: error: port" in err and "holds phone-agent 0.0.1, not this phone-agent" in err


def test_a_server_that_does_not_take_this_users_token_is_reported_and_never_used(
    page_root: Path, tmp_path: Path
) -> None:
    port = free_port()
    args = ["--port", str(port), "--root", str(page_root)]
    with serve_process(args, tmp_path / "serve.txt", env={"PHONE_AGENT_TOKEN": "someone-elses-token"}):
        err = run_mcp_expecting_failure(port)
    assert "does not accept your token" in err


def test_a_port_held_by_something_else_is_reported() -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        err = run_mcp_expecting_failure(holder.getsockname()[1])
    assert "is already in use by something that is not phone-agent" in err


# -- token and stop -----------------------------------------------------------------------------------


def test_the_token_is_kept_private_printed_rotated_and_overridden_by_the_environment(
    phone_agent_home: Path,
) -> None:
    first = token()
    assert len(first) >= 22  # ≥ 128 bits of url-safe base64
    path = phone_agent_home / "config" / "token"
    assert path.read_text().strip() == first
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert token() == first
    rotated = subprocess.run([PHONE_AGENT, "token", "--rotate"], capture_output=True, timeout=30, check=True)
    new = rotated.stdout.decode().strip()
    assert new != first and token() == new
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    from_env = subprocess.run(
        [PHONE_AGENT, "token"],
        capture_output=True,
        timeout=30,
        env={**os.environ, "PHONE_AGENT_TOKEN": "from-the-environment"},
        check=True,
    )
    assert from_env.stdout.decode().strip() == "from-the-environment"


def test_stop_stops_a_foreground_server_and_says_when_there_is_none(page_root: Path, tmp_path: Path) -> None:
    port = free_port()
    with serve_process(["--port", str(port), "--root", str(page_root)], tmp_path / "serve.txt") as process:
        done = subprocess.run([PHONE_AGENT, "stop", "--port", str(port)], capture_output=True, timeout=30)
        assert done.returncode == 0
        assert f"stopped the phone-agent server on port {port}" in done.stderr.decode()
        assert process.process.wait(10) == 0
    assert port_is_free(port)
    again = subprocess.run([PHONE_AGENT, "stop", "--port", str(port)], capture_output=True, timeout=30)
    assert again.returncode == 0 and f"no phone-agent server on port {port}" in again.stderr.decode()


def test_mcp_sim_starts_a_background_server_with_the_simulated_phone(tmp_path: Path) -> None:
    """A newcomer's ``phone-agent mcp --sim``: the background server gets --sim, and its page is told
    to connect to the simulated phone."""
    port, sim_port = free_port(), free_port()
    process = subprocess.Popen(
        [PHONE_AGENT, "mcp", "--sim", "--sim-port", str(sim_port), "--port", str(port)],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(port, process, timeout=40)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/config", timeout=10) as response:
            assert json.loads(response.read())["device"] == f"tcp:127.0.0.1:{sim_port}"
        wait_listening(sim_port, process)
    finally:
        assert process.stdin is not None
        process.stdin.close()
        process.wait(10)
        stop_server(port)
    assert port_is_free(port)
    deadline = time.monotonic() + 10  # the simulated phone closes just after the server's port
    while not port_is_free(sim_port) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert port_is_free(sim_port)


def test_a_hint_to_stop_the_server_names_its_port(page_root: Path, tmp_path: Path) -> None:
    """``mcp --port P --sim`` finding a server without --sim: the hint, copied as printed, stops that
    server (``--port P``), not the one on 7788."""
    port = free_port()
    with serve_process(["--port", str(port), "--root", str(page_root)], tmp_path / "serve.err"):
        errlog = tmp_path / "front.err"
        with errlog.open("wb") as sink:
            front = subprocess.Popen(
                [PHONE_AGENT, "mcp", "--port", str(port), "--sim"],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=sink,
            )
        try:
            deadline = time.monotonic() + 30
            while "runs without --sim" not in errlog.read_text() and time.monotonic() < deadline:
                time.sleep(0.05)
        finally:
            assert front.stdin is not None
            front.stdin.close()
            front.wait(10)
    said = errlog.read_text()
    assert f"run `phone-agent stop --port {port}`, then start" in said, said


def test_stop_command_spells_out_what_is_not_the_default(monkeypatch) -> None:
    from phone_agent.server.background import stop_command

    monkeypatch.delenv("PHONE_AGENT_WS_PORT", raising=False)
    assert stop_command(7788) == "phone-agent stop"
    assert stop_command(7789) == "phone-agent stop --port 7789"
    assert stop_command(7789, "192.168.1.5") == "phone-agent stop --host 192.168.1.5 --port 7789"
    monkeypatch.setenv("PHONE_AGENT_WS_PORT", "7790")  # a copied hint must not depend on this shell's
    assert stop_command(7788) == "phone-agent stop --port 7788"


def test_two_fronts_started_together_start_one_server_and_the_other_joins_it(tmp_path: Path) -> None:
    """Two ``phone-agent mcp --sim`` started 0.2 s apart with no server yet: one starts it (holding the
    start lock, as adb's server start does), the other waits and joins; the log has one start, no error."""
    from phone_agent.server import credentials

    port, sim_port = free_port(), free_port()
    command = [PHONE_AGENT, "mcp", "--sim", "--sim-port", str(sim_port), "--port", str(port)]
    fronts, errs = [], [tmp_path / "front-0.err", tmp_path / "front-1.err"]
    try:
        for err in errs:
            with err.open("wb") as sink:
                quiet = {"stdin": subprocess.PIPE, "stdout": subprocess.DEVNULL, "stderr": sink}
                fronts.append(subprocess.Popen(command, **quiet))
            time.sleep(0.2)
        # Both have said which server they use (each reached it); stderr is a file, so no link is shown.
        reached = (
            "started phone-agent serve in the background",
            f"using the phone-agent server on port {port}",
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not all(
            any(line in err.read_text() for line in reached) for err in errs
        ):
            assert all(front.poll() is None for front in fronts), [err.read_text() for err in errs]
            time.sleep(0.1)
    finally:
        for front in fronts:
            assert front.stdin is not None
            front.stdin.close()
            front.wait(10)
        stop_server(port)
    said = [err.read_text() for err in errs]
    started = [text for text in said if "started phone-agent serve in the background" in text]
    joined = [text for text in said if f"using the phone-agent server on port {port}" in text]
    assert (len(started), len(joined)) == (1, 1), said
    log = credentials.background_log_path(port).read_text()
    assert log.count("--- phone-agent serve started by phone-agent mcp") == 1, log
    assert "address already in use" not in log and "error" not in log.lower(), log


# run_agent_task goes through the SDK's session; take_screenshot the quick way (mcp_quick).
@pytest.mark.parametrize(("tool", "arguments"), [("run_agent_task", {"goal": "g"}), ("take_screenshot", {})])
async def test_an_http_client_that_vanishes_mid_call_costs_the_page_nothing(
    mcp_serve: ServeProcess, tool: str, arguments: dict[str, Any]
) -> None:
    # The fault matrix's "HTTP client vanishing mid-call": its connection drops with no cancel sent.
    # The page is told to cancel the call (no one can receive its answer), stays paired and usable,
    # and the next client is served.
    page = await Peer.connect(mcp_serve.port)
    try:
        started = asyncio.Event()

        async def vanishing_client() -> None:
            async with http_session(mcp_serve.port, token()) as session:
                call = asyncio.ensure_future(session.call_tool(tool, arguments))
                started.set()
                await call

        client = asyncio.create_task(vanishing_client())
        request = await page.next_request(tool)
        await started.wait()
        vanished = time.monotonic()
        client.cancel()  # the whole client goes: its HTTP connections close mid-call
        with contextlib.suppress(BaseException):
            await client
        cancel = await page.next_frame(timeout=15)
        assert cancel == {"id": request["id"], "type": "cancel"}
        assert time.monotonic() - vanished < 15
        answering = AnsweringPage(page)
        try:
            async with http_session(mcp_serve.port, token()) as session:
                assert connected(await session.call_tool("get_device_status", {}))
        finally:
            answering._task.cancel()
    finally:
        await page.close()


async def test_a_quick_call_whose_connection_closes_is_cancelled_in_the_page(mcp_serve: ServeProcess) -> None:
    # Nothing but the socket closing: no notifications/cancelled, no DELETE (mcp_quick watches the POST).
    from phone_agent.server.http_link import HttpLink

    page = await Peer.connect(mcp_serve.port)
    headers = {"Authorization": f"Bearer {token()}", "Accept": "application/json, text/event-stream"}
    link = HttpLink("127.0.0.1", mcp_serve.port, {**headers, "Content-Type": "application/json"})
    try:
        hello = {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        opened = await link.request(
            "POST",
            "/mcp",
            json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}).encode(),
        )
        assert [m async for m in opened.messages()]
        session = {"Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "take_screenshot"}}
        answer = await link.request("POST", "/mcp", json.dumps(call).encode(), session)
        assert answer.status == 200 and answer.is_event_stream
        request = await page.next_request("take_screenshot")
        answer._writer.close()  # the client goes
        cancel = await page.next_frame(timeout=15)
        assert cancel == {"id": request["id"], "type": "cancel"}
    finally:
        link.close()
        await page.close()
