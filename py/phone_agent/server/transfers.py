"""Streamed transfers: a file of the MCP client's machine moves between ``phone-agent mcp`` and the page in
bounded chunks, through the server, instead of inline in one relay frame.

The front opens a transfer (``POST /api/transfers``, bearer token) and names it in the call's ``_meta``
(``TRANSFER_META``); the relay hands its id to the page with the call (``relay.frames.TransferRef``). Then
  upload   (push_file, install_app): the front ``PUT``s the file's bytes to ``/api/transfers/{id}``; the
           page ``GET``s ``/api/transfers/{id}/chunk`` for each next chunk (204 at the end) and pushes
           it over ADB sync as it comes;
  download (pull_file, stop_recording): the page ``POST``s each chunk to ``/api/transfers/{id}/chunk``
           as ADB sync reads it; the front ``GET``s ``/api/transfers/{id}`` as one streamed body.
The server holds at most ``MAX_BUFFERED`` bytes of a transfer: a side that is ahead waits (each wait
bounded by ``STALL_S``). A transfer ends with its call: an unfinished one is failed, which breaks off the
other side's request, so nobody waits on it. The page's requests carry the transfer's id — 128 random
bits, handed only to the paired page over the relay — and, from a browser, an Origin the relay accepts.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ..relay.frames import TransferRef
from ..tools.transfer import CHUNK_BYTES, DOWNLOAD, UPLOAD

log = logging.getLogger("phone_agent.transfers")

TRANSFERS_PATH = "/api/transfers"
TRANSFER_META = "phone-agent/transfer"  # the _meta key of a tools/call that names its transfer
MAX_BUFFERED = 4 * CHUNK_BYTES
STALL_S = 60.0  # the longest either side waits for the other before the transfer is failed
UNCLAIMED_S = 120.0  # a transfer no call took within this is dropped
MAX_SIZE = 1 << 40
MAX_OPEN = 16


def chunk_path(transfer_id: str) -> str:
    """Where the page gets (upload) or posts (download) a transfer's chunks, on the relay's origin."""
    return f"{TRANSFERS_PATH}/{transfer_id}/chunk"


class TransferFailed(Exception):
    """The transfer broke off (its call ended, a side went away or stalled); the text says why."""


@dataclass
class Transfer:
    """One transfer's bounded buffer between its producer and its consumer."""

    id: str
    direction: str
    size: int | None
    created: float = field(default_factory=time.monotonic)
    claimed: bool = False
    ended: bool = False  # the producer has sent everything
    failure: str | None = None
    moved: int = 0
    _chunks: deque[bytes] = field(default_factory=deque)
    _buffered: int = 0
    _changed: asyncio.Condition = field(default_factory=asyncio.Condition)

    @property
    def over(self) -> bool:
        return self.failure is not None or (self.ended and not self._chunks)

    def _room(self) -> bool:
        return self.failure is not None or self._buffered < MAX_BUFFERED

    def _ready(self) -> bool:
        return self.failure is not None or self.ended or bool(self._chunks)

    def descriptor(self) -> TransferRef:
        """What the page is told of it, with the call: its id, direction, size and where to fetch."""
        return TransferRef(self.id, self.direction, self.size, chunk_path(self.id))

    async def put(self, chunk: bytes) -> None:
        """Add a chunk, waiting (≤ STALL_S) while the buffer is full; TransferFailed once it broke off."""
        async with self._changed:
            try:
                async with asyncio.timeout(STALL_S):
                    await self._changed.wait_for(self._room)
            except TimeoutError:
                self._fail_locked(f"the receiving side took nothing for {STALL_S:g} s")
            if self.failure is not None:
                raise TransferFailed(self.failure)
            if self.ended:
                raise TransferFailed("the transfer has ended")
            self._chunks.append(chunk)
            self._buffered += len(chunk)
            self._changed.notify_all()

    async def get(self) -> bytes | None:
        """The next chunk, None at the end, waiting (≤ STALL_S) for the producer; TransferFailed else."""
        async with self._changed:
            try:
                async with asyncio.timeout(STALL_S):
                    await self._changed.wait_for(self._ready)
            except TimeoutError:
                self._fail_locked(f"the sending side sent nothing for {STALL_S:g} s")
            if self._chunks:
                chunk = self._chunks.popleft()
                self._buffered -= len(chunk)
                self.moved += len(chunk)
                self._changed.notify_all()
                return chunk
            if self.failure is not None:
                raise TransferFailed(self.failure)
            return None

    async def end(self) -> None:
        async with self._changed:
            self.ended = True
            self._changed.notify_all()

    async def fail(self, why: str) -> None:
        async with self._changed:
            self._fail_locked(why)

    def _fail_locked(self, why: str) -> None:
        if self.failure is None and not self.over:
            self.failure = why
            self._chunks.clear()
            self._buffered = 0
        self._changed.notify_all()


