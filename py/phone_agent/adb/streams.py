"""ADB streams and their flow control: ids, OPEN/OKAY/WRTE/CLSE, budgets and acknowledgement.

``Streams`` is the part of an ``AdbConnection`` that multiplexes services once the handshake is
done, as Tango's ``AdbPacketDispatcher`` is apart from its authenticator. It knows nothing of
sockets or of the handshake: the connection hands it each stream packet, gives it a way to send a
packet, to report an event (``events.py``) and to fail the connection, and tells it what the
handshake agreed (``delayed_ack`` and ``max_payload``).

Streams: OPEN(local, window) → OKAY(remote, local) or CLSE(0, local). Without delayed ack one WRTE is
in flight per stream until the peer's OKAY. With ``delayed_ack`` listed by both sides, OPEN's arg1 is
the opener's receive window, the OKAY answering OPEN carries the other's window as an int32, and
every OKAY then carries an int32 of bytes consumed, added to the sender's budget (which may go
negative by one packet), as AOSP's sockets.cpp does. Every received WRTE is answered with OKAY once
the application has taken it (``acknowledge``), which is how a slow reader pushes back; a peer that
sends far beyond that loses the stream. CLSE(any, local) closes a stream whether or not it was open
yet — arg1 names it.
"""

from __future__ import annotations

import struct
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import NoReturn

from phone_agent.adb.events import (
    Event,
    PacketIgnored,
    StreamClosed,
    StreamData,
    StreamOpened,
    StreamRequested,
)
from phone_agent.adb.packet import MAX_PAYLOAD, AdbPacket, Command

__all__ = ["DELAYED_ACK_WINDOW", "MAX_UNACKED_WRITES", "OutgoingBytes", "StreamState", "Streams"]

# AOSP's INITIAL_DELAYED_ACK_BYTES: the receive window each side announces (OPEN's arg1, the int32
# of the OKAY answering OPEN).
DELAYED_ACK_WINDOW = 32 * 1024 * 1024
# Without delayed ack: WRTEs a peer may send on one stream without our OKAY before we close it.
MAX_UNACKED_WRITES = 16
_INT32 = struct.Struct("<i")
_UINT32 = struct.Struct("<I")


