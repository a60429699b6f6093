"""A CPython ``HttpClient`` for the tests: HTTP/1.1 POST over asyncio streams (no TLS).

Reads bodies framed by Content-Length, chunked transfer coding, or the connection's close. A refused
or unreachable server raises ``NetworkError``, as ``fetch`` does in the page.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from urllib.parse import urlsplit

from phone_agent.agent.ports import NetworkError


class AsyncioResponse:
    def __init__(self, status: int, headers: dict[str, str], reader: asyncio.StreamReader, writer) -> None:
        self.status = status
        self.headers = headers
        self._reader = reader
        self._writer = writer

    async def chunks(self) -> AsyncIterator[bytes]:
        try:
            if "chunked" in self.headers.get("transfer-encoding", ""):
                while True:
                    size_line = await self._reader.readline()
                    size = int(size_line.split(b";")[0].strip() or b"0", 16)
                    if size == 0:
                        return
                    data = await self._reader.readexactly(size)
                    await self._reader.readexactly(2)
                    yield data
            elif "content-length" in self.headers:
                remaining = int(self.headers["content-length"])
                while remaining > 0:
                    data = await self._reader.read(min(remaining, 65536))
                    if not data:
                        raise NetworkError("the connection closed before the whole body arrived")
                    remaining -= len(data)
                    yield data
            else:
                while data := await self._reader.read(65536):
                    yield data
        except (ConnectionError, asyncio.IncompleteReadError) as exc:
            raise NetworkError(f"the connection broke: {exc}") from None

    async def read(self) -> bytes:
        return b"".join([chunk async for chunk in self.chunks()])

    async def aclose(self) -> None:
        self._writer.close()
        try:
            await asyncio.wait_for(self._writer.wait_closed(), 1)
        except (TimeoutError, ConnectionError):
            pass


class AsyncioHttpClient:
    """Plain-HTTP POST; records the requests' headers so tests can check what was sent."""

    def __init__(self) -> None:
        self.sent_headers: list[dict[str, str]] = []

    async def post(
        self, url: str, body: bytes, headers: Mapping[str, str], timeout_ms: int
    ) -> AsyncioResponse:
        parts = urlsplit(url)
        if parts.scheme != "http":
            raise NetworkError(f"only http:// in tests, not {url}")
        host, port = parts.hostname or "127.0.0.1", parts.port or 80
        self.sent_headers.append(dict(headers))
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), timeout_ms / 1000)
        except (OSError, TimeoutError) as exc:
            raise NetworkError(f"TypeError: Failed to fetch ({exc})") from None
        path = parts.path + (f"?{parts.query}" if parts.query else "")
        head = [f"POST {path} HTTP/1.1", f"Host: {host}:{port}", f"Content-Length: {len(body)}"]
        head += [f"{name}: {value}" for name, value in headers.items()]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode() + body)
        try:
            await writer.drain()
            status_line = await asyncio.wait_for(reader.readline(), timeout_ms / 1000)
            if not status_line:
                raise NetworkError("TypeError: Failed to fetch (empty reply)")
            status = int(status_line.split()[1])
            response_headers: dict[str, str] = {}
            while True:
                line = await asyncio.wait_for(reader.readline(), timeout_ms / 1000)
                if line in (b"\r\n", b"\n", b""):
                    break
                name, _, value = line.decode("latin-1").partition(":")
                response_headers[name.strip().lower()] = value.strip()
        except (ConnectionError, TimeoutError) as exc:
            writer.close()
            raise NetworkError(f"TypeError: Failed to fetch ({exc!r})") from None
        return AsyncioResponse(status, response_headers, reader, writer)
