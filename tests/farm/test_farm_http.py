"""The farm over streamable HTTP: ``phone-agent serve --farm`` (a real subprocess) serves the farm-routed
tools at ``/mcp`` behind the bearer token, Host and Origin checks, to the SDK's streamable HTTP client;
pages played by Python on a real nats-server answer."""

from __future__ import annotations

import asyncio
import json
import os
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp.client.session import ClientSession

from phone_agent import __version__
from phone_agent.tools.catalog import listed_tools
from tests.farm.support import PAGE_USERS, FarmBroker, PythonPage, structured
from tests.server.harness import (
    ServeProcess,
    free_port,
    http_session,
    origin_of,
    serve_process,
    stop_server,
    token,
)
from tests.support import eventually, mcp_stdio_session, phone_agent_command, result_text

SERIALS = ("http-a", "http-b")


@pytest.fixture
def farm_serve(broker: FarmBroker, tmp_path: Path) -> Iterator[ServeProcess]:
    port = free_port()
    env = {"PHONE_AGENT_FARM": broker.nats_url()}
    with serve_process(["--port", str(port), "--farm", "env"], tmp_path / "serve.txt", env=env) as process:
        process.wait_stderr("MCP over streamable HTTP")
        yield process


def request(port: int, path: str, method: str = "GET", headers: dict[str, str] | None = None,
            body: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
    call = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body, method=method)
    for name, value in (headers or {}).items():
        call.add_header(name, value)
    try:
        with urllib.request.urlopen(call, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read()


def post_initialize(port: int, headers: dict[str, str]) -> int:
    body = json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"},
        },
    }).encode()
    wanted = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream", **headers}
    return request(port, "/mcp", "POST", wanted, body)[0]


async def listed(session: ClientSession) -> list[str]:
    return [d["serial"] for d in structured(await session.call_tool("list_devices", {}))["devices"]]


async def test_serve_farm_routes_mcp_over_http_to_the_phone_each_call_names(
    broker: FarmBroker, farm_serve: ServeProcess
):
    pages = [PythonPage(broker, user, serial) for user, serial in zip(PAGE_USERS, SERIALS, strict=False)]
    for page in pages:
        await page.start()
    try:
        async with http_session(farm_serve.port, token()) as session:
            tools = {tool.name: tool for tool in (await session.list_tools()).tools}
            assert list(tools) == [spec.name for spec in listed_tools()] + ["list_devices"]
            assert tools["take_screenshot"].input_schema["properties"]["device"]["type"] == "string"

            async def both():
                serials = await listed(session)
                return serials if len(serials) == 2 else None

            assert await eventually(both, timeout_s=10) == list(SERIALS)
            answers = await asyncio.gather(*(
                session.call_tool("get_device_status", {"device": serial}) for serial in SERIALS * 10
            ))
            assert [structured(answer)["serial"] for answer in answers] == list(SERIALS) * 10
            unnamed = await session.call_tool("get_device_status", {})
            assert unnamed.is_error and unnamed.structured_content["code"] == "invalid_argument"
            assert all(serial in result_text(unnamed) for serial in SERIALS)

            await pages[1].close(say_goodbye=True)
            assert await eventually(lambda: _only(session, SERIALS[0]), timeout_s=5)
            gone = await session.call_tool("get_device_status", {"device": SERIALS[1]})
            assert gone.is_error and gone.structured_content["code"] == "no_device"
            alone = await session.call_tool("get_device_status", {})  # one phone left: device may be omitted
            assert structured(alone)["serial"] == SERIALS[0]
    finally:
        for page in pages:
            await page.close()
    log = farm_serve.stderr()
    assert broker.passwords["mcp"] not in log and token() not in log
    assert "nats://mcp:***@" in log


async def _only(session: ClientSession, serial: str):
    return await listed(session) == [serial]


