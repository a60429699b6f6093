"""A minimal ADB host over a raw socket, for protocol and fuzz tests of the simulated phone."""

from __future__ import annotations

import asyncio
import contextlib

from phone_agent.adb.keys import AdbPrivateKey
from phone_agent.adb.packet import VERSION, AdbPacket, AdbPacketParser, AuthType, Command


class RawHost:
    """A minimal ADB host over a raw socket, for protocol and fuzz tests."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.parser = AdbPacketParser()
        self.pending: list[AdbPacket] = []
        self.next_id = 100
        self.checksum = True

    @classmethod
    async def connect(cls, port: int) -> RawHost:
        reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", port), 5)
        return cls(reader, writer)

    def send(self, packet: AdbPacket) -> None:
        self.writer.write(packet.encode(with_checksum=self.checksum))

    def send_raw(self, data: bytes) -> None:
        self.writer.write(data)

    async def recv(self, timeout: float = 5.0) -> AdbPacket:
        """The next packet; raises EOFError when the sim closes the connection."""
        async with asyncio.timeout(timeout):
            while not self.pending:
                data = await self.reader.read(1 << 20)
                if not data:
                    raise EOFError("connection closed by the sim")
                self.parser.receive_data(data)
                self.pending += self.parser.packets_received()
        return self.pending.pop(0)

    async def silent(self, timeout: float = 0.5) -> bool:
        """True when the sim sends nothing for ``timeout`` seconds (and keeps the connection open)."""
        try:
            packet = await self.recv(timeout)
        except TimeoutError:
            return True
        except EOFError:
            return False
        self.pending.insert(0, packet)
        return False

    async def closed(self, timeout: float = 5.0) -> bool:
        """True once the sim has closed the connection (packets before that are discarded)."""
        try:
            while True:
                await self.recv(timeout)
        except EOFError:
            return True
        except TimeoutError:
            return False

    async def handshake(
        self,
        key: AdbPrivateKey | None,
        *,
        version: int = VERSION,
        max_payload: int = 1 << 20,
        features: str = "shell_v2,cmd",
    ) -> AdbPacket:
        self.send(AdbPacket(Command.CNXN, version, max_payload, f"host::features={features}\x00".encode()))
        signed = False
        while True:
            packet = await self.recv()
            if packet.command == Command.AUTH and packet.arg0 == AuthType.TOKEN:
                assert key is not None, "the sim asks for authentication"
                if signed:  # our signature was refused: offer the public key, as adb does
                    self.send(
                        AdbPacket(Command.AUTH, AuthType.RSAPUBLICKEY, 0, key.public_key("t@h").encode())
                    )
                else:
                    self.send(AdbPacket(Command.AUTH, AuthType.SIGNATURE, 0, key.sign(packet.payload)))
                    signed = True
            elif packet.command == Command.CNXN:
                self.checksum = min(version, packet.arg0) < 0x01000001
                self.parser.verify_checksum = self.checksum
                return packet

    async def open(self, service: str) -> tuple[int, int]:
        """OPEN ``service``; returns (our id, the sim's id)."""
        self.next_id += 1
        local = self.next_id
        self.send(AdbPacket(Command.OPEN, local, 0, service.encode() + b"\x00"))
        packet = await self.recv()
        assert packet.command == Command.OKAY and packet.arg1 == local, packet
        return local, packet.arg0

    async def run(self, service: str, timeout: float = 10.0) -> bytes:
        """OPEN a service and collect what it writes until CLSE, answering each WRTE with OKAY."""
        local, remote = await self.open(service)
        out = bytearray()
        async with asyncio.timeout(timeout):
            while True:
                packet = await self.recv()
                if packet.command == Command.WRTE and packet.arg1 == local:
                    out += packet.payload
                    self.send(AdbPacket(Command.OKAY, local, remote))
                elif packet.command == Command.CLSE and packet.arg1 == local:
                    return bytes(out)

    async def close(self) -> None:
        self.writer.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.writer.wait_closed(), 2)