class TransferRegistry:
    """The open transfers by id."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._open: dict[str, Transfer] = {}
        self._clock = clock

    def open(self, direction: str, size: int | None) -> Transfer:
        self._drop_unclaimed()
        if len(self._open) >= MAX_OPEN:
            raise ValueError(f"{MAX_OPEN} transfers are open already; wait for one to end")
        transfer = Transfer(secrets.token_urlsafe(16), direction, size)
        self._open[transfer.id] = transfer
        return transfer

    def get(self, transfer_id: str) -> Transfer | None:
        return self._open.get(transfer_id)

    def claim(self, transfer_id: object) -> Transfer | None:
        """The transfer a call names in its _meta (once: a second call cannot take it)."""
        transfer = self._open.get(transfer_id) if isinstance(transfer_id, str) else None
        if transfer is None or transfer.claimed:
            return None
        transfer.claimed = True
        return transfer

    async def finish(self, transfer: Transfer, ok: bool, why: str) -> None:
        """The call ended: a download's producer is done (or failed); an upload no one finished is failed."""
        if ok and transfer.direction == DOWNLOAD:
            await transfer.end()
        elif not transfer.over:
            await transfer.fail(why)
        self._open.pop(transfer.id, None)

    def _drop_unclaimed(self) -> None:
        now = self._clock()
        for transfer in list(self._open.values()):
            if not transfer.claimed and now - transfer.created > UNCLAIMED_S:
                del self._open[transfer.id]


