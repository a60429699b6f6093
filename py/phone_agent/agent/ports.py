"""What the agent needs from its host (the page, or CPython in tests): HTTP, images and a clock.

The page implements these with ``fetch`` and ``OffscreenCanvas``; tests implement them with asyncio
sockets and Pillow. Everything else in ``phone_agent.agent`` depends only on these protocols.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

Clock = Callable[[], int]  # milliseconds since the epoch


def wall_clock_ms() -> int:
    return int(time.time() * 1000)


class NetworkError(Exception):
    """The request got no HTTP answer at all: a network failure, or (in a browser) a CORS refusal.

    ``fetch`` cannot tell the two apart, so neither can this error; the message says what was tried.
    """


class HttpResponse(Protocol):
    """An HTTP answer whose body has not been read yet."""

    status: int
    headers: Mapping[str, str]  # lower-case names

    def chunks(self) -> AsyncIterator[bytes]:
        """The body as it arrives (for streamed answers); each chunk non-empty."""
        ...

    async def read(self) -> bytes:
        """The whole body."""
        ...

    async def aclose(self) -> None:
        """Stop reading and release the connection (cancels a body still streaming)."""
        ...


class HttpClient(Protocol):
    """POSTs a body and answers once the status line and headers are in.

    Raises ``NetworkError`` when no HTTP answer arrives (refused, DNS, CORS, TLS) within
    ``timeout_ms``; an HTTP error status is an answer, not an exception.
    """

    async def post(
        self, url: str, body: bytes, headers: Mapping[str, str], timeout_ms: int
    ) -> HttpResponse: ...


@dataclass(frozen=True)
class RgbaImage:
    """Decoded pixels: ``width * height * 4`` bytes, rows top to bottom, RGBA."""

    width: int
    height: int
    data: bytes

    def row(self, y: int) -> bytes:
        stride = self.width * 4
        return self.data[y * stride : (y + 1) * stride]


@dataclass(frozen=True)
class Crop:
    """Rows ``top`` to ``bottom`` (exclusive, source pixels) of one PNG, for stitching."""

    png: bytes
    top: int
    bottom: int


class ImageCodec(Protocol):
    """Image work the host does natively (the page: OffscreenCanvas; tests: Pillow)."""

    async def decode(self, image: bytes, width: int, height: int) -> RgbaImage:
        """A PNG's or JPEG's pixels resampled to ``width`` x ``height`` (either may differ from the
        original; with the height unchanged, rows must stay rows: scroll stitching compares them)."""
        ...

    async def scale(self, png: bytes, width: int, height: int, mime: str, quality: float) -> bytes:
        """The PNG resampled to ``width`` x ``height`` and encoded as ``mime`` (image/png or image/jpeg)."""
        ...

    async def stitch(self, crops: Sequence[Crop], width: int, mime: str, quality: float) -> bytes:
        """The crops stacked top to bottom, each scaled to ``width`` (keeping its aspect), encoded."""
        ...
