"""The hierarchy server's protocol, pure: HTTP/1.1 requests out, responses in (lengths, chunks, cut
answers), JSON-RPC results and errors (which of them mean "restart the server")."""

from __future__ import annotations

import json

import pytest

from phone_agent.adb.hierarchy_protocol import (
    HttpProtocolError,
    HttpRequestParser,
    HttpResponseParser,
    RpcError,
    http_request,
    http_response,
    jsonrpc_request,
    jsonrpc_result,
    start_command,
)


def test_the_start_command_is_uiautomator2s():
    assert start_command() == "CLASSPATH=/data/local/tmp/u2.jar app_process / com.wetest.uia2.Main -p 9008"


def test_a_jsonrpc_request_is_one_http_post_the_server_side_reads_back():
    wire = jsonrpc_request("dumpWindowHierarchy", [False, 50], 7)
    assert wire.startswith(b"POST /jsonrpc/0 HTTP/1.1\r\n")
    parser = HttpRequestParser()
    # split anywhere: the parser waits for the whole body
    assert parser.feed(wire[:30]) == []
    (request,) = parser.feed(wire[30:] + http_request("GET", "/ping"))[:1]
    assert request.method == "POST" and request.path == "/jsonrpc/0"
    call = json.loads(request.body)
    assert call == {"jsonrpc": "2.0", "id": 7, "method": "dumpWindowHierarchy", "params": [False, 50]}


def test_a_response_with_a_length_is_whole_only_when_all_of_it_came():
    wire = http_response(200, b"pong", "text/plain")
    parser = HttpResponseParser()
    assert parser.feed(wire[:-1]) is None
    response = parser.feed(wire[-1:])
    assert response is not None and response.status == 200 and response.body == b"pong"


def test_a_chunked_response_is_joined():
    wire = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\npong\r\n3\r\n!!!\r\n0\r\n\r\n"
    parser = HttpResponseParser()
    assert parser.feed(wire[:-2]) is None
    assert parser.feed(wire[-2:]).body == b"pong!!!"  # type: ignore[union-attr]


def test_a_body_without_length_ends_with_the_stream_and_a_cut_answer_is_an_error():
    parser = HttpResponseParser()
    assert parser.feed(b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\npo") is None
    assert parser.feed(b"ng") is None
    assert parser.close().body == b"pong"
    cut = HttpResponseParser()
    cut.feed(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc")
    with pytest.raises(HttpProtocolError, match="closed the connection"):
        cut.close()
    with pytest.raises(HttpProtocolError, match="not an HTTP answer"):
        HttpResponseParser().feed(b"SSH-2.0-OpenSSH\r\n\r\n")


def test_jsonrpc_results_and_errors():
    assert jsonrpc_result(b'{"jsonrpc":"2.0","id":1,"result":true}') is True
    with pytest.raises(RpcError) as refused:
        jsonrpc_result(b'{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}')
    assert refused.value.code == -32601 and not refused.value.not_connected
    with pytest.raises(RpcError) as lost:
        lost_text = "java.lang.IllegalStateException: UiAutomation not connected"
        jsonrpc_result(json.dumps({"error": {"code": -32001, "message": lost_text}}).encode())
    assert lost.value.not_connected
    with pytest.raises(HttpProtocolError):
        jsonrpc_result(b"<html>")