class OutgoingBytes:
    """A stream's unsent bytes as a queue of immutable pieces: ``take(n)`` slices a WRTE's payload
    without copying when one piece holds it (a 32 MiB write leaves as 1 MiB views of itself)."""

    __slots__ = ("_pieces", "_size")

    def __init__(self) -> None:
        self._pieces: deque[bytes | memoryview] = deque()
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def append(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        # The caller may reuse a mutable buffer once write() returns: keep a copy of those only.
        piece = memoryview(data) if isinstance(data, bytes) else memoryview(bytes(data))
        self._pieces.append(piece)
        self._size += len(piece)

    def take(self, limit: int) -> bytes | memoryview:
        """Up to ``limit`` bytes from the front."""
        first = self._pieces[0]
        if len(first) > limit:
            self._pieces[0] = first[limit:]
            chunk: bytes | memoryview = first[:limit]
        elif len(first) == limit or len(self._pieces) == 1:
            chunk = self._pieces.popleft()
        else:  # small pieces: join up to a full payload (one copy of small writes only)
            parts: list[bytes | memoryview] = []
            room = limit
            while self._pieces and room:
                piece = self._pieces[0]
                if len(piece) > room:
                    parts.append(piece[:room])
                    self._pieces[0] = piece[room:]
                    room = 0
                else:
                    parts.append(self._pieces.popleft())
                    room -= len(piece)
            chunk = b"".join(parts)
        self._size -= len(chunk)
        return chunk

    def clear(self) -> None:
        self._pieces.clear()
        self._size = 0


class StreamState(Enum):
    OPENING = "opening"
    OPEN = "open"


@dataclass
class _Stream:
    local_id: int
    service: str
    state: StreamState = StreamState.OPENING
    remote_id: int = 0
    # Written and not yet sent: immutable pieces, sliced without copying into WRTE payloads.
    outgoing: OutgoingBytes = field(default_factory=lambda: OutgoingBytes())
    # Without delayed ack: may we send the next WRTE (our last one was answered)?
    ready: bool = True
    # With delayed ack: the send budget (bytes the peer will still take), may go negative.
    budget: int = 0
    # Sizes of received WRTEs the application has not acknowledged yet, oldest first.
    unacked: deque[int] = field(default_factory=deque)
    unacked_bytes: int = 0
    partial_ack: int = 0
    close_when_flushed: bool = False


class Streams:
    """The streams of one connection, from one side (``device`` or host).

    ``send`` queues a packet, ``emit`` reports an event, ``fail`` ends the connection with a reason
    (and raises). ``delayed_ack`` and ``max_payload`` are what the handshake agreed: the connection
    sets them when it goes online, before any stream exists.
    """

    def __init__(
        self,
        *,
        device: bool,
        send: Callable[[AdbPacket], None],
        emit: Callable[[Event], None],
        fail: Callable[[str], NoReturn],
    ) -> None:
        self.device = device
        self.delayed_ack = False
        self.max_payload = MAX_PAYLOAD
        self._send = send
        self._emit = emit
        self._fail = fail
        self._streams: dict[int, _Stream] = {}
        self._requests: dict[int, tuple[str, int]] = {}  # device: remote id → (service, window)
        self._next_id = 1

    # ----- what is open ---------------------------------------------------------------------------

    def ids(self) -> list[int]:
        return list(self._streams)

    def services(self) -> list[str]:
        return [stream.service for stream in self._streams.values()]

    def pending_output(self, local_id: int) -> int:
        """Bytes written to ``local_id`` and not yet sent as WRTEs (0 for a gone stream)."""
        stream = self._streams.get(local_id)
        return len(stream.outgoing) if stream else 0

    def awaiting_ack(self, local_id: int) -> bool:
        """Without delayed ack: our last WRTE on ``local_id`` has not been answered yet."""
        stream = self._streams.get(local_id)
        return stream is not None and not self.delayed_ack and not stream.ready

    def is_open(self, local_id: int) -> bool:
        stream = self._streams.get(local_id)
        return stream is not None and stream.state is StreamState.OPEN

    # ----- what the application does ----------------------------------------------------------------

    def open(self, service: str) -> int:
        """(Host) queue OPEN for ``service``; its local id."""
        local_id = self._new_id()
        window = DELAYED_ACK_WINDOW if self.delayed_ack else 0
        self._streams[local_id] = _Stream(local_id, service)
        self._send(AdbPacket(Command.OPEN, local_id, window, service.encode() + b"\x00"))
        return local_id

    def accept(self, remote_id: int) -> int | None:
        """(Device) serve the stream ``StreamRequested`` announced; its local id (None if it went)."""
        request = self._requests.pop(remote_id, None)
        if request is None:
            return None
        service, window = request
        local_id = self._new_id()
        stream = _Stream(local_id, service, StreamState.OPEN, remote_id, budget=window)
        self._streams[local_id] = stream
        credit = _UINT32.pack(DELAYED_ACK_WINDOW) if self.delayed_ack else b""
        self._send(AdbPacket(Command.OKAY, local_id, remote_id, credit))
        return local_id

    def forget_request(self, remote_id: int) -> None:
        """(Device) drop a request without answering it."""
        self._requests.pop(remote_id, None)

    def refuse(self, remote_id: int) -> None:
        """(Device) there is no such service: CLSE(0, remote)."""
        self._requests.pop(remote_id, None)
        self._send(AdbPacket(Command.CLSE, 0, remote_id))

    def write(self, local_id: int, data: bytes | bytearray | memoryview) -> bool:
        """Queue ``data`` on a stream (False when it is closed or closing); it leaves as WRTEs as flow
        control allows."""
        stream = self._streams.get(local_id)
        if stream is None or stream.close_when_flushed:
            return False
        stream.outgoing.append(data)
        self._pump(stream)
        return True

    def acknowledge(self, local_id: int, size: int) -> None:
        """The application took ``size`` bytes of this stream's data: send the OKAYs they earn."""
        stream = self._streams.get(local_id)
        if stream is None or stream.state is not StreamState.OPEN or size <= 0:
            return
        stream.unacked_bytes = max(0, stream.unacked_bytes - size)
        if self.delayed_ack:
            self._send(AdbPacket(Command.OKAY, local_id, stream.remote_id, _INT32.pack(size)))
            return
        stream.partial_ack += size
        while stream.unacked and stream.partial_ack >= stream.unacked[0]:
            stream.partial_ack -= stream.unacked.popleft()
            self._send(AdbPacket(Command.OKAY, local_id, stream.remote_id))
        if not stream.unacked:
            stream.partial_ack = 0

    def close(self, local_id: int, *, discard: bool = False) -> None:
        """Close a stream from our side once what was written has been sent; ``discard`` drops what
        has not been sent yet and closes at once."""
        stream = self._streams.get(local_id)
        if stream is None:
            return
        if discard:
            stream.outgoing.clear()
        stream.close_when_flushed = True
        if stream.state is StreamState.OPEN and not stream.outgoing:
            self._send_close(stream)

    def close_all(self) -> None:
        """The connection went: every stream is reported closed, nothing is sent."""
        for stream in list(self._streams.values()):
            self._emit(StreamClosed(stream.local_id, refused=stream.state is StreamState.OPENING))
        self._streams.clear()

    def reset(self) -> None:
        """(Device) the session starts over: every stream and request is gone."""
        self.close_all()
        self._requests.clear()

    # ----- what the peer sends ------------------------------------------------------------------------

    def on_open(self, packet: AdbPacket) -> None:
        remote_id = packet.arg0
        if remote_id == 0:
            self._ignore(packet, "OPEN with local id 0")
            return
        if self.delayed_ack != bool(packet.arg1):
            # arg1 is the host's delayed-ack window: non-zero exactly when both sides list
            # delayed_ack; adbd refuses the OPEN otherwise.
            self._send(AdbPacket(Command.CLSE, 0, remote_id))
            return
        service = packet.payload.split(b"\x00", 1)[0].decode("utf-8", "replace")
        self._requests[remote_id] = (service, packet.arg1 if self.delayed_ack else 0)
        self._emit(StreamRequested(remote_id, service))

    def on_okay(self, packet: AdbPacket) -> None:
        device = self.device
        if device and (packet.arg0 == 0 or packet.arg1 == 0):
            self._ignore(packet, "OKAY with a zero id")
            return
        stream = self._stream_for(packet)
        if stream is None:
            # An OKAY for a stream we do not have: tell the peer to close its end.
            self._send(AdbPacket(Command.CLSE, packet.arg1 if device else 0, packet.arg0))
            return
        credit = 0
        if len(packet.payload) != (_INT32.size if self.delayed_ack else 0):
            if not device and self.delayed_ack:
                self._fail(
                    f"OKAY without its delayed-ack int32 ({len(packet.payload)} bytes) on {stream.service}"
                )
            if device:
                # adbd ignores an OKAY whose payload does not match its delayed-ack mode.
                self._ignore(packet, f"OKAY with a {len(packet.payload)}-byte payload")
                return
        elif self.delayed_ack:
            (credit,) = _INT32.unpack(packet.payload)
        if stream.state is StreamState.OPENING:
            if packet.arg0 == 0:
                self._ignore(packet, "OKAY(0, id) for a stream being opened")
                return
            stream.remote_id = packet.arg0
            stream.state = StreamState.OPEN
            stream.budget = credit
            self._emit(StreamOpened(stream.local_id))
            if stream.close_when_flushed and not stream.outgoing:
                self._send_close(stream)
                return
        elif self.delayed_ack:
            stream.budget += credit
        else:
            stream.ready = True
        self._pump(stream)

    def on_write(self, packet: AdbPacket) -> None:
        stream = self._stream_for(packet)
        if stream is None:
            if self.device and packet.arg0 != 0:
                # adbd drops such a WRTE silently; we also tell the host its stream has no peer here,
                # so a confused host learns it at once instead of waiting for an OKAY (harmless to a
                # correct host: it ignores a CLSE for a socket it has already closed).
                self._send(AdbPacket(Command.CLSE, 0, packet.arg0))
            else:
                self._ignore(packet, "WRTE for no open stream")
            return
        if stream.state is not StreamState.OPEN or not packet.payload:
            self._ignore(packet, "WRTE before OKAY" if packet.payload else "empty WRTE")
            return
        size = len(packet.payload)
        stream.unacked.append(size)
        stream.unacked_bytes += size
        if (
            # A sender's budget may go negative by one packet (AOSP's sockets.cpp): allow that much.
            stream.unacked_bytes > DELAYED_ACK_WINDOW + self.max_payload
            if self.delayed_ack
            else len(stream.unacked) > MAX_UNACKED_WRITES
        ):
            self._ignore(packet, f"{stream.service} ignores flow control: stream closed")
            self._emit(StreamClosed(stream.local_id, refused=False))
            self._send_close(stream)
            return
        if self.delayed_ack:
            stream.unacked.clear()  # only the byte count matters
        self._emit(StreamData(stream.local_id, packet.payload))

    def on_close(self, packet: AdbPacket) -> None:
        stream = self._streams.get(packet.arg1)  # CLSE(0, id) closes too: match on arg1 only
        if stream is None or (stream.state is StreamState.OPEN and packet.arg0 not in (0, stream.remote_id)):
            self._ignore(packet, "CLSE for no such stream")
            return
        if self.device:
            # adbd answers a CLSE with its own (hosts such as adb-shell wait for it).
            self._send_close(stream)
        else:
            del self._streams[stream.local_id]
        self._emit(StreamClosed(stream.local_id, refused=stream.state is StreamState.OPENING))

    # ----- internals --------------------------------------------------------------------------------

    def _new_id(self) -> int:
        local_id = self._next_id
        self._next_id = self._next_id % 0x7FFFFFFF + 1
        return local_id

    def _ignore(self, packet: AdbPacket, reason: str) -> None:
        self._emit(PacketIgnored(packet.command, packet.arg0, packet.arg1, reason))

    def _stream_for(self, packet: AdbPacket) -> _Stream | None:
        stream = self._streams.get(packet.arg1)
        if stream is None:
            return None
        if stream.state is StreamState.OPEN and packet.arg0 not in (0, stream.remote_id):
            return None
        return stream

    def _pump(self, stream: _Stream) -> None:
        if stream.state is not StreamState.OPEN:
            return
        limit = self.max_payload
        outgoing = stream.outgoing
        delayed = self.delayed_ack
        while outgoing:
            if delayed:
                if stream.budget <= 0:
                    break
            elif not stream.ready:
                break
            chunk = outgoing.take(limit)
            self._send(AdbPacket(Command.WRTE, stream.local_id, stream.remote_id, chunk))
            if delayed:
                stream.budget -= len(chunk)
            else:
                stream.ready = False
        if not outgoing and stream.close_when_flushed:
            self._send_close(stream)

    def _send_close(self, stream: _Stream) -> None:
        if self._streams.pop(stream.local_id, None) is not None:
            self._send(AdbPacket(Command.CLSE, stream.local_id, stream.remote_id))
