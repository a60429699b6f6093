"""Files streamed over ADB sync without holding them whole: ``pull_file(into=…)`` hands each piece to a
writer that sets the pace (a network transfer), ``push_file`` of a ChunkStream pushes chunks as they come;
against the simulated phone, checked with Debian's adb."""

from __future__ import annotations

import asyncio
import hashlib
import os

from phone_agent.adb.device import AdbDevice
from tests.adb_host.test_devloop_tools import adb  # noqa: F401 (Debian's adb on the same phone)

SIZE = 24 * 1024 * 1024 + 777


class SlowChunks:
    """A ChunkStream of ``data`` in 1 MiB chunks, each after a pause (an upload over a network)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.size = len(data)
        self.offset = 0

    async def read(self) -> bytes | None:
        if self.offset >= self.size:
            return None
        await asyncio.sleep(0.01)
        chunk = self.data[self.offset : self.offset + (1 << 20)]
        self.offset += len(chunk)
        return chunk


async def test_a_file_streams_both_ways_at_the_receivers_pace(client, adb, tmp_path):  # noqa: F811
    device = AdbDevice(client, transport="tcp")
    data = os.urandom(SIZE)
    sent: list[tuple[int, int]] = []
    await device.push_file(
        SlowChunks(data), "/sdcard/Download/s.bin", progress=lambda a, b: sent.append((a, b))
    )
    assert sent[-1] == (SIZE, SIZE) and len(sent) >= 20
    await adb("pull", "/sdcard/Download/s.bin", str(tmp_path / "s.bin"))
    assert hashlib.md5((tmp_path / "s.bin").read_bytes()).hexdigest() == hashlib.md5(data).hexdigest()

    got = hashlib.sha256()
    pieces = 0

    async def slow_write(piece) -> None:
        nonlocal pieces
        pieces += 1
        got.update(piece)
        if pieces % 16 == 0:
            await asyncio.sleep(0.02)  # the caller's side is behind now and then

    assert await device.pull_file("/sdcard/Download/s.bin", 1 << 40, into=slow_write) == b""
    assert got.hexdigest() == hashlib.sha256(data).hexdigest()
