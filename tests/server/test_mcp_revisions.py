"""Both MCP revisions side by side on one server: 2025-11-25 (``initialize``, sessions) and 2026-07-28
(stateless: ``server/discover``, the envelope in ``_meta``, ``Mcp-Method``/``Mcp-Name``, -32020 on a
mismatch, ``resultType``, a deterministic ``tools/list`` with ``ttlMs``), through the SDK's clients of
both revisions and raw HTTP, on ``/mcp`` and on the stdio front; and ``GET /mcp``'s health check."""

from __future__ import annotations

import asyncio
import json
import os
import urllib.error
import urllib.request
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from phone_agent.server.mcp_bridge import LIST_TTL_MS
from phone_agent.tools.catalog import listed_tools
from tests.server.harness import (
    PHONE_AGENT,
    ServeProcess,
    free_port,
    page_peer,
    stop_server,
    token,
)

MODERN = "2026-07-28"
LEGACY = "2025-11-25"


def envelope(**extra: Any) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
        **extra,
    }


def post(
    port: int, message: dict[str, Any], headers: dict[str, str] | None = None, bearer: str | None = None
) -> tuple[int, dict[str, str], bytes]:
    wanted = {
        "Authorization": f"Bearer {bearer or token()}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        **(headers or {}),
    }
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/mcp", data=json.dumps(message).encode(), headers=wanted, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()


def modern_headers(method: str, name: str | None = None) -> dict[str, str]:
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


def test_raw_2026_discover_tools_list_and_a_mismatch(served: ServeProcess) -> None:
    port = served.port
    discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": envelope()}}
    status, headers, body = post(port, discover, modern_headers("server/discover"))
    assert status == 200 and "mcp-session-id" not in headers  # stateless: no session
    result = json.loads(body)["result"]
    assert MODERN in result["supportedVersions"] and result["resultType"] == "complete"
    assert result["capabilities"]["tools"] is not None
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "phone-agent"

    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": envelope()}}
    bodies = [post(port, listing, modern_headers("tools/list"))[2] for _ in range(3)]
    assert bodies[0] == bodies[1] == bodies[2]  # deterministic, byte for byte
    listed = json.loads(bodies[0])["result"]
    assert [tool["name"] for tool in listed["tools"]] == [spec.name for spec in listed_tools()]
    assert listed["ttlMs"] == LIST_TTL_MS and listed["cacheScope"] == "public"
    assert listed["resultType"] == "complete"

    # The header says one method, the body another: -32020, and nothing runs.
    status, _, body = post(port, discover, modern_headers("tools/list"))
    assert status == 400 and json.loads(body)["error"]["code"] == -32020
    call = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "get_device_status", "arguments": {}, "_meta": envelope()},
    }
    status, _, body = post(port, call, modern_headers("tools/call", "take_screenshot"))
    assert status == 400 and json.loads(body)["error"]["code"] == -32020


async def test_raw_2026_tools_call_reaches_the_page_without_a_session(served: ServeProcess) -> None:
    port = served.port
    call = {
        "jsonrpc": "2.0",
        "id": 4,
        "method": "tools/call",
        "params": {"name": "get_device_status", "arguments": {}, "_meta": envelope()},
    }
    async with page_peer(port) as peer:
        answer = asyncio.create_task(
            asyncio.to_thread(post, port, call, modern_headers("tools/call", "get_device_status"))
        )
        request = await peer.next_request("get_device_status")
        await peer.answer(request, {"content": [{"type": "text", "text": '{"connected": true}'}]})
        status, headers, body = await answer
    assert status == 200 and "mcp-session-id" not in headers
    text = body.decode()
    if headers["content-type"].startswith("text/event-stream"):  # the SDK may stream a slow answer
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:") and '"result"' in line)
    result = json.loads(text)["result"]
    assert result["resultType"] == "complete" and result["content"][0]["text"] == '{"connected": true}'


