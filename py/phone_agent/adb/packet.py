"""ADB messages: the 24-byte header codec and a sans-I/O incremental parser.

A message is six little-endian u32 (``command, arg0, arg1, data_length, data_check, magic``) followed
by ``data_length`` payload bytes. ``data_check`` is the byte sum of the payload (protocol.txt says
crc32; adb has always used the sum), and ``magic`` is ``command ^ 0xffffffff``. From protocol version
0x01000001 on, the checksum is sent as 0 and not verified; CNXN and AUTH, exchanged before the
version is known, always carry one.

``AdbPacketParser`` follows the shape of ``websockets``' protocol core: feed it bytes with
``receive_data``, collect packets with ``packets_received``; it never touches a socket or a clock.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum

VERSION_MIN = 0x01000000
VERSION_SKIP_CHECKSUM = 0x01000001
VERSION = VERSION_SKIP_CHECKSUM

MAX_PAYLOAD_V1 = 4 * 1024
MAX_PAYLOAD = 1024 * 1024
# CNXN and AUTH never exceed this, whatever was negotiated (adb.h MAX_PAYLOAD_V1).
MAX_CONNECT_PAYLOAD = MAX_PAYLOAD_V1

HEADER_SIZE = 24
_HEADER = struct.Struct("<6I")


class Command(IntEnum):
    """The message types, as their little-endian ASCII names."""

    SYNC = 0x434E5953
    CNXN = 0x4E584E43
    AUTH = 0x48545541
    OPEN = 0x4E45504F
    OKAY = 0x59414B4F
    CLSE = 0x45534C43
    WRTE = 0x45545257
    STLS = 0x534C5453


class AuthType(IntEnum):
    """``arg0`` of an AUTH message."""

    TOKEN = 1
    SIGNATURE = 2
    RSAPUBLICKEY = 3


class AdbProtocolError(Exception):
    """The peer sent bytes that are not a valid ADB message; the connection cannot continue."""


def checksum(data: bytes | bytearray | memoryview) -> int:
    """The byte sum adb puts in ``data_check``."""
    return sum(data) & 0xFFFFFFFF


def command_name(command: int) -> str:
    """``CNXN`` for a known command, ``0x12345678`` otherwise (for messages and logs)."""
    try:
        return Command(command).name
    except ValueError:
        return f"0x{command:08x}"


@dataclass(frozen=True, slots=True)
class AdbPacket:
    """One ADB message. ``command`` is a ``Command`` when known, a plain int otherwise."""

    command: int
    arg0: int
    arg1: int
    payload: bytes = b""

    def header(self, *, with_checksum: bool = True) -> bytes:
        """The 24-byte header; ``with_checksum=False`` sends 0 in ``data_check`` (version ≥ 0x01000001)."""
        check = checksum(self.payload) if with_checksum and self.payload else 0
        return _HEADER.pack(
            self.command,
            self.arg0 & 0xFFFFFFFF,
            self.arg1 & 0xFFFFFFFF,
            len(self.payload),
            check,
            self.command ^ 0xFFFFFFFF,
        )

    def encode(self, *, with_checksum: bool = True) -> bytes:
        """Header and payload as one byte string."""
        return self.header(with_checksum=with_checksum) + self.payload

    def __repr__(self) -> str:
        shown = self.payload[:32]
        more = "…" if len(self.payload) > 32 else ""
        return (
            f"AdbPacket({command_name(self.command)}, 0x{self.arg0:x}, 0x{self.arg1:x}, "
            f"{len(self.payload)} bytes {shown!r}{more})"
        )


@dataclass(frozen=True, slots=True)
class AdbHeader:
    """A decoded header, before its payload has arrived."""

    command: int
    arg0: int
    arg1: int
    data_length: int
    data_check: int
    magic: int

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview) -> AdbHeader:
        """Decode the first 24 bytes of ``data`` (no validation)."""
        return cls(*_HEADER.unpack_from(data))

    def validate(self, max_payload: int) -> None:
        """Raise ``AdbProtocolError`` on a bad magic or a length over ``max_payload`` (adb's check_header)."""
        if self.magic != self.command ^ 0xFFFFFFFF:
            raise AdbProtocolError(
                f"bad magic 0x{self.magic:08x} for command 0x{self.command:08x}: not an ADB header"
            )
        if self.data_length > max_payload:
            raise AdbProtocolError(
                f"{command_name(self.command)} payload of {self.data_length} bytes exceeds "
                f"the maximum of {max_payload}"
            )


def find_header(data: bytes | bytearray | memoryview, start: int = 0) -> int:
    """Offset of the first plausible header at or after ``start`` (a known command with its magic).

    For a host resyncing after stale bytes from an earlier session. Returns ``len(data)`` when none
    starts in ``data``; keep the last 23 bytes, a header may begin there.
    """
    view = memoryview(data)
    for offset in range(start, len(view) - HEADER_SIZE + 1):
        (command,) = struct.unpack_from("<I", view, offset)
        (magic,) = struct.unpack_from("<I", view, offset + 20)
        if magic == command ^ 0xFFFFFFFF and command in Command._value2member_map_:
            return offset
    return len(view)


class AdbPacketParser:
    """Incremental parser: bytes in, ``AdbPacket`` out, one copy of each payload byte.

    A host receives megabytes per second in 1 MiB WRTEs that arrive as many transport chunks: the
    parser keeps zero-copy views of the chunks and joins them once per packet.

    ``max_payload`` bounds ``data_length`` (set it to the negotiated value after CNXN; CNXN and AUTH
    may always carry 4 KiB); ``verify_checksum`` stays True until both sides are known to speak
    ≥ 0x01000001, as adb's check_data does. A bad header or checksum raises ``AdbProtocolError``; with
    ``resync=True`` (a host before the handshake, after stale bytes from an earlier session) the
    parser instead drops bytes up to the next plausible header, and drops packets whose checksum is
    wrong (e.g. checksum 0 from a newer session).
    """

    def __init__(self, *, max_payload: int = MAX_PAYLOAD, resync: bool = False) -> None:
        self.max_payload = max_payload
        self.verify_checksum = True
        self.resync = resync
        self._buffer = bytearray()  # bytes of a header not complete yet (or being resynced)
        self._header: AdbHeader | None = None
        self._parts: list[memoryview] = []
        self._missing = 0
        self._packets: list[AdbPacket] = []
        self._eof = False

    @property
    def buffered(self) -> int:
        """Bytes received and not yet returned as packets (header included)."""
        if self._header is None:
            return len(self._buffer)
        return HEADER_SIZE + self._header.data_length - self._missing

    @property
    def bytes_expected(self) -> int:
        """How many bytes complete the header or payload being received (what to ask a USB endpoint for)."""
        if self._header is None:
            return max(1, HEADER_SIZE - len(self._buffer))
        return self._missing

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        """Feed bytes; complete packets become available from ``packets_received``."""
        if self._eof:
            raise AdbProtocolError("data received after end of stream")
        if not isinstance(data, bytes):
            data = bytes(data)  # the views kept until a packet completes must stay valid
        view = memoryview(data)
        pos = 0
        while True:
            if self._header is not None:
                if pos >= len(view):
                    return
                take = min(self._missing, len(view) - pos)
                self._parts.append(view[pos : pos + take])
                pos += take
                self._missing -= take
                if not self._missing:
                    self._finish()
                continue
            # A header: straight from the chunk when it holds one whole, else gathered in the buffer.
            from_buffer = bool(self._buffer) or len(view) - pos < HEADER_SIZE
            if from_buffer:
                need = HEADER_SIZE - len(self._buffer)
                if need > 0:
                    self._buffer += view[pos : pos + need]
                    pos = min(pos + need, len(view))
                    if len(self._buffer) < HEADER_SIZE:
                        return
                header = AdbHeader.decode(self._buffer)
            else:
                header = AdbHeader.decode(view[pos : pos + HEADER_SIZE])
            try:
                header.validate(self._limit(header.command))
            except AdbProtocolError:
                if not self.resync:
                    raise
                # Drop bytes up to the next plausible header (keep a possible header's start).
                self._buffer += view[pos:]
                skip = find_header(self._buffer, 1)
                del self._buffer[: min(skip, max(len(self._buffer) - HEADER_SIZE + 1, 1))]
                if len(self._buffer) < HEADER_SIZE:
                    return
                view = memoryview(bytes(self._buffer))
                self._buffer.clear()
                pos = 0
                continue
            if from_buffer:
                self._buffer.clear()
            else:
                pos += HEADER_SIZE
            self._header = header
            self._missing = header.data_length
            self._parts = []
            if not self._missing:
                self._finish()

    def receive_eof(self) -> None:
        """The peer closed. Raises ``AdbProtocolError`` if it closed in the middle of a message."""
        self._eof = True
        if self._header is not None or self._buffer:
            raise AdbProtocolError(f"connection closed in the middle of a message ({self.buffered} bytes)")

    def packets_received(self) -> list[AdbPacket]:
        """The packets completed since the last call."""
        packets, self._packets = self._packets, []
        return packets

    def _finish(self) -> None:
        header = self._header
        assert header is not None
        parts, self._parts, self._header = self._parts, [], None
        payload = b"".join(parts) if parts else b""
        if self.verify_checksum and checksum(payload) != header.data_check:
            if self.resync:
                return  # before the handshake: a stale packet
            raise AdbProtocolError(
                f"{command_name(header.command)} checksum mismatch: header says "
                f"0x{header.data_check:08x}, payload sums to 0x{checksum(payload):08x}"
            )
        command = header.command
        if command in Command._value2member_map_:
            command = Command(command)
        self._packets.append(AdbPacket(command, header.arg0, header.arg1, payload))

    def _limit(self, command: int) -> int:
        if command in (Command.CNXN, Command.AUTH):
            return max(MAX_CONNECT_PAYLOAD, self.max_payload)
        return self.max_payload
