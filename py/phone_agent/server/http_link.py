"""A lean HTTP/1.1 client for ``phone-agent mcp``'s relay to the shared server's ``/mcp`` (``front_relay``).

One call of the stdio front is one POST whose answer is a JSON body or an event stream (``text/event-
stream``: progress, the server's requests, then the answer). An SDK client (httpx, its transport, a
JSON-RPC session on top) costs milliseconds of CPU per call for nothing the relay needs: this module
speaks just enough HTTP/1.1 over asyncio streams — keep-alive connections kept for the next request,
``Content-Length`` and chunked bodies, the event stream's ``data:`` lines handed on as bytes, never
decoded. A kept connection the server has closed meanwhile (its keep-alive ran out) is noticed before
anything was answered on it, and the request is sent once more on a new one.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

CONNECT_S = 10.0
HEAD_S = 30.0  # the answer's status line and headers (the body may take as long as a call does)
MAX_HEAD = 64 * 1024
MAX_KEPT = 8


class HttpLinkError(OSError):
    """The server's answer broke off or is not HTTP/1.1 as expected (or the server cannot be reached)."""


class HttpConnectError(HttpLinkError):
    """Nothing answers on the port: the request never reached a server."""


@dataclass
class HttpAnswer:
    """One answer: its status, headers (lower-case names) and body, read as it comes (``messages``)."""

    status: int
    headers: dict[str, str]
    _reader: asyncio.StreamReader
    _link: HttpLink
    _writer: asyncio.StreamWriter
    _done: bool = False
    _body: list[bytes] = field(default_factory=list)

    @property
    def is_event_stream(self) -> bool:
        return self.headers.get("content-type", "").startswith("text/event-stream")

    async def _chunks(self) -> AsyncIterator[bytes]:
        reader = self._reader
        if "chunked" in self.headers.get("transfer-encoding", ""):
            while True:
                size_line = await reader.readuntil(b"\r\n")
                size = int(size_line.split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while (await reader.readuntil(b"\r\n")) != b"\r\n":  # trailers
                        pass
                    return
                chunk = await reader.readexactly(size + 2)
                yield chunk[:-2]
        elif "content-length" in self.headers:
            left = int(self.headers["content-length"])
            if left:
                yield await reader.readexactly(left)
        else:  # the body ends with the connection
            while chunk := await reader.read(65536):
                yield chunk
            self.headers["connection"] = "close"

    async def messages(self) -> AsyncIterator[bytes]:
        """The body's JSON-RPC messages as bytes: each event's ``data`` of an event stream, else the
        whole body (none for an empty one). Raises HttpLinkError when the body breaks off."""
        try:
            if self.is_event_stream:
                async for data in _event_data(self._chunks()):
                    yield data
            else:
                body = b"".join([chunk async for chunk in self._chunks()])
                if body.strip():
                    yield body
            self._done = True
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
            raise HttpLinkError(f"the answer broke off ({exc or type(exc).__name__})") from None
        finally:
            self.release()

    def release(self) -> None:
        """Hand the connection back to be kept (a whole answer) or close it."""
        if self._writer.is_closing():
            return
        if self._done and self.headers.get("connection", "").lower() != "close":
            self._link.keep(self._reader, self._writer)
        else:
            self._writer.close()


async def _event_data(chunks: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
    """The ``data`` of each event of an event stream (its lines joined), comments and other fields
    skipped."""
    pending = b""
    async for chunk in chunks:
        pending += chunk
        if b"\r" in pending:
            pending = pending.replace(b"\r\n", b"\n")
        *events, pending = pending.split(b"\n\n")
        for event in events:
            lines = [line[5:].removeprefix(b" ") for line in event.split(b"\n") if line.startswith(b"data:")]
            if lines:
                yield b"\n".join(lines)


class HttpLink:
    """Requests to one ``host:port`` over kept-alive connections."""

    def __init__(self, host: str, port: int, headers: dict[str, str]) -> None:
        self.host, self.port = host.strip("[]"), port
        fixed = {"Host": f"{host}:{port}", **headers}
        self._fixed = "".join(f"{name}: {value}\r\n" for name, value in fixed.items())
        self._kept: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    def keep(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if len(self._kept) < MAX_KEPT and not reader.at_eof():
            self._kept.append((reader, writer))
        else:
            writer.close()

    def close(self) -> None:
        for _, writer in self._kept:
            writer.close()
        self._kept.clear()

    async def _connect(self) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        try:
            async with asyncio.timeout(CONNECT_S):
                return await asyncio.open_connection(self.host, self.port, limit=MAX_HEAD)
        except (OSError, TimeoutError) as exc:
            reason = exc or type(exc).__name__
            raise HttpConnectError(f"cannot connect to {self.host}:{self.port} ({reason})") from None

    async def request(
        self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None
    ) -> HttpAnswer:
        """Send one request; its answer once its head arrived (read its body with ``messages``)."""
        extra = "".join(f"{name}: {value}\r\n" for name, value in (headers or {}).items())
        length = f"Content-Length: {len(body)}\r\n" if body or method == "POST" else ""
        head = f"{method} {path} HTTP/1.1\r\n{self._fixed}{extra}{length}\r\n".encode("latin-1")
        while self._kept:  # a kept connection may have been closed by the server meanwhile
            reader, writer = self._kept.pop()
            with contextlib.suppress(HttpLinkError):
                answer = await self._exchange(reader, writer, head + body, fresh=False)
                if answer is not None:
                    return answer
        reader, writer = await self._connect()
        answer = await self._exchange(reader, writer, head + body, fresh=True)
        assert answer is not None
        return answer

    async def _exchange(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, data: bytes, fresh: bool
    ) -> HttpAnswer | None:
        """The answer's head; None when a kept connection turned out closed before any answer."""
        try:
            writer.write(data)
            await writer.drain()
            async with asyncio.timeout(HEAD_S):
                status_line = await reader.readuntil(b"\r\n")
                head = await reader.readuntil(b"\r\n\r\n")
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, TimeoutError) as exc:
            writer.close()
            nothing = isinstance(exc, asyncio.IncompleteReadError | ConnectionError) and not getattr(
                exc, "partial", b""
            )
            if not fresh and nothing:
                return None
            reason = exc or type(exc).__name__
            raise HttpLinkError(f"no answer from {self.host}:{self.port} ({reason})") from None
        parts = status_line.split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
            writer.close()
            raise HttpLinkError(f"{self.host}:{self.port} answered something other than HTTP/1.1")
        headers: dict[str, str] = {}
        for line in head[:-4].decode("latin-1").split("\r\n"):
            name, _, value = line.partition(":")
            if name:
                headers[name.strip().lower()] = value.strip()
        return HttpAnswer(int(parts[1]), headers, reader, self, writer)