def test_a_2026_request_without_the_version_header_is_routed_by_its_envelope(served: ServeProcess) -> None:
    discover = {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": envelope()}}
    status, headers, body = post(served.port, discover, {"Mcp-Method": "server/discover"})
    assert status == 200, body
    assert "mcp-session-id" not in headers and MODERN in json.loads(body)["result"]["supportedVersions"]


def test_a_2025_client_initializes_and_keeps_its_session_as_before(served: ServeProcess) -> None:
    port = served.port
    initialize = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    status, headers, body = post(port, initialize)
    assert status == 200 and headers["mcp-session-id"]
    session = {"Mcp-Session-Id": headers["mcp-session-id"], "MCP-Protocol-Version": LEGACY}
    text = body.decode()
    data = (
        text
        if text.startswith("{")
        else next(line[5:] for line in text.splitlines() if line.startswith("data:"))
    )
    assert json.loads(data)["result"]["protocolVersion"] == LEGACY
    assert post(port, {"jsonrpc": "2.0", "method": "notifications/initialized"}, session)[0] == 202
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    status, _, body = post(port, listing, session)
    assert status == 200 and b"run_agent_task" in body
    # Without its session a 2025 request is still refused, as before.
    assert post(port, listing, {"MCP-Protocol-Version": LEGACY})[0] == 400


def test_get_mcp_is_the_health_check(served: ServeProcess) -> None:
    def get(headers: dict[str, str]) -> tuple[int, bytes]:
        request = urllib.request.Request(f"http://127.0.0.1:{served.port}/mcp", headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    status, body = get({"Authorization": f"Bearer {token()}"})
    assert status == 200 and json.loads(body) == {"status": "running", "transport": "mcp"}
    assert get({})[0] == 401  # the token guards the health check too
    assert get({"Authorization": "Bearer wrong"})[0] == 401


@asynccontextmanager
async def http_client(port: int, mode: str) -> AsyncIterator[Client]:
    timeout = httpx2.Timeout(30.0, read=None)
    async with (
        httpx2.AsyncClient(headers={"Authorization": f"Bearer {token()}"}, timeout=timeout) as http,
        Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http), mode=mode) as client,
    ):
        yield client


async def both_revisions_call_the_page(port: int, clients: list[Client]) -> None:
    """Each client lists the tools and calls get_device_status at once; the scripted page answers each."""
    names = [spec.name for spec in listed_tools()]
    for client in clients:
        assert [tool.name for tool in (await client.list_tools()).tools] == names
    async with page_peer(port) as peer:
        calls = [asyncio.create_task(client.call_tool("get_device_status", {})) for client in clients]
        for index in range(len(clients)):
            request = await peer.next_request("get_device_status")
            await peer.answer(
                request, {"content": [{"type": "text", "text": f'{{"connected": true, "n": {index}}}'}]}
            )
        with anyio.fail_after(30):
            results = await asyncio.gather(*calls)
    assert sorted(json.loads(result.content[0].text)["n"] for result in results) == list(range(len(clients)))
    assert not any(result.is_error for result in results)


async def test_sdk_clients_of_both_revisions_share_mcp_over_http(served: ServeProcess) -> None:
    async with http_client(served.port, "auto") as modern, http_client(served.port, "legacy") as legacy:
        assert modern.protocol_version == MODERN and legacy.protocol_version == LEGACY
        await both_revisions_call_the_page(served.port, [modern, legacy])


async def test_sdk_clients_of_both_revisions_on_the_stdio_front(page_root: Path, tmp_path: Path) -> None:
    port = free_port()

    def params() -> StdioServerParameters:
        args = ["mcp", "--port", str(port), "--root", str(page_root), "--self-check-delay", "0"]
        return StdioServerParameters(command=PHONE_AGENT, args=args, env=dict(os.environ))

    try:
        with (tmp_path / "stderr.txt").open("w") as errlog, anyio.fail_after(90):
            async with (
                Client(stdio_client(params(), errlog=errlog), mode="auto") as modern,
                Client(stdio_client(params(), errlog=errlog), mode="legacy") as legacy,
            ):
                assert modern.protocol_version == MODERN and legacy.protocol_version == LEGACY
                await both_revisions_call_the_page(port, [modern, legacy])
    finally:
        await asyncio.to_thread(stop_server, port)
