"""Several hosts at once: each connection is independent, a stalled one holds up nobody."""

from __future__ import annotations

import asyncio
import os

from phone_agent.adb.packet import AdbPacket, Command
from tests.sim.raw_host import RawHost


async def test_concurrent_connections_transfer_independently(sim, host_key):
    files = {f"/sdcard/f{i}.bin": os.urandom(2 * 1024 * 1024 + i) for i in range(4)}
    for path, data in files.items():
        sim.fs.write_file(path, data)
    hosts = [await RawHost.connect(sim.port) for _ in files]
    await asyncio.gather(*(host.handshake(host_key) for host in hosts))
    # A fifth connection opens a shell that waits for stdin and never gets it, and stops reading.
    stalled = await RawHost.connect(sim.port)
    await stalled.handshake(host_key)
    await stalled.open("shell,v2,raw:cat")
    results = await asyncio.gather(
        *(host.run(f"exec:cat {path}", timeout=20) for host, path in zip(hosts, files, strict=True))
    )
    assert results == list(files.values())
    assert len(sim.connections()) == 5
    for host in [*hosts, stalled]:
        await host.close()


async def test_streams_on_one_connection_are_independent(sim, raw_host):
    # A stream whose peer never answers OKAY does not stop another stream on the same connection.
    sim.fs.write_file("/sdcard/big.bin", os.urandom(3 * 1024 * 1024))
    blocked_local, _ = await raw_host.open("exec:cat /sdcard/big.bin")
    first = await raw_host.recv()
    assert first.command == Command.WRTE and first.arg1 == blocked_local  # and we never OKAY it
    local, remote = await raw_host.open("exec:echo still here")
    while True:
        packet = await raw_host.recv()
        if packet.arg1 != local:
            continue
        if packet.command == Command.WRTE:
            assert packet.payload == b"still here\n"
            raw_host.send(AdbPacket(Command.OKAY, local, remote))
        elif packet.command == Command.CLSE:
            break
