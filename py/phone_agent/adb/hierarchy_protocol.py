"""The hierarchy server's protocol (u2.jar, from uiautomator2 3.7.1): HTTP/1.1 over one ADB ``tcp:9008``
stream, ``GET /ping`` answering ``pong`` and JSON-RPC 2.0 at ``POST /jsonrpc/0`` (positional params:
``dumpWindowHierarchy [compressed, maxDepth]`` answers the same XML ``uiautomator dump`` writes,
``waitForIdle [timeoutMs]`` answers whether the screen went idle in time).

Pure: requests are bytes out, ``HttpResponseParser`` takes bytes in and gives the response once it is
whole (Content-Length, chunked, or closed by the server), refusing a body over ``BODY_MAX`` as soon as
it shows (a Content-Length, a chunk, or the bytes so far) with ``AdbOutputTooLarge``. What the server
is and how it starts (its path on the phone, its class, its port, its digests) is here too, so the
client and the simulated phone agree by construction.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from phone_agent.adb.client import AdbOutputTooLarge

JAR_PATH = "/data/local/tmp/u2.jar"
JAR_SHA256 = "87c8ac9505970d42aa5922baa90114808fda6f47f9e5fbd4caa0f621c2c8d30d"
JAR_MD5 = "d4f2cb5299dfd894a40fdde067b56bc9"
SERVER_CLASS = "com.wetest.uia2.Main"
SERVER_PORT = 9008
JSONRPC_PATH = "/jsonrpc/0"
MAX_DEPTH = 500  # uiautomator2's default, 50, drops a deep WebView's nodes unsaid; ui_dump bounds it
# The most the server's answer may be: a real screen's hierarchy is 50-500 kB, a crowded one a few MiB.
BODY_MAX = 16 * 1024 * 1024
ANSWER = "the hierarchy server's answer"
ALREADY_REGISTERED = "already registered"


def start_command(port: int = SERVER_PORT, jar: str = JAR_PATH) -> str:
    """The shell command that runs the server (as the uiautomator2 client starts it)."""
    return f"CLASSPATH={jar} app_process / {SERVER_CLASS} -p {port}"


class HttpProtocolError(Exception):
    """The server's answer is not HTTP/1.1 as expected."""


class RpcError(Exception):
    """A JSON-RPC error answer: ``code`` and the server's ``message`` (and its Java stack in ``data``)."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} (JSON-RPC error {code})")
        self.code = code
        self.message = message
        self.data = data

    @property
    def not_connected(self) -> bool:
        """The server lost its UiAutomation (another user took it, or the system died under it):
        uiautomator2's client restarts the server on these."""
        text = f"{self.message} {self.data or ''}"
        return any(
            mark in text
            for mark in ("UiAutomation not connected", "DeadObjectException", "DeadSystemRuntimeException")
        )


def http_request(method: str, path: str, body: bytes = b"", *, port: int = SERVER_PORT) -> bytes:
    """One HTTP/1.1 request, kept alive (the stream serves the next request too). No compression:
    uiautomator2 asks the same (its server's gzip leaks)."""
    lines = [
        f"{method} {path} HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "User-Agent: phone-agent",
        "Accept-Encoding: identity",
        "Connection: keep-alive",
    ]
    if body or method == "POST":
        lines += ["Content-Type: application/json; charset=utf-8", f"Content-Length: {len(body)}"]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii") + body


def jsonrpc_request(method: str, params: list[Any], request_id: int = 1, *, port: int = SERVER_PORT) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
    return http_request("POST", JSONRPC_PATH, body.encode("utf-8"), port=port)


def jsonrpc_result(body: bytes) -> Any:
    """The ``result`` of a JSON-RPC answer; RpcError for an ``error`` answer, HttpProtocolError when
    the body is not JSON-RPC."""
    try:
        answer = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise HttpProtocolError(f"the hierarchy server's answer is not JSON: {exc}") from None
    if not isinstance(answer, dict):
        raise HttpProtocolError("the hierarchy server's answer is not a JSON-RPC object")
    if "error" in answer:
        error = answer["error"] if isinstance(answer["error"], dict) else {"message": str(answer["error"])}
        raise RpcError(int(error.get("code") or 0), str(error.get("message") or ""), error.get("data"))
    if "result" not in answer:
        raise HttpProtocolError("the hierarchy server's JSON-RPC answer has no result")
    return answer["result"]


@dataclass
class HierarchyHttpResponse:
    status: int
    reason: str
    headers: dict[str, str]
    body: bytes
    keep_alive: bool = True


