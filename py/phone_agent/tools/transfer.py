"""Streamed transfers: a file's bytes between the MCP client's machine and the phone in bounded chunks.

A call that moves a file of the caller's (``path`` through ``phone-agent mcp``) does not carry its bytes in
one relay frame: the front opens a transfer on the server, and the page's handler gets its end of it in
``CallEnv.transfer`` — a ``TransferSink`` for a download (pull_file, stop_recording: the handler writes
the phone's bytes as they come) or a ``TransferSource`` for an upload (push_file, install_app: it reads
the caller's bytes as the phone takes them). How the chunks travel is the channel's business (the page's
``browser/transfer_http.py``); the handlers here see only these two ports. Pure.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any, Protocol

from ..errors import invalid_argument, transfer_broken

CHUNK_BYTES = 1024 * 1024  # a transfer moves at most this many bytes at a time
DOWNLOAD = "download"
UPLOAD = "upload"


class TransferSink(Protocol):
    """Where a download's bytes go, chunk by chunk (each ≤ CHUNK_BYTES); ``write`` waits while the
    caller's side is behind, so memory stays bounded."""

    direction: str

    async def write(self, data: bytes) -> None: ...


class TransferSource(Protocol):
    """Where an upload's bytes come from: ``size`` bytes in all, ``read`` answers the next chunk, or
    None once they are all read."""

    direction: str
    size: int

    async def read(self) -> bytes | None: ...


def sink_of(env: Any) -> TransferSink | None:
    """The call's download sink, if its channel streams the answer's bytes."""
    transfer = getattr(env, "transfer", None)
    return transfer if transfer is not None and transfer.direction == DOWNLOAD else None


def source_of(env: Any) -> TransferSource | None:
    """The call's upload source, if its channel streams the caller's bytes."""
    transfer = getattr(env, "transfer", None)
    return transfer if transfer is not None and transfer.direction == UPLOAD else None


class Batcher:
    """Gathers small writes (ADB sync's 64 KiB DATA) into CHUNK_BYTES writes to a sink, hashing as they
    pass: ``size`` and ``sha256`` describe everything written."""

    def __init__(self, sink: TransferSink, progress: Callable[[int], None] | None = None) -> None:
        self.sink = sink
        self.progress = progress
        self.size = 0
        self._hash = hashlib.sha256()
        self._pending = bytearray()

    @property
    def sha256(self) -> str:
        return self._hash.hexdigest()

    async def write(self, data: bytes | memoryview) -> None:
        self._hash.update(data)
        self.size += len(data)
        self._pending += data
        while len(self._pending) >= CHUNK_BYTES:
            chunk = bytes(self._pending[:CHUNK_BYTES])
            del self._pending[:CHUNK_BYTES]
            await self.sink.write(chunk)
            if self.progress is not None:
                self.progress(self.size - len(self._pending))

    async def flush(self) -> None:
        if self._pending:
            chunk, self._pending = bytes(self._pending), bytearray()
            await self.sink.write(chunk)
        if self.progress is not None:
            self.progress(self.size)


async def write_all(sink: TransferSink, data: bytes, progress: Callable[[int], None] | None = None) -> None:
    """Send bytes already in memory (a finished recording) through ``sink`` in chunks."""
    view = memoryview(data)
    for offset in range(0, len(view), CHUNK_BYTES):
        await sink.write(bytes(view[offset : offset + CHUNK_BYTES]))
        if progress is not None:
            progress(min(offset + CHUNK_BYTES, len(view)))


class HashingSource:
    """A TransferSource read through: counts and hashes the bytes as they pass, and refuses more (or
    fewer) bytes than it announced."""

    direction = UPLOAD

    def __init__(self, source: TransferSource, tool: str = "push_file") -> None:
        self.source = source
        self.tool = tool
        self.size = source.size
        self.read_bytes = 0
        self._hash = hashlib.sha256()

    @property
    def sha256(self) -> str:
        return self._hash.hexdigest()

    async def read(self) -> bytes | None:
        chunk = await self.source.read()
        if chunk is None:
            if self.read_bytes != self.size:
                why = f"the upload ended after {self.read_bytes} of {self.size} bytes"
                raise transfer_broken(self.tool, why)
            return None
        self.read_bytes += len(chunk)
        if self.read_bytes > self.size:
            why = f"the upload sent more than the {self.size} bytes it announced"
            raise transfer_broken(self.tool, why)
        self._hash.update(chunk)
        return chunk


async def read_whole(
    source: TransferSource, limit: int, tool: str, progress: Callable[[int, int], None] | None = None
) -> bytes:
    """All of an upload's bytes (an APK, whose manifest is read before anything reaches the phone)."""
    if source.size > limit:
        raise invalid_argument(
            tool,
            "path",
            f"is a file of {source.size} bytes, over the limit of {limit}",
            "Send a smaller file.",
        )
    reader = HashingSource(source, tool)
    parts = bytearray()
    while (chunk := await reader.read()) is not None:
        parts += chunk
        if progress is not None:
            progress(len(parts), source.size)
    return bytes(parts)
