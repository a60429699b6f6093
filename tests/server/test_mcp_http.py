"""``mcp_http``: the bearer check in front of ``/mcp`` (which headers carry a token, what a refusal
looks like, a repr that hides the token), on an in-process ASGI app."""

from __future__ import annotations

import asyncio

import httpx2
import pytest
from starlette.datastructures import Headers

from phone_agent.server.mcp_http import UNAUTHORIZED_BODY, BearerGuard, bearer_token

TOKEN = "s3cret-token"


@pytest.mark.parametrize(
    ("header", "token"),
    [
        (None, None),
        ("Bearer abc", "abc"),
        ("bearer   abc  ", "abc"),
        ("  BEARER abc", "abc"),
        ("Basic abc", None),
        ("Bearer", None),
        ("Bearer    ", None),
        ("abc", None),
    ],
)
def test_bearer_token_reads_only_a_bearer_authorization(header: str | None, token: str | None) -> None:
    headers = Headers({"authorization": header} if header is not None else {})
    assert bearer_token(headers) == token


async def behind_guard(authorization: str | None) -> tuple[httpx2.Response, list[str]]:
    reached: list[str] = []

    async def app(scope, receive, send) -> None:
        reached.append(scope["path"])
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    guard = BearerGuard(app, TOKEN)
    headers = {"Authorization": authorization} if authorization is not None else {}
    transport = httpx2.ASGITransport(app=guard)
    async with httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
        response = await asyncio.wait_for(http.post("/mcp", headers=headers), 10)
    return response, reached


async def test_the_right_token_reaches_the_app() -> None:
    response, reached = await behind_guard(f"Bearer {TOKEN}")
    assert response.status_code == 204 and reached == ["/mcp"]


@pytest.mark.parametrize("authorization", [None, "Bearer wrong", f"Basic {TOKEN}", f"Bearer {TOKEN}x"])
async def test_anything_else_is_401_with_a_bearer_challenge_and_never_reaches_the_app(
    authorization: str | None,
) -> None:
    response, reached = await behind_guard(authorization)
    assert response.status_code == 401 and reached == []
    assert response.json() == UNAUTHORIZED_BODY
    assert response.headers["www-authenticate"] == "Bearer"


def test_the_guard_never_shows_its_token() -> None:
    guard = BearerGuard(lambda *_: None, TOKEN)  # type: ignore[arg-type]
    assert TOKEN not in repr(guard) and TOKEN not in str(guard)


async def test_a_quick_call_holds_its_session_as_the_sdk_requests_do() -> None:
    # The SDK's own transport: while a call answered the quick way runs, its idle countdown stops; when
    # the call ends, it starts again from then (a session of plain calls is never reaped as idle).
    import anyio
    from mcp.server.streamable_http import StreamableHTTPServerTransport

    from phone_agent.server.mcp_quick import held_session

    transport = StreamableHTTPServerTransport("s1", idle_timeout=30.0)
    transport.idle_scope = anyio.CancelScope(deadline=anyio.current_time() + 1.0)
    with held_session(transport):
        assert transport.idle_scope.deadline == float("inf")
        with held_session(transport):
            pass
        assert transport.idle_scope.deadline == float("inf")  # the outer call still runs
    assert transport.idle_scope.deadline > anyio.current_time() + 29.0
    with held_session(object()):  # a transport that does not count its requests is left alone
        pass
