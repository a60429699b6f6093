"""delayed_ack, as adbd's sockets.cpp does it: byte budgets instead of one WRTE in flight.

Debian's adb 29 does not know the feature (newer hosts use it only with ADB_BURST_MODE=1), so
these tests drive it with the raw host.
"""

from __future__ import annotations

import os
import struct

import pytest

from phone_agent.adb.packet import AdbPacket, Command
from phone_agent.adb.shell_protocol import ShellPacketDecoder
from phone_agent.sim.services import shell_packet
from tests.sim.raw_host import RawHost

WINDOW = struct.pack("<I", 32 * 1024 * 1024)


@pytest.fixture
async def burst_host(sim, host_key):
    host = await RawHost.connect(sim.port)
    connected = await host.handshake(host_key, max_payload=4096, features="shell_v2,delayed_ack")
    assert b"delayed_ack" in connected.payload
    yield host
    await host.close()


async def no_packet(host: RawHost) -> bool:
    try:
        await host.recv(timeout=0.3)
    except TimeoutError:
        return True
    return False


async def test_open_needs_a_window_and_okay_carries_ours(burst_host):
    burst_host.send(AdbPacket(Command.OPEN, 5, 0, b"exec:echo hi\x00"))
    assert await burst_host.recv() == AdbPacket(Command.CLSE, 0, 5)
    burst_host.send(AdbPacket(Command.OPEN, 6, 1 << 20, b"exec:echo hi\x00"))
    okay = await burst_host.recv()
    assert (okay.command, okay.arg1, okay.payload) == (Command.OKAY, 6, WINDOW)
    data = await burst_host.recv()
    assert (data.command, data.payload) == (Command.WRTE, b"hi\n")


async def test_writes_spend_the_budget_and_okays_refill_it(sim, burst_host):
    content = os.urandom(64 * 1024)
    sim.fs.write_file("/sdcard/big.bin", content)
    burst_host.send(AdbPacket(Command.OPEN, 7, 10000, b"exec:cat /sdcard/big.bin\x00"))
    okay = await burst_host.recv()
    remote = okay.arg0
    received = bytearray()
    for _ in range(3):  # 10000 → 5904 → 1808 → -2288: three WRTEs without any OKAY
        packet = await burst_host.recv()
        assert packet.command == Command.WRTE and len(packet.payload) == 4096
        received += packet.payload
    assert await no_packet(burst_host)
    burst_host.send(AdbPacket(Command.OKAY, 7, remote))  # no payload: a mismatch adbd ignores
    assert await no_packet(burst_host)
    burst_host.send(AdbPacket(Command.OKAY, 7, remote, struct.pack("<i", 2288 + 1)))  # budget 1: one more
    received += (await burst_host.recv()).payload
    assert await no_packet(burst_host)
    burst_host.send(AdbPacket(Command.OKAY, 7, remote, struct.pack("<i", 1 << 20)))
    while True:
        packet = await burst_host.recv()
        if packet.command == Command.CLSE:
            break
        received += packet.payload
    assert bytes(received) == content


async def test_received_writes_are_acknowledged_with_their_size(burst_host):
    burst_host.send(AdbPacket(Command.OPEN, 8, 1 << 20, b"shell,v2,raw:cat\x00"))
    remote = (await burst_host.recv()).arg0
    chunks = [shell_packet(0, b"x" * 1000), shell_packet(0, b"y" * 3000) + shell_packet(4)]
    for chunk in chunks:  # sent back to back: the window allows it
        burst_host.send(AdbPacket(Command.WRTE, 8, remote, chunk))
    acks, out = [], bytearray()
    reader = ShellPacketDecoder()
    while True:
        packet = await burst_host.recv()
        if packet.command == Command.OKAY:
            acks.append(struct.unpack("<I", packet.payload)[0])
        elif packet.command == Command.WRTE:
            out += b"".join(p.data for p in reader.receive_data(packet.payload) if p.id == 1)
        elif packet.command == Command.CLSE:
            break
    assert acks == [len(c) for c in chunks]
    assert out == b"x" * 1000 + b"y" * 3000


async def test_without_the_feature_okay_payloads_are_ignored(sim, raw_host):
    sim.fs.write_file("/sdcard/big.bin", os.urandom(3 * 1024 * 1024))
    local, remote = await raw_host.open("exec:cat /sdcard/big.bin")
    assert (await raw_host.recv()).command == Command.WRTE
    raw_host.send(AdbPacket(Command.OKAY, local, remote, struct.pack("<i", 1 << 24)))
    assert await no_packet(raw_host)


async def test_sim_can_leave_it_out(make_sim, host_key):
    sim = await make_sim(delayed_ack=False)
    sim.trust_key(host_key.public_key())
    host = await RawHost.connect(sim.port)
    connected = await host.handshake(host_key, features="shell_v2,delayed_ack")
    assert b"delayed_ack" not in connected.payload
    assert await host.run("exec:echo plain") == b"plain\n"  # OPEN with arg1 = 0 works
    await host.close()