def test_serve_farm_guards_mcp_and_serves_no_page(farm_serve: ServeProcess):
    port = farm_serve.port
    bearer = token()
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        assert post_initialize(port, headers) == 401
    auth = {"Authorization": f"Bearer {bearer}"}
    assert post_initialize(port, {**auth, "Host": f"evil.example:{port}"}) == 421
    assert post_initialize(port, {**auth, "Origin": "http://evil.example"}) == 403
    assert post_initialize(port, {**auth, "Origin": origin_of(port)}) == 200

    # The page routes: a note at / saying what this server is; no page, no config, no relay.
    status, headers, body = request(port, "/")
    assert status == 200 and b'data-farm-router="true"' in body and b"/mcp" in body
    assert headers.get("cache-control") == "no-store"
    for path in ("/index.html", "/static/vendor/nats/nats-core.mjs", "/static/boot.js"):
        assert request(port, path)[0] == 404, path
    status, _, body = request(port, "/api/config")  # who it is, and nothing a page could use
    assert status == 200 and json.loads(body) == {"server": "phone-agent", "version": __version__,
                                                   "farmRouter": True}
    assert request(port, "/", headers={"Host": f"evil.example:{port}"})[0] == 421

    # phone-agent mcp (the stdio front, without --farm) and stop see a phone-agent server routing over
    # the farm.
    assert request(port, "/api/server")[0] == 401
    status, _, body = request(port, "/api/server", headers=auth)
    identity = json.loads(body)
    assert status == 200 and identity["server"] == "phone-agent" and identity["farm"].startswith("nats://mcp:***@")
    stop_server(port)
    assert farm_serve.process.wait(10) == 0


def test_serve_farm_with_refused_credentials_exits_with_a_clear_error(broker: FarmBroker, tmp_path: Path):
    import subprocess

    from tests.server.harness import PHONE_AGENT

    wrong = broker.nats_url(password="not-the-password")
    done = subprocess.run(
        [PHONE_AGENT, "serve", "--port", str(free_port()), "--farm", wrong],
        capture_output=True, timeout=60, stdin=subprocess.DEVNULL,
    )
    err = done.stderr.decode()
    assert done.returncode == 1, err
    assert "refused the credentials" in err and "not-the-password" not in err


async def test_the_stdio_front_relays_to_a_farm_router_on_its_port(
    broker: FarmBroker, farm_serve: ServeProcess
):
    page = PythonPage(broker, PAGE_USERS[0], "front-phone")
    await page.start()
    try:
        async with mcp_stdio_session("--port", str(farm_serve.port), stop_server=False) as session:
            names = [tool.name for tool in (await session.list_tools()).tools]
            assert names[-1] == "list_devices"
            status = await eventually(lambda: _status(session, "front-phone"), timeout_s=10)
            assert status["serial"] == "front-phone"
    finally:
        await page.close()
    assert farm_serve.process.poll() is None  # the front leaves the server running


async def test_the_stdio_front_does_not_send_its_user_to_open_a_farm_router_in_chrome(
    farm_serve: ServeProcess, tmp_path: Path
):
    """A farm router serves no page: the front names the server it uses and nothing to open."""
    from mcp import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=phone_agent_command(), args=["mcp", "--port", str(farm_serve.port)], env=dict(os.environ)
    )
    err_path = tmp_path / "front.err"
    with err_path.open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            assert (await session.list_tools()).tools[-1].name == "list_devices"
    err = err_path.read_text()
    assert f"using the phone-agent server on port {farm_serve.port}" in err
    assert "in Chrome" not in err


async def _status(session: ClientSession, serial: str):
    answer = await session.call_tool("get_device_status", {"device": serial})
    return None if answer.is_error else structured(answer)


async def test_serve_farm_speaks_both_mcp_revisions(broker: FarmBroker, farm_serve: ServeProcess):
    import httpx2
    from mcp.client.client import Client
    from mcp.client.streamable_http import streamable_http_client

    page = PythonPage(broker, PAGE_USERS[0], SERIALS[0])
    await page.start()
    timeout = httpx2.Timeout(30.0, read=None)
    url = f"http://127.0.0.1:{farm_serve.port}/mcp"
    try:
        async with (
            httpx2.AsyncClient(headers={"Authorization": f"Bearer {token()}"}, timeout=timeout) as http,
            Client(streamable_http_client(url, http_client=http), mode="auto") as modern,
            Client(streamable_http_client(url, http_client=http), mode="legacy") as legacy,
        ):
            assert (modern.protocol_version, legacy.protocol_version) == ("2026-07-28", "2025-11-25")
            names = [spec.name for spec in listed_tools()] + ["list_devices"]
            for client in (modern, legacy):
                assert [tool.name for tool in (await client.list_tools()).tools] == names

                async def found(client=client):
                    devices = structured(await client.call_tool("list_devices", {}))["devices"]
                    return [device["serial"] for device in devices] == [SERIALS[0]]

                assert await eventually(found, timeout_s=10)
                status = await client.call_tool("get_device_status", {"device": SERIALS[0]})
                assert structured(status)["serial"] == SERIALS[0]
    finally:
        await page.close()