def transfer_routes(
    registry: TransferRegistry,
    allows_bearer: Callable[[Request], bool],
    page_origin_ok: Callable[[str | None], bool],
) -> list[Route]:
    """The front's routes (bearer token) and the page's (the transfer's id, an accepted Origin)."""

    def refused() -> Response:
        return JSONResponse({"error": "unauthorized"}, status_code=401)

    def gone(why: str) -> Response:
        return JSONResponse({"error": why}, status_code=410)

    async def create(request: Request) -> Response:
        if not allows_bearer(request):
            return refused()
        try:
            body = await request.json()
            direction = body.get("direction")
            size = body.get("size")
            if direction not in (UPLOAD, DOWNLOAD):
                raise ValueError("direction must be upload or download")
            sized = isinstance(size, int) and not isinstance(size, bool) and 0 <= size <= MAX_SIZE
            if direction == UPLOAD and not sized:
                raise ValueError("an upload needs its size in bytes")
            transfer = registry.open(direction, size if direction == UPLOAD else None)
        except (ValueError, AttributeError) as exc:
            return JSONResponse({"error": str(exc)}, status_code=400)
        return JSONResponse({"id": transfer.id, "chunkBytes": CHUNK_BYTES})

    async def front_side(request: Request) -> Response:
        if not allows_bearer(request):
            return refused()
        transfer = registry.get(request.path_params["id"])
        if transfer is None:
            return gone("no such transfer")
        if request.method == "PUT":
            return await _receive_upload(request, transfer)
        if transfer.direction != DOWNLOAD:
            return JSONResponse({"error": "not a download"}, status_code=400)
        return StreamingResponse(_stream_download(transfer), media_type="application/octet-stream")

    async def page_side(request: Request) -> Response:
        origin = request.headers.get("origin")
        if not page_origin_ok(origin):
            return JSONResponse({"error": "origin refused"}, status_code=403)
        response = await _page_side(request)
        if origin:  # a page of another origin the relay accepts (--allow-origin) reads the answer too
            response.headers["Access-Control-Allow-Origin"] = origin
            response.headers["Vary"] = "Origin"
        return response

    async def _page_side(request: Request) -> Response:
        transfer = registry.get(request.path_params["id"])
        if transfer is None or not transfer.claimed:
            return gone("no such transfer")
        try:
            if request.method == "GET":  # the next chunk of an upload
                chunk = await transfer.get() if transfer.direction == UPLOAD else None
                if chunk is None:
                    return Response(status_code=204)
                return Response(chunk, media_type="application/octet-stream")
            if transfer.direction != DOWNLOAD:
                return JSONResponse({"error": "not a download"}, status_code=400)
            chunk = await _read_bounded(request, CHUNK_BYTES)
            if chunk is None:
                return JSONResponse({"error": f"a chunk holds at most {CHUNK_BYTES} bytes"}, status_code=413)
            await transfer.put(chunk)
            return Response(status_code=204)
        except TransferFailed as exc:
            return gone(str(exc))

    return [
        Route(TRANSFERS_PATH, create, methods=["POST"]),
        Route(TRANSFERS_PATH + "/{id}", front_side, methods=["GET", "PUT"]),
        Route(TRANSFERS_PATH + "/{id}/chunk", page_side, methods=["GET", "POST"]),
    ]


async def _read_bounded(request: Request, limit: int) -> bytes | None:
    parts = bytearray()
    async for piece in request.stream():
        parts += piece
        if len(parts) > limit:
            return None
    return bytes(parts)


async def _receive_upload(request: Request, transfer: Transfer) -> Response:
    """The front's PUT: the file's bytes, re-cut into chunks, into the transfer as the page takes them."""
    if transfer.direction != UPLOAD:
        return JSONResponse({"error": "not an upload"}, status_code=400)
    pending = bytearray()
    received = 0
    try:
        async for piece in request.stream():
            received += len(piece)
            if transfer.size is not None and received > transfer.size:
                await transfer.fail(f"the file sent more than its {transfer.size} bytes")
                return JSONResponse({"error": "more bytes than announced"}, status_code=400)
            pending += piece
            while len(pending) >= CHUNK_BYTES:
                chunk = bytes(pending[:CHUNK_BYTES])
                del pending[:CHUNK_BYTES]
                await transfer.put(chunk)
        if pending:
            await transfer.put(bytes(pending))
        if transfer.size is not None and received != transfer.size:
            await transfer.fail(f"the file ended after {received} of {transfer.size} bytes")
            return JSONResponse({"error": "fewer bytes than announced"}, status_code=400)
        await transfer.end()
    except TransferFailed as exc:
        return JSONResponse({"error": str(exc)}, status_code=410)
    except Exception as exc:  # the front went away mid-body
        await transfer.fail(f"phone-agent mcp stopped sending the file ({exc or type(exc).__name__})")
        raise
    return Response(status_code=204)


async def _stream_download(transfer: Transfer) -> AsyncIterator[bytes]:
    finished = False
    try:
        while (chunk := await transfer.get()) is not None:
            yield chunk
        finished = True
    except TransferFailed as exc:
        log.info("a download broke off: %s", exc)
        raise
    finally:
        if not finished:  # the front went away (or the transfer failed): the page stops sending
            await transfer.fail("phone-agent mcp stopped receiving the file")
