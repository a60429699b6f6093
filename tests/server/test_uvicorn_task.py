"""``uvicorn_task``: a real uvicorn serving a small ASGI app on a socket bound beforehand (started,
answering, stopped, the socket closed), a server that fails (its app's lifespan ended), the server
record, the identity, the idle watch."""

from __future__ import annotations

import asyncio
import logging
import os

import httpx2
import pytest

from phone_agent.server import credentials
from phone_agent.server.listen import bind_socket
from phone_agent.server.options import ServerOptions
from phone_agent.server.uvicorn_task import ServerRecord, UvicornTask, server_identity, watch_idle
from tests.server.harness import port_is_free

LIFESPAN: list[str] = []  # the lifespan messages ``hello`` received, in order


async def hello(scope, receive, send) -> None:
    """An ASGI app: every HTTP request is answered ``hello``; the lifespan starts and stops."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            LIFESPAN.append(message["type"])
            await send({"type": message["type"] + ".complete"})
            if message["type"] == "lifespan.shutdown":
                return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    await send({"type": "http.response.body", "body": b"hello"})


async def test_it_serves_on_the_bound_socket_until_stopped_and_then_frees_the_port() -> None:
    sock = bind_socket("127.0.0.1", 0)
    port = sock.getsockname()[1]
    served = UvicornTask(hello, sock, access_log=False)
    await served.start()
    try:
        async with httpx2.AsyncClient() as http:
            answer = await http.get(f"http://127.0.0.1:{port}/anything")
        assert (answer.status_code, answer.text) == (200, "hello")
        assert "server" not in answer.headers  # server_header=False
        assert not served.failed and not served.task.done()
    finally:
        await served.stop()
    assert served.task.done() and not served.failed  # asked to stop: not a failure
    assert port_is_free(port)
    assert sock.fileno() == -1


async def test_a_server_that_cannot_serve_fails_its_start_and_says_so_when_stopped(caplog) -> None:
    sock = bind_socket("127.0.0.1", 0)
    sock.close()  # uvicorn cannot listen on it
    served = UvicornTask(hello, sock, access_log=False)
    LIFESPAN.clear()
    with pytest.raises(OSError):
        await served.start()
    assert served.failed  # it ended by itself
    assert LIFESPAN == ["lifespan.startup", "lifespan.shutdown"]  # the app's tasks did not outlive it
    await served.stop()
    assert "the web server failed: OSError" in caplog.text


def test_task_before_start_is_a_programming_error() -> None:
    served = UvicornTask(hello, bind_socket("127.0.0.1", 0), access_log=False)
    with pytest.raises(AssertionError, match="start"):
        served.task  # noqa: B018
    assert not served.failed
    asyncio.run(served.stop())  # stopping what never started only closes the socket


def test_the_identity_says_who_serves_and_extra_fields_win() -> None:
    options = ServerOptions(tool_profile="core", allow_origins=("http://b", "http://a"), idle_exit_s=30.0)
    identity = server_identity(options, 7788, sim=False, farm="nats://127.0.0.1:4222")
    assert identity["server"] == "phone-agent" and identity["pid"] == os.getpid()
    assert identity["port"] == 7788 and identity["toolProfile"] == "core" and identity["idleExitS"] == 30.0
    assert identity["allowOrigins"] == ["http://a", "http://b"]
    assert identity["sim"] is False and identity["farm"] == "nats://127.0.0.1:4222"
    assert server_identity(ServerOptions(sim=True), 1)["sim"] is True


def test_the_record_is_written_and_removed_only_once_written(phone_agent_home) -> None:
    port = 65_000
    identity = server_identity(ServerOptions(), port)
    ServerRecord(port, identity, "127.0.0.1").remove()  # never written: nothing to remove, no error
    record = ServerRecord(port, identity, "127.0.0.1")
    record.write()
    written = credentials.read_server_record(port)
    assert written is not None
    assert written["pid"] == os.getpid() and written["host"] == "127.0.0.1" and written["started"] > 0
    record.remove()
    assert credentials.read_server_record(port) is None


async def test_watch_idle_returns_once_idle_long_enough_and_says_why(caplog) -> None:
    readings = iter([0.0, 0.5, 1.0, 2.0])
    caplog.set_level(logging.INFO, logger="phone_agent.server")
    await asyncio.wait_for(watch_idle(lambda: next(readings), 1.5, "MCP client"), 5)
    assert next(readings, None) is None  # it read until the idle time reached the limit, then stopped
    assert "no MCP client for 1.5 s; exiting" in caplog.text
