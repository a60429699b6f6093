"""Files streamed over ADB without holding them twice: ``pull_file(into=…)`` hands each piece to a writer
that sets the pace (a network transfer), ``push_file`` of a ChunkStream pushes chunks as they come, and a
large APK goes into an install session on the shell's stdin; against the simulated phone, checked with
Debian's adb."""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
import zipfile

from phone_agent.adb.dev_loop import STREAMED_INSTALL_MIN
from phone_agent.adb.device import AdbDevice
from tests.adb_host.apk_maker import make_apk
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


def big_apk(package: str, padding: int) -> bytes:
    """An APK (manifest only) made large by an incompressible asset."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(make_apk(package))) as small, zipfile.ZipFile(out, "w") as archive:
        for item in small.infolist():
            archive.writestr(item, small.read(item))
        archive.writestr("assets/padding.bin", os.urandom(padding), compress_type=zipfile.ZIP_STORED)
    return out.getvalue()


async def test_a_large_apk_streams_into_an_install_session(client, adb):  # noqa: F811
    device = AdbDevice(client, transport="tcp")
    data = big_apk("com.example.bigapp", STREAMED_INSTALL_MIN + 1024)
    told: list[tuple[int, int]] = []
    await device.install_apk(data, progress=lambda sent, total: told.append((sent, total)))
    assert told[-1] == (len(data), len(data))
    assert "package:com.example.bigapp" in (await adb("shell", "pm list packages")).split()
    assert "phone-agent-" not in await adb("shell", "ls /data/local/tmp")  # no copy was pushed first
    path = (await adb("shell", "pm path com.example.bigapp")).strip().removeprefix("package:")
    assert str(len(data)) in (await adb("shell", f"ls -l {path}")).split()  # the whole APK, installed
