"""The stdio front's lean HTTP/1.1 link (``server/http_link.py``) and how its relay tells an answer from
the server's other messages (``server/front_relay.is_answer``), against a real socket server that
answers as uvicorn does (chunked event streams, Content-Length bodies, keep-alive ended by the server)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from phone_agent.server.front_relay import is_answer
from phone_agent.server.http_link import HttpConnectError, HttpLink, HttpLinkError
from tests.support import free_port


@pytest.mark.parametrize(
    ("message", "answer"),
    [
        (b'{"jsonrpc":"2.0","id":3,"result":{"content":[]}}', True),
        (b'{"jsonrpc":"2.0","id":"a\\"b","error":{"code":-1,"message":"x"}}', True),
        (b'{"jsonrpc":"2.0","id":0,"method":"elicitation/create","params":{}}', False),
        (b'{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}', False),
        (b'{"result":{"method":"x"},"id":4,"jsonrpc":"2.0"}', True),  # another key order: parsed
        (b'{"method":"notifications/message","jsonrpc":"2.0"}', False),
    ],
)
def test_an_answer_is_told_from_a_request_or_a_notification(message: bytes, answer: bool) -> None:
    assert is_answer(message) is answer


def _chunked(*parts: bytes) -> bytes:
    return b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in parts) + b"0\r\n\r\n"


EVENTS = _chunked(
    b': ping\r\n\r\nevent: message\r\ndata: {"a":1}\r\n\r\nevent: mess',
    b'age\r\ndata: {"b":\r\ndata: 2}\r\n\r\n',
)
STREAM_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"


async def _server(answers: list[bytes], close_after: int) -> AsyncIterator[tuple[int, list[bytes]]]:
    """Answers each request on a connection with the next of ``answers``; closes a connection after
    ``close_after`` requests (as a keep-alive timeout does)."""
    requests: list[bytes] = []

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for _ in range(close_after):
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except asyncio.IncompleteReadError:  # the client closed its connection
                break
            length = next(
                (
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length")
                ),
                0,
            )
            requests.append(head + await reader.readexactly(length))
            writer.write(answers.pop(0))
            await writer.drain()
        writer.close()

    port = free_port()
    server = await asyncio.start_server(serve, "127.0.0.1", port)
    try:
        yield port, requests
    finally:
        server.close()


async def test_event_streams_and_bodies_come_as_messages_and_a_connection_closed_meanwhile_is_replaced() -> (
    None
):
    json_body = b'{"jsonrpc":"2.0","id":1,"result":{}}'
    answers = [
        STREAM_HEAD + EVENTS,
        b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
        % (len(json_body), json_body),
    ]
    async for port, requests in _server(answers, close_after=2):
        link = HttpLink("127.0.0.1", port, {"Authorization": "Bearer t"})
        first = await link.request("POST", "/mcp", b"{}", {"Mcp-Session-Id": "s"})
        assert [m async for m in first.messages()] == [b'{"a":1}', b'{"b":\n2}']
        accepted = await link.request("POST", "/mcp", b"{}")
        assert accepted.status == 202 and [m async for m in accepted.messages()] == []
        # The server closed that connection after two requests: the third goes on a new one.
        third = await link.request("POST", "/mcp", b'{"x":1}')
        assert [m async for m in third.messages()] == [json_body]
        assert (
            len(requests) == 3
            and b"Authorization: Bearer t" in requests[0]
            and b"Mcp-Session-Id: s" in requests[0]
        )
        assert requests[2].endswith(b'Content-Length: 7\r\n\r\n{"x":1}')
        link.close()


async def test_an_answer_that_breaks_off_is_an_error_and_nothing_listening_is_a_connect_error() -> None:
    cut = STREAM_HEAD + _chunked(b'event: message\r\ndata: {"a":1}\r\n\r\n')[:-5]  # then nothing more
    async for port, _ in _server([cut], close_after=1):
        link = HttpLink("127.0.0.1", port, {})
        answer = await link.request("POST", "/mcp", b"{}")
        got = []
        with pytest.raises(HttpLinkError):
            async for message in answer.messages():
                got.append(message)
        assert got == [b'{"a":1}']
        link.close()
    with pytest.raises(HttpConnectError):
        await HttpLink("127.0.0.1", free_port(), {}).request("GET", "/mcp")
