"""The shell protocol of ``shell,v2,…:`` streams: ``u8 id + u32 LE length + data`` packets.

Ids: 0 stdin, 1 stdout, 2 stderr, 3 exit (one byte: the exit code), 4 close stdin, 5 window size.
Packets do not line up with WRTE boundaries, so ``ShellPacketDecoder`` buffers. Pure and usable by
either side (host: encode stdin, decode output; device: the reverse).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum

HEADER = struct.Struct("<BI")


class ShellId(IntEnum):
    STDIN = 0
    STDOUT = 1
    STDERR = 2
    EXIT = 3
    CLOSE_STDIN = 4
    WINDOW_SIZE_CHANGE = 5


class ShellProtocolError(ValueError):
    """Bytes that are not shell-protocol packets."""


@dataclass(frozen=True, slots=True)
class ShellPacket:
    id: int
    data: bytes = b""


def encode_shell_packet(packet_id: int, data: bytes = b"") -> bytes:
    """One packet: id, length, data."""
    return HEADER.pack(packet_id, len(data)) + data


class ShellPacketDecoder:
    """Bytes in, ``ShellPacket`` out; ``max_packet`` bounds a declared length (garbage guard)."""

    def __init__(self, max_packet: int = 64 * 1024 * 1024) -> None:
        self.max_packet = max_packet
        self._buffer = bytearray()

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def receive_data(self, data: bytes | bytearray | memoryview) -> list[ShellPacket]:
        """Feed bytes; returns the packets completed by them."""
        buffer = self._buffer
        buffer += data
        packets = []
        while len(buffer) >= HEADER.size:
            packet_id, length = HEADER.unpack_from(buffer)
            if packet_id > ShellId.WINDOW_SIZE_CHANGE or length > self.max_packet:
                raise ShellProtocolError(
                    f"not a shell-protocol packet (id {packet_id}, length {length}): "
                    "the service does not speak shell v2"
                )
            end = HEADER.size + length
            if len(buffer) < end:
                break
            packets.append(ShellPacket(packet_id, bytes(buffer[HEADER.size : end])))
            del buffer[:end]
        return packets
