"""Streamed transfers through a real ``phone-agent mcp`` and server, with a scripted page (``Peer``): a
``path`` moves in chunks over ``/api/transfers`` (never in one relay frame), the page's end posts or
fetches them, the front writes a download to a temporary file renamed when whole; a page that goes
away mid-transfer answers an isError (browser_not_connected, retryable) and leaves no file; the routes
want the bearer token (front) or an accepted Origin and a claimed transfer (page)."""

from __future__ import annotations

import asyncio
import hashlib
import os
from pathlib import Path

import httpx2
import pytest

from phone_agent.server.transfers import CHUNK_BYTES, TRANSFERS_PATH
from tests.server.harness import McpHarness, Peer, origin_of, token

pytestmark = pytest.mark.asyncio(loop_scope="session")
SIZE = 3 * CHUNK_BYTES + 1234


MCP_SERVER_ARGS = ("--tools", "all")


def page_http(port: int) -> httpx2.AsyncClient:
    """The page's requests: same origin as the relay, no token."""
    return httpx2.AsyncClient(
        base_url=f"http://127.0.0.1:{port}", headers={"Origin": origin_of(port)}, timeout=30
    )


async def test_a_pull_streams_in_chunks_to_the_callers_file(mcp_server: McpHarness, tmp_path: Path) -> None:
    data = os.urandom(SIZE)
    peer = await Peer.connect(mcp_server.port)
    try:
        calling = asyncio.create_task(
            mcp_server.call("pull_file", {"devicePath": "/sdcard/a.bin", "path": str(tmp_path / "a.bin")})
        )
        request = await peer.next_request("pull_file")
        assert request["args"] == {"devicePath": "/sdcard/a.bin"}  # the path stays on the caller's side
        transfer = request["transfer"]
        assert transfer["direction"] == "download" and transfer["path"].startswith(TRANSFERS_PATH)
        async with page_http(mcp_server.port) as http:
            for offset in range(0, SIZE, CHUNK_BYTES):
                answer = await http.post(transfer["path"], content=data[offset : offset + CHUNK_BYTES])
                assert answer.status_code == 204, answer.text
            too_big = await http.post(transfer["path"], content=bytes(CHUNK_BYTES + 1))
            assert too_big.status_code == 413
        digest = hashlib.sha256(data).hexdigest()
        await peer.answer(
            request,
            {"content": [{"type": "text", "text": "pulled"}], "structuredContent": {
                "devicePath": "/sdcard/a.bin", "size": SIZE, "sha256": digest}},
        )  # fmt: skip
        result = await calling
        assert not result.is_error, result
        assert result.structured_content["path"] == str(tmp_path / "a.bin")
        assert (tmp_path / "a.bin").read_bytes() == data
        assert sorted(p.name for p in tmp_path.iterdir()) == ["a.bin"]  # no temporary file left
    finally:
        await peer.close()


async def test_a_push_streams_the_callers_file_to_the_page(mcp_server: McpHarness, tmp_path: Path) -> None:
    data = os.urandom(SIZE)
    (tmp_path / "up.bin").write_bytes(data)
    peer = await Peer.connect(mcp_server.port)
    try:
        calling = asyncio.create_task(
            mcp_server.call("push_file", {"devicePath": "/sdcard/up.bin", "path": str(tmp_path / "up.bin")})
        )
        request = await peer.next_request("push_file")
        assert request["args"] == {"devicePath": "/sdcard/up.bin"} and request["transfer"]["size"] == SIZE
        got = bytearray()
        async with page_http(mcp_server.port) as http:
            while (answer := await http.get(request["transfer"]["path"])).status_code == 200:
                assert len(answer.content) <= CHUNK_BYTES
                got += answer.content
            assert answer.status_code == 204
            assert answer.headers["access-control-allow-origin"] == origin_of(mcp_server.port)
        assert got == data
        digest = hashlib.sha256(data).hexdigest()
        pushed = {"devicePath": "/sdcard/up.bin", "size": SIZE, "sha256": digest}
        text = [{"type": "text", "text": "pushed"}]
        await peer.answer(request, {"content": text, "structuredContent": pushed})
        result = await calling
        assert not result.is_error and result.structured_content["size"] == SIZE
    finally:
        await peer.close()


async def test_a_page_that_goes_away_mid_pull_leaves_no_file(mcp_server: McpHarness, tmp_path: Path) -> None:
    peer = await Peer.connect(mcp_server.port)
    calling = asyncio.create_task(
        mcp_server.call("pull_file", {"devicePath": "/sdcard/b.bin", "path": str(tmp_path / "b.bin")})
    )
    request = await peer.next_request("pull_file")
    async with page_http(mcp_server.port) as http:
        answer = await http.post(request["transfer"]["path"], content=os.urandom(CHUNK_BYTES))
        assert answer.status_code == 204
        await peer.close()  # the tab closes half-way
        result = await calling
        assert result.is_error
        error = result.structured_content
        assert error["code"] == "browser_not_connected" and error["retryable"] is True and error["remedy"]
        assert list(tmp_path.iterdir()) == []  # neither the file nor a temporary one
        late = await http.post(request["transfer"]["path"], content=b"more")
        assert late.status_code == 410  # the transfer ended with its call


async def test_the_routes_want_the_token_or_the_pages_origin(mcp_server: McpHarness) -> None:
    base = f"http://127.0.0.1:{mcp_server.port}"
    async with httpx2.AsyncClient(base_url=base, timeout=30) as http:
        refused = await http.post(TRANSFERS_PATH, json={"direction": "download"})
        assert refused.status_code == 401
        wrong = await http.post(
            TRANSFERS_PATH, json={"direction": "download"}, headers={"Authorization": "Bearer nope"}
        )
        assert wrong.status_code == 401
        bearer = {"Authorization": f"Bearer {await asyncio.to_thread(token)}"}
        opened = await http.post(TRANSFERS_PATH, json={"direction": "upload", "size": 3}, headers=bearer)
        assert opened.status_code == 200
        chunk = f"{TRANSFERS_PATH}/{opened.json()['id']}/chunk"
        foreign = await http.get(chunk, headers={"Origin": "https://evil.example"})
        assert foreign.status_code == 403
        unclaimed = await http.get(chunk, headers={"Origin": origin_of(mcp_server.port)})
        assert unclaimed.status_code == 410  # no call took it: the page cannot read it
        bad = await http.post(TRANSFERS_PATH, json={"direction": "upload"}, headers=bearer)
        assert bad.status_code == 400  # an upload says its size
