"""The MCP caller's client is asked too when the agent needs a person: a page's ``ask`` frame becomes an
``elicitation/create`` request (2025-11-25), or an input request (2026-07-28, the call parked between
rounds), to a client that declared ``elicitation``, its answer an ``answer`` frame; a ``withdraw`` (the
person at the page answered first) cancels it and a late response is ignored; a client that did not
declare the capability is never asked. Over ``/mcp`` (streamable HTTP,
with its token) and the stdio front (``phone-agent mcp``), with the SDK's ClientSession and a scripted
page (the browser tests drive the real page: tests/browser/test_people.py)."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp.client.client import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.server.harness import (
    PHONE_AGENT,
    Peer,
    ServeProcess,
    free_port,
    http_session,
    modern_client,
    page_peer,
    stop_server,
    token,
)

REPORT = {"content": [{"type": "text", "text": "## ✅ Agent Task Completed"}]}


class Asked:
    """A client's elicitation callback: records each request, answers as told (or never: ``None``)."""

    def __init__(self, reply: types.ElicitResult | None) -> None:
        self.reply = reply
        self.requests: list[types.ElicitRequestParams] = []
        self.cancelled = asyncio.Event()

    async def __call__(self, _context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.requests.append(params)
        if self.reply is not None:
            return self.reply
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            self.cancelled.set()
            raise
        raise AssertionError("unreachable")


@asynccontextmanager
async def stdio_session(
    port: int, root: Path, asked: Asked | None, errlog: Any
) -> AsyncIterator[ClientSession]:
    args = ["mcp", "--port", str(port), "--root", str(root), "--self-check-delay", "0"]
    params = StdioServerParameters(command=PHONE_AGENT, args=args, env=dict(os.environ))
    async with (
        stdio_client(params, errlog=errlog) as (read, write),
        ClientSession(read, write, elicitation_callback=asked) as session,
    ):
        with anyio.fail_after(60):
            await session.initialize()
        yield session


async def ask(peer: Peer, request: dict[str, Any], kind: str, message: str, ask_id: str = "ask-1") -> None:
    await peer.send({"id": request["id"], "type": "ask", "ask": ask_id, "kind": kind, "message": message})


async def no_frame(peer: Peer, within_s: float = 1.0) -> None:
    try:
        frame = await peer.next_frame(within_s)
    except TimeoutError:
        return
    raise AssertionError(f"the page was sent {frame}")


async def answered_by_the_client(session: ClientSession, peer: Peer, asked: Asked) -> None:
    """A take over the client accepts (done) and a confirmation it declines (no), in one agent task."""
    call = asyncio.ensure_future(session.call_tool("run_agent_task", {"goal": "Sign in to Login Demo"}))
    request = await peer.next_request("run_agent_task", timeout=30)
    await ask(peer, request, "takeover", "The phone agent needs a person to take over: Sign in", "ask-1")
    assert await peer.next_frame(30) == {"type": "answer", "id": "ask-1", "answer": "done"}
    first = asked.requests[0]
    assert isinstance(first, types.ElicitRequestFormParams)
    assert first.message == "The phone agent needs a person to take over: Sign in"
    assert first.requested_schema["type"] == "object"
    asked.reply = types.ElicitResult(action="decline")
    await ask(peer, request, "confirm", "Allow tap Send SMS (sending a message)?", "ask-2")
    assert await peer.next_frame(30) == {"type": "answer", "id": "ask-2", "answer": "no"}
    await peer.answer(request, REPORT)
    with anyio.fail_after(30):
        result = await call
    assert result.is_error is not True and len(asked.requests) == 2


async def withdrawn_and_never_asked(session: ClientSession, peer: Peer, asked: Asked | None) -> None:
    """The page asks; the person at the page answers first (withdraw): the client's question is
    cancelled (when it was asked at all), the page gets no answer, the call ends as the page says."""
    call = asyncio.ensure_future(session.call_tool("run_agent_task", {"goal": "Sign in"}))
    request = await peer.next_request("run_agent_task", timeout=30)
    await ask(peer, request, "takeover", "Take over: Sign in")
    if asked is not None:
        async with asyncio.timeout(30):
            while not asked.requests:
                await asyncio.sleep(0.02)
    await no_frame(peer)
    await peer.send({"id": request["id"], "type": "withdraw", "ask": "ask-1"})
    if asked is not None:
        await asyncio.wait_for(asked.cancelled.wait(), 30)
    await no_frame(peer, 0.5)
    await peer.answer(request, REPORT)
    with anyio.fail_after(30):
        assert (await call).is_error is not True


async def test_over_http_the_client_answers_a_take_over_and_a_confirmation(served: ServeProcess) -> None:
    asked = Asked(types.ElicitResult(action="accept", content={"done": True}))
    async with (
        http_session(served.port, token(), elicitation_callback=asked) as session,
        page_peer(served.port) as peer,
    ):
        await answered_by_the_client(session, peer, asked)


async def test_over_http_the_page_answers_first_and_the_question_is_withdrawn(served: ServeProcess) -> None:
    asked = Asked(None)
    async with (
        http_session(served.port, token(), elicitation_callback=asked) as session,
        page_peer(served.port) as peer,
    ):
        await withdrawn_and_never_asked(session, peer, asked)


async def test_over_http_a_client_without_the_capability_is_never_asked(served: ServeProcess) -> None:
    async with (
        http_session(served.port, token(), elicitation_callback=None) as session,
        page_peer(served.port) as peer,
    ):
        await withdrawn_and_never_asked(session, peer, None)


async def test_a_2026_client_answers_by_input_requests(served: ServeProcess) -> None:
    asked = Asked(types.ElicitResult(action="accept", content={"done": True}))
    async with (
        modern_client(served.port, elicitation_callback=asked) as client,
        page_peer(served.port) as peer,
    ):
        await answered_by_the_client(client, peer, asked)  # type: ignore[arg-type]


async def test_a_2026_clients_late_response_is_ignored(served: ServeProcess) -> None:
    """The page's person answers first; the client's response that comes with its retry changes
    nothing, and the retry gets the call's result."""
    asked = Asked(types.ElicitResult(action="accept"))
    release = asyncio.Event()
    answer = asked.__call__

    async def late(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        await release.wait()
        return await answer(context, params)

    async with (
        modern_client(served.port, elicitation_callback=late) as client,
        page_peer(served.port) as peer,
    ):  # type: ignore[arg-type]
        call = asyncio.ensure_future(client.call_tool("run_agent_task", {"goal": "Sign in"}))
        request = await peer.next_request("run_agent_task", timeout=30)
        await ask(peer, request, "takeover", "Take over: Sign in")
        await asyncio.sleep(0.5)  # the client has the input request; its user has not answered
        await peer.send({"id": request["id"], "type": "withdraw", "ask": "ask-1"})
        release.set()
        await no_frame(peer)
        await peer.answer(request, REPORT)
        with anyio.fail_after(30):
            result = await call
    assert result.is_error is not True and len(asked.requests) == 1


async def test_a_2026_client_without_the_capability_is_never_asked(served: ServeProcess) -> None:
    async with (
        modern_client(served.port, elicitation_callback=None) as client,
        page_peer(served.port) as peer,
    ):
        call = asyncio.ensure_future(client.call_tool("run_agent_task", {"goal": "Sign in"}))
        request = await peer.next_request("run_agent_task", timeout=30)
        await ask(peer, request, "confirm", "Allow it?")
        await no_frame(peer)
        await peer.answer(request, REPORT)
        with anyio.fail_after(30):
            assert (await call).is_error is not True


async def test_a_2026_retry_with_an_unknown_request_state_is_refused(served: ServeProcess) -> None:
    from mcp.shared.exceptions import MCPError

    async with modern_client(served.port, elicitation_callback=Asked(None)) as client:
        with pytest.raises(MCPError) as raised:
            await client.session.call_tool(
                "run_agent_task", {"goal": "x"}, request_state="made-up", allow_input_required=True
            )
    assert raised.value.error.code == -32602 and "requestState" in raised.value.error.message


async def test_on_the_stdio_front_the_client_is_asked_or_not(page_root: Path, tmp_path: Path) -> None:
    port = free_port()
    asked = Asked(types.ElicitResult(action="accept"))
    try:
        with (tmp_path / "stderr.txt").open("w") as errlog:
            async with stdio_session(port, page_root, asked, errlog) as session, page_peer(port) as peer:
                await answered_by_the_client(session, peer, asked)
            asked = Asked(None)
            async with stdio_session(port, page_root, asked, errlog) as session, page_peer(port) as peer:
                await withdrawn_and_never_asked(session, peer, asked)
            async with stdio_session(port, page_root, None, errlog) as session, page_peer(port) as peer:
                await withdrawn_and_never_asked(session, peer, None)
            # A 2026-07-28 client of the front: input requests.
            asked = Asked(types.ElicitResult(action="accept"))
            args = ["mcp", "--port", str(port), "--root", str(page_root), "--self-check-delay", "0"]
            params = StdioServerParameters(command=PHONE_AGENT, args=args, env=dict(os.environ))
            async with (
                Client(
                    stdio_client(params, errlog=errlog), mode="auto", elicitation_callback=asked
                ) as client,
                page_peer(port) as peer,
            ):
                assert client.protocol_version == "2026-07-28"
                await answered_by_the_client(client, peer, asked)  # type: ignore[arg-type]
    finally:
        await asyncio.to_thread(stop_server, port)
    log = (tmp_path / "stderr.txt").read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]


def test_a_page_frame_for_an_unknown_answer_kind_is_refused() -> None:
    from phone_agent.relay.frames import AnswerFrame, BadFrame, parse_server_frame

    assert parse_server_frame(json.dumps({"type": "answer", "id": "a", "answer": "yes"})) == AnswerFrame(
        "a", "yes"
    )
    assert isinstance(
        parse_server_frame(json.dumps({"type": "answer", "id": "a", "answer": "maybe"})), BadFrame
    )
