"""``background``: where a client reaches a bound address, and ``probe``'s verdict on whatever answers
on a port, against small real HTTP servers (uvicorn on 127.0.0.1) that answer as phone-agent would,
as another version, as another user's server, or as something else entirely."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import pytest

from phone_agent import __version__
from phone_agent.server.background import connect_host, probe
from phone_agent.server.listen import bind_socket
from phone_agent.server.uvicorn_task import UvicornTask
from tests.server.harness import free_port

TOKEN = "the-token"


@pytest.mark.parametrize(
    ("host", "reached"),
    [("0.0.0.0", "127.0.0.1"), ("::", "127.0.0.1"), ("[::]", "127.0.0.1"), ("", "127.0.0.1"),
     ("127.0.0.1", "127.0.0.1"), ("::1", "[::1]"), ("[::1]", "[::1]"), ("localhost", "localhost")],
)  # fmt: skip
def test_connect_host_turns_a_wildcard_into_loopback_and_brackets_ipv6(host: str, reached: str) -> None:
    assert connect_host(host) == reached


def answering(routes: dict[str, tuple[int, bytes]]):
    """An ASGI app answering each path of ``routes`` with (status, body); /api/server only with the
    bearer token (else 401, as the real server does)."""

    async def app(scope, receive, send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        status, body = routes.get(scope["path"], (404, b"not found"))
        headers = dict(scope["headers"])
        if scope["path"] == "/api/server" and headers.get(b"authorization") != f"Bearer {TOKEN}".encode():
            status, body = 401, b'{"error": "Missing or invalid bearer token"}'
        await send({"type": "http.response.start", "status": status, "headers": []})
        await send({"type": "http.response.body", "body": body})

    return app


@asynccontextmanager
async def serving(routes: dict[str, tuple[int, bytes]]) -> AsyncIterator[int]:
    sock = bind_socket("127.0.0.1", 0)
    served = UvicornTask(answering(routes), sock, access_log=False)
    await served.start()
    try:
        yield sock.getsockname()[1]
    finally:
        await served.stop()


def config(version: str = __version__, server: str = "phone-agent") -> tuple[int, bytes]:
    return 200, json.dumps({"server": server, "version": version}).encode()


def identity(**extra: object) -> tuple[int, bytes]:
    return 200, json.dumps({"server": "phone-agent", "pid": 42, "uid": os.getuid(), **extra}).encode()


async def probed(routes: dict[str, tuple[int, bytes]], token: str = TOKEN):
    async with serving(routes) as port:
        return await asyncio.to_thread(probe, "127.0.0.1", port, token)


async def test_nothing_listening_is_none() -> None:
    found = await asyncio.to_thread(probe, "127.0.0.1", free_port(), TOKEN)
    assert (found.state, found.message) == ("none", "")


async def test_our_own_server_is_ours_with_its_identity() -> None:
    found = await probed({"/api/config": config(), "/api/server": identity()})
    assert found.state == "ours" and found.identity["pid"] == 42


async def test_a_server_with_another_token_is_not_ours() -> None:
    found = await probed({"/api/config": config(), "/api/server": identity()}, token="another")
    assert found.state == "not_ours" and "does not accept your token" in found.message


async def test_another_users_server_is_not_ours() -> None:
    found = await probed({"/api/config": config(), "/api/server": identity(uid=os.getuid() + 1)})
    assert found.state == "not_ours"
    assert f"holds the phone-agent server of another user (uid {os.getuid() + 1})" in found.message


async def test_another_version_says_which() -> None:
    found = await probed({"/api/config": config(version="0.0.1")})
    assert found.state == "other_version"
    assert f"holds phone-agent 0.0.1, not this phone-agent {__version__}" in found.message


async def test_a_server_without_our_api_server_is_another_version() -> None:
    found = await probed({"/api/config": config(), "/api/server": (200, b"<html>")})
    assert found.state == "other_version" and "does not answer /api/server" in found.message


@pytest.mark.parametrize(
    "answer",
    [(404, b"not found"), (200, b"not json"), (200, b"[]"), config(server="something-else")],
)
async def test_anything_else_is_not_phone_agent(answer: tuple[int, bytes]) -> None:
    found = await probed({"/api/config": answer})
    assert found.state == "not_phone_agent"
    assert "is already in use by something that is not phone-agent" in found.message
    assert found.message.startswith("port ") and "--port or PHONE_AGENT_WS_PORT" in found.message


async def test_stop_never_signals_a_recorded_pid_that_is_not_a_phone_agent_server() -> None:
    """A record whose pid now belongs to another program (pids are reused): ``stop`` leaves it alone."""
    import subprocess

    from phone_agent.server import credentials
    from phone_agent.server.background import ServerProblem, is_phone_agent_server, stop_server

    bystander = subprocess.Popen(["sleep", "60"])
    try:
        assert not is_phone_agent_server(bystander.pid)
        assert not is_phone_agent_server(os.getpid())  # pytest is not a server either
        # a phone-agent server there that does not take our token: stop falls back to the record
        async with serving({"/api/config": config(), "/api/server": identity()}) as port:
            credentials.write_server_record(port, {"pid": bystander.pid})
            try:
                with pytest.raises(ServerProblem):
                    await asyncio.to_thread(stop_server, "127.0.0.1", port, "another-token")
            finally:
                credentials.server_record_path(port).unlink()
        assert bystander.poll() is None  # not signalled
    finally:
        bystander.kill()
        bystander.wait()
