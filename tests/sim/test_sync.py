"""The sync: service at the message level: buffering across WRTEs, v1/v2 stat, adbd's FAIL texts."""

from __future__ import annotations

import struct

from phone_agent.adb.packet import AdbPacket, Command


async def test_sync_errors_answer_fail_like_adbd(raw_host):
    local, remote = await raw_host.open("sync:")

    async def request(data: bytes) -> bytes:
        raw_host.send(AdbPacket(Command.WRTE, local, remote, data))
        assert (await raw_host.recv()).command == Command.OKAY
        reply = await raw_host.recv()
        assert reply.command == Command.WRTE
        raw_host.send(AdbPacket(Command.OKAY, local, remote))
        return reply.payload

    # A request split across WRTEs, answered once complete: STAT of a missing path is all zeros.
    raw_host.send(AdbPacket(Command.WRTE, local, remote, b"STAT\x08\x00"))
    assert (await raw_host.recv()).command == Command.OKAY
    assert await request(b"\x00\x00/nothing") == b"STAT" + bytes(12)
    stat2 = await request(b"STA2\x08\x00\x00\x00/nothing")
    assert stat2[:4] == b"STA2" and struct.unpack_from("<I", stat2, 4)[0] == 2  # ENOENT
    reply = await request(b"SEND\x0c\x00\x00\x00/sdcard/nope")
    assert reply[:4] == b"FAIL" and b"missing , in ID_SEND_V1" in reply
    assert (await raw_host.recv()).command == Command.CLSE