@dataclass
class HttpResponseParser:
    """Bytes of one response in (``feed``), the response out once whole; ``close()`` when the stream
    ended (a body without length ends there, else the answer was cut)."""

    max_body: int = BODY_MAX  # a longer body is AdbOutputTooLarge, found as soon as it shows
    _buffer: bytearray = field(default_factory=bytearray)
    _head: tuple[int, str, dict[str, str]] | None = None
    _done: HierarchyHttpResponse | None = None
    _chunks: bytearray = field(default_factory=bytearray)

    def feed(self, data: bytes) -> HierarchyHttpResponse | None:
        self._buffer += data
        answer = self._advance()
        if answer is None and self._head is not None and len(self._buffer) > self.max_body + 64:
            raise AdbOutputTooLarge(ANSWER, self.max_body)  # (64: a chunk's size line and its ends)
        return answer

    def close(self) -> HierarchyHttpResponse:
        """The stream ended: the response if it is whole now; HttpProtocolError when it was cut."""
        if self._done is None and self._head is not None:
            status, reason, headers = self._head
            if "content-length" not in headers and "chunked" not in headers.get("transfer-encoding", ""):
                self._done = HierarchyHttpResponse(
                    status, reason, headers, bytes(self._buffer), keep_alive=False
                )
        if self._done is None:
            raise HttpProtocolError("the hierarchy server closed the connection before it answered")
        return self._done

    def _advance(self) -> HierarchyHttpResponse | None:
        if self._done is not None:
            return self._done
        if self._head is None:
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self._buffer) > 64 * 1024:
                    raise HttpProtocolError("the hierarchy server's answer has no end of headers")
                return None
            self._head = _parse_head(bytes(self._buffer[:end]))
            del self._buffer[: end + 4]
        status, reason, headers = self._head
        keep = headers.get("connection", "").lower() != "close"
        if "chunked" in headers.get("transfer-encoding", "").lower():
            body = self._dechunk()
            if body is None:
                return None
            self._done = HierarchyHttpResponse(status, reason, headers, body, keep)
        elif "content-length" in headers:
            try:
                length = int(headers["content-length"])
            except ValueError:
                raise HttpProtocolError(f"bad Content-Length {headers['content-length']!r}") from None
            if length > self.max_body:
                raise AdbOutputTooLarge(ANSWER, self.max_body)
            if len(self._buffer) < length:
                return None
            self._done = HierarchyHttpResponse(status, reason, headers, bytes(self._buffer[:length]), keep)
        elif status in (204, 304) or 100 <= status < 200:
            self._done = HierarchyHttpResponse(status, reason, headers, b"", keep)
        return self._done

    def _dechunk(self) -> bytes | None:
        while True:
            line_end = self._buffer.find(b"\r\n")
            if line_end < 0:
                return None
            try:
                size = int(bytes(self._buffer[:line_end]).split(b";")[0].strip() or b"0", 16)
            except ValueError:
                raise HttpProtocolError("bad chunk size in the hierarchy server's answer") from None
            if len(self._chunks) + size > self.max_body:
                raise AdbOutputTooLarge(ANSWER, self.max_body)
            if size == 0:  # the last chunk, then trailers (usually none) and an empty line
                if self._buffer.find(b"\r\n\r\n", line_end) < 0:
                    return None
                return bytes(self._chunks)
            if len(self._buffer) < line_end + 2 + size + 2:
                return None
            self._chunks += self._buffer[line_end + 2 : line_end + 2 + size]
            del self._buffer[: line_end + 2 + size + 2]


def _parse_head(head: bytes) -> tuple[int, str, dict[str, str]]:
    lines = head.decode("iso-8859-1").split("\r\n")
    parts = lines[0].split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/1.") or not parts[1].isdigit():
        raise HttpProtocolError(f"not an HTTP answer from the hierarchy server: {lines[0][:80]!r}")
    headers = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    return int(parts[1]), parts[2] if len(parts) > 2 else "", headers


# ----- the server's side (the simulated phone speaks it; kept beside the client's so both agree)


@dataclass
class HttpRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes


class HttpRequestParser:
    """Requests in, one at a time, as a keep-alive HTTP/1.1 server reads them."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[HttpRequest]:
        self._buffer += data
        requests = []
        while (end := self._buffer.find(b"\r\n\r\n")) >= 0:
            lines = bytes(self._buffer[:end]).decode("iso-8859-1").split("\r\n")
            headers = {}
            for line in lines[1:]:
                name, sep, value = line.partition(":")
                if sep:
                    headers[name.strip().lower()] = value.strip()
            length = int(headers.get("content-length", "0") or 0)
            if len(self._buffer) < end + 4 + length:
                break
            parts = lines[0].split(" ")
            if len(parts) < 2:
                raise HttpProtocolError(f"not an HTTP request: {lines[0][:80]!r}")
            body = bytes(self._buffer[end + 4 : end + 4 + length])
            del self._buffer[: end + 4 + length]
            requests.append(HttpRequest(parts[0], parts[1], headers, body))
        return requests


def http_response(status: int, body: bytes, content_type: str = "application/json") -> bytes:
    reasons = {200: "OK", 404: "Not Found", 405: "Method Not Allowed", 500: "Internal Server Error"}
    head = (
        f"HTTP/1.1 {status} {reasons.get(status, 'Error')}\r\n"
        f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n\r\n"
    )
    return head.encode("ascii") + body
