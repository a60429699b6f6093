"""What the ADB client needs of a byte pipe to the phone and of an open service stream, and the
optional capabilities each declares (``capabilities``) so the client never probes for them."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class TransportCapabilities:
    """What a transport offers beyond ``send``/``receive``/``close``; each is off when left out.

    ``joins_packets``: ``send`` gets each packet as one chunk instead of header and payload apart.
    ``receive_at_most(size)``: read being told how many bytes the current header or payload needs.
    ``send_nowait(chunk)``: sending never waits (it raises ``ConnectionError`` like ``send``).
    ``deliver(on_bytes, on_end)``: the transport pushes what arrives: it calls ``on_bytes(data)`` from
    its own event for every arrival and ``on_end(None)`` at a clean end or ``on_end(reason)`` on a
    failure, and the client runs no read loop (no trip through the event loop per arrival).
    """

    joins_packets: bool = False
    receive_at_most: Callable[[int], Awaitable[bytes]] | None = None
    send_nowait: Callable[[bytes], None] | None = None
    deliver: Callable[[Callable[[bytes], None], Callable[[str | None], None]], None] | None = None


PLAIN_TRANSPORT = TransportCapabilities()


class AdbTransport(Protocol):
    """A byte pipe to the phone. ``send`` gets each packet header and each payload as its own chunk;
    ``capabilities`` declares what more it offers (``PLAIN_TRANSPORT`` for nothing more)."""

    @property
    def capabilities(self) -> TransportCapabilities: ...

    async def send(self, chunk: bytes) -> None: ...

    async def receive(self) -> bytes:
        """The next bytes from the phone; ``b""`` once the pipe has ended."""
        ...

    async def close(self) -> None: ...


@dataclass(frozen=True)
class StreamCapabilities:
    """What a service stream offers beyond ``read``/``write``/``close``; each is off when left out.

    ``drain(sink)``: hand every chunk to ``sink`` as it arrives until the phone ends the stream (each
    silence bounded like ``read``'s), raising what ``sink`` raised: no task wakes up per chunk.
    """

    drain: Callable[[Callable[[bytes], object]], Awaitable[None]] | None = None


PLAIN_STREAM = StreamCapabilities()


class ServiceStream(Protocol):
    """An open service (``shell,v2,raw:…``, ``exec:…``, ``sync:``) as services.py uses it;
    ``capabilities`` declares what more it offers (``PLAIN_STREAM`` for nothing more)."""

    @property
    def capabilities(self) -> StreamCapabilities: ...

    async def read(self, timeout: float | None = None) -> bytes:
        """The next bytes; ``b""`` once the phone closed the stream."""
        ...

    async def write(self, data: bytes) -> None: ...

    async def close(self) -> None: ...
