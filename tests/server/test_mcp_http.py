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
