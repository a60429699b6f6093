"""The host's incremental packet parser: ``AdbPacketParser``'s behaviour with one copy per payload byte.

A host receives megabytes per second in 1 MiB WRTEs that arrive as many transport chunks. The
generic parser appends every chunk to one buffer and copies each payload out of it (two copies);
this one keeps zero-copy views of the chunks and joins them once per packet. Same rules otherwise:
``max_payload`` bounds ``data_length`` (CNXN and AUTH may always carry 4 KiB), checksums are verified
while ``verify_checksum`` is set, a bad header or checksum raises ``AdbProtocolError`` — or, with
``resync`` (before the handshake), drops bytes up to the next plausible header, and bad packets.
"""

from __future__ import annotations

from phone_agent.adb.packet import (
    HEADER_SIZE,
    MAX_CONNECT_PAYLOAD,
    AdbHeader,
    AdbPacket,
    AdbProtocolError,
    Command,
    checksum,
    command_name,
    find_header,
)


class HostPacketParser:
    """Bytes in, ``AdbPacket`` out; ``receive_data`` returns the packets it completed."""

    def __init__(self, *, max_payload: int, resync: bool = False) -> None:
        self.max_payload = max_payload
        self.verify_checksum = True
        self.resync = resync
        self._buffer = bytearray()  # bytes of a header not complete yet (or being resynced)
        self._header: AdbHeader | None = None
        self._parts: list[memoryview | bytes] = []
        self._missing = 0

    def receive_data(self, data: bytes | bytearray | memoryview) -> list[AdbPacket]:
        if not isinstance(data, bytes):
            data = bytes(data)  # views must stay valid: keep an immutable copy
        view = memoryview(data)
        pos = 0
        packets: list[AdbPacket] = []
        while True:
            if self._header is not None:
                if pos >= len(view):
                    break
                take = min(self._missing, len(view) - pos)
                self._parts.append(view[pos : pos + take])
                pos += take
                self._missing -= take
                if not self._missing:
                    self._finish(packets)
                continue
            # A header: straight from the chunk when it holds one whole, else gathered in the buffer.
            from_buffer = bool(self._buffer) or len(view) - pos < HEADER_SIZE
            if from_buffer:
                need = HEADER_SIZE - len(self._buffer)
                if need > 0:
                    self._buffer += view[pos : pos + need]
                    pos = min(pos + need, len(view))
                    if len(self._buffer) < HEADER_SIZE:
                        break
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
                    break
                data = bytes(self._buffer)
                self._buffer.clear()
                view = memoryview(data)
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
                self._finish(packets)
        return packets

    def receive_eof(self) -> None:
        if self._header is not None or self._buffer:
            raise AdbProtocolError("connection closed in the middle of a message")

    def _finish(self, packets: list[AdbPacket]) -> None:
        header = self._header
        assert header is not None
        parts, self._parts, self._header = self._parts, [], None
        payload = b"".join(parts) if parts else b""
        if self.verify_checksum and checksum(payload) != header.data_check:
            if self.resync:
                return  # before the handshake: a stale packet (e.g. checksum 0 from a newer session)
            raise AdbProtocolError(
                f"{command_name(header.command)} checksum mismatch: header says "
                f"0x{header.data_check:08x}, payload sums to 0x{checksum(payload):08x}"
            )
        command = header.command
        if command in Command._value2member_map_:
            command = Command(command)
        packets.append(AdbPacket(command, header.arg0, header.arg1, payload))

    def _limit(self, command: int) -> int:
        if command in (Command.CNXN, Command.AUTH):
            return max(MAX_CONNECT_PAYLOAD, self.max_payload)
        return self.max_payload
