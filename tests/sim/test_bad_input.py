"""Bad input never takes the sim down: the offending connection (or stream) goes, the others stay.

Each case opens a good connection first, sends the bad input on a second one, and then checks that
the good connection still runs a command.
"""

from __future__ import annotations

import asyncio
import logging
import os
import struct

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from phone_agent.adb.packet import VERSION_MIN, AdbPacket, AuthType, Command
from phone_agent.sim.server import SimulatedPhoneServer
from phone_agent.sim.vfs import VirtualFileSystem
from tests.sim.raw_host import RawHost


async def still_serves(host: RawHost) -> None:
    assert await host.run("exec:echo ok") == b"ok\n"


async def bad_connection(sim, host_key, *, handshake: bool = True, **options) -> RawHost:
    host = await RawHost.connect(sim.port)
    if handshake:
        await host.handshake(host_key, **options)
    return host


async def test_garbage_bytes_drop_only_that_connection(sim, raw_host, host_key):
    bad = await bad_connection(sim, host_key, handshake=False)
    bad.send_raw(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" + bytes(range(256)))
    assert await bad.closed()
    await still_serves(raw_host)


async def mangled_packet_drops_the_connection(
    sim, raw_host, host_key, packet: bytes, index: int, flip: int, **handshake
) -> None:
    """``packet`` with its byte ``index`` flipped (``^ flip``) ends the connection; the phone serves on."""
    bad = await bad_connection(sim, host_key, **handshake)
    mangled = bytearray(packet)
    mangled[index] ^= flip
    bad.send_raw(bytes(mangled))
    assert await bad.closed()
    await still_serves(raw_host)


async def test_wrong_magic_drops_the_connection(sim, raw_host, host_key):
    header = AdbPacket(Command.OPEN, 7, 0, b"exec:echo hi\x00").encode(with_checksum=False)
    await mangled_packet_drops_the_connection(sim, raw_host, host_key, header, 20, 0xFF)


async def test_oversize_length_drops_the_connection(sim, raw_host, host_key):
    bad = await bad_connection(sim, host_key)
    command = Command.WRTE
    bad.send_raw(struct.pack("<6I", command, 1, 1, 0x7FFFFFFF, 0, command ^ 0xFFFFFFFF))
    assert await bad.closed()
    await still_serves(raw_host)


async def test_payload_larger_than_negotiated_drops_the_connection(sim, raw_host, host_key):
    bad = await bad_connection(sim, host_key, max_payload=4096)
    assert [c["max_payload"] for c in sim.connections() if c["max_payload"] == 4096]
    local, remote = await bad.open("shell,v2,raw:")
    bad.send(AdbPacket(Command.WRTE, local, remote, b"x" * 8192))
    assert await bad.closed()
    await still_serves(raw_host)


async def test_bad_checksum_at_version_1_drops_the_connection(sim, raw_host, host_key):
    packet = AdbPacket(Command.OPEN, 9, 0, b"exec:echo hi\x00").encode()
    await mangled_packet_drops_the_connection(sim, raw_host, host_key, packet, 16, 1, version=VERSION_MIN)


async def test_write_to_unknown_stream_is_answered_with_clse(sim, raw_host, host_key):
    bad = await bad_connection(sim, host_key)
    bad.send(AdbPacket(Command.WRTE, 55, 4242, b"hello"))
    assert await bad.recv() == AdbPacket(Command.CLSE, 0, 55)
    bad.send(AdbPacket(Command.OKAY, 56, 4243))
    assert await bad.recv() == AdbPacket(Command.CLSE, 4243, 56)
    await still_serves(bad)  # the connection itself stays up
    await still_serves(raw_host)


async def test_write_before_open_is_answered_with_clse(sim, raw_host, host_key):
    bad = await bad_connection(sim, host_key)
    bad.send(AdbPacket(Command.WRTE, 3, 1, b"stdin before any OPEN"))  # 1 is the first id the sim hands out
    assert await bad.recv() == AdbPacket(Command.CLSE, 0, 3)
    await still_serves(raw_host)


async def test_open_with_a_delayed_ack_window_is_refused(raw_host):
    # delayed_ack is not offered, so OPEN's arg1 must be 0, as adbd insists.
    raw_host.send(AdbPacket(Command.OPEN, 78, 32 << 20, b"exec:echo hi\x00"))
    assert await raw_host.recv() == AdbPacket(Command.CLSE, 0, 78)
    await still_serves(raw_host)


async def test_unknown_auth_type_takes_the_connection_offline(sim, raw_host, host_key):
    bad = await bad_connection(sim, host_key)
    bad.send(AdbPacket(Command.AUTH, 9, 0, b""))
    bad.send(AdbPacket(Command.OPEN, 5, 0, b"exec:echo ignored\x00"))  # offline: ignored
    assert await bad.silent(), bad.pending  # no OKAY, no CLSE, no WRTE: the OPEN was not acted on
    await bad.handshake(host_key)  # a new CNXN brings it back
    await still_serves(bad)
    await still_serves(raw_host)


async def test_stream_traffic_before_connect_is_ignored(sim, raw_host, host_key):
    early = await bad_connection(sim, host_key, handshake=False)
    early.send(AdbPacket(Command.WRTE, 3, 1, b"stale bytes of an earlier session"))
    early.send(AdbPacket(Command.OPEN, 4, 0, b"exec:echo no\x00"))
    assert await early.silent()  # neither the WRTE nor the OPEN got an answer
    await early.handshake(host_key)
    await still_serves(early)
    await still_serves(raw_host)


async def test_connection_closed_mid_packet(sim, raw_host, host_key):
    bad = await bad_connection(sim, host_key)
    bad.send_raw(AdbPacket(Command.OPEN, 5, 0, b"exec:echo half\x00").encode()[:30])
    await bad.writer.drain()
    await bad.close()
    for _ in range(50):
        if len(sim.connections()) == 1:
            break
        await asyncio.sleep(0.05)
    assert len(sim.connections()) == 1
    await still_serves(raw_host)


async def test_unknown_service_is_refused_with_clse(raw_host):
    raw_host.send(AdbPacket(Command.OPEN, 77, 0, b"frobnicate:\x00"))
    assert await raw_host.recv() == AdbPacket(Command.CLSE, 0, 77)
    await still_serves(raw_host)


async def test_wrong_signature_gets_a_new_token(sim, raw_host):
    bad = await RawHost.connect(sim.port)
    bad.send(AdbPacket(Command.CNXN, 0x01000001, 1 << 20, b"host::\x00"))
    first = await bad.recv()
    assert (first.command, first.arg0, len(first.payload)) == (Command.AUTH, AuthType.TOKEN, 20)
    bad.send(AdbPacket(Command.AUTH, AuthType.SIGNATURE, 0, os.urandom(256)))
    second = await bad.recv()
    assert (second.command, second.arg0) == (Command.AUTH, AuthType.TOKEN)
    assert second.payload != first.payload
    bad.send(AdbPacket(Command.AUTH, AuthType.RSAPUBLICKEY, 0, b"not a key\x00"))
    await still_serves(raw_host)
    await bad.close()


async def test_flow_control_holds_the_second_write_until_okay(sim, host_key):
    sim.fs.write_file("/sdcard/big.bin", os.urandom(64 * 1024))
    host = await bad_connection(sim, host_key, max_payload=4096)
    local, remote = await host.open("exec:cat /sdcard/big.bin")
    first = await host.recv()
    assert first.command == Command.WRTE and len(first.payload) == 4096
    try:
        await host.recv(timeout=0.3)
        raise AssertionError("a second WRTE arrived before our OKAY")
    except TimeoutError:
        pass
    received = bytearray(first.payload)
    host.send(AdbPacket(Command.OKAY, local, remote))
    while True:
        packet = await host.recv()
        if packet.command == Command.CLSE:
            break
        assert packet.command == Command.WRTE and len(packet.payload) <= 4096
        received += packet.payload
        host.send(AdbPacket(Command.OKAY, local, remote))
    assert bytes(received) == sim.fs.read_file("/sdcard/big.bin")
    await host.close()


# ----- property: random packet streams never break the server


class _ErrorLog(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


class _QuietPhone:
    serial = "PROPERTY1"

    def __init__(self) -> None:
        self.props = {"ro.product.name": "p", "ro.product.model": "P", "ro.product.device": "p"}

    def command_names(self) -> frozenset[str]:
        return frozenset()

    def state(self) -> dict:
        return {}

    def reset(self) -> None:
        pass


packets = st.builds(
    AdbPacket,
    st.sampled_from([*Command, 0, 0x12345678]),
    st.integers(0, 8) | st.integers(0, 2**32 - 1),
    st.integers(0, 8) | st.integers(0, 2**32 - 1),
    st.binary(max_size=64)
    | st.sampled_from([b"exec:echo x\x00", b"sync:\x00", b"shell,v2,raw:cat\x00", b"host::\x00"]),
)
chunks = st.one_of(
    packets.map(lambda p: p.encode()),
    packets.map(lambda p: p.encode(with_checksum=False)),
    st.binary(min_size=1, max_size=48),
)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(chunks, max_size=12), st.booleans())
def test_random_packet_streams_never_take_the_server_down(stream, handshake_first):
    async def scenario() -> None:
        errors = _ErrorLog()
        logger = logging.getLogger("phone_agent.sim")
        logger.addHandler(errors)
        server = SimulatedPhoneServer(
            "127.0.0.1", 0, auth="none", phone=_QuietPhone(), fs=VirtualFileSystem()
        )
        await server.start()
        try:
            good = await RawHost.connect(server.port)
            assert (await good.handshake(None)).command == Command.CNXN  # auth "none": no key needed
            fuzz = await RawHost.connect(server.port)
            if handshake_first:
                fuzz.send(AdbPacket(Command.CNXN, 0x01000001, 1 << 20, b"host::\x00"))
            for chunk in stream:
                fuzz.send_raw(chunk)
            await fuzz.writer.drain()
            await asyncio.sleep(0.01)
            await fuzz.close()
            await still_serves(good)
            await good.close()
        finally:
            await server.close()
            logger.removeHandler(errors)
        assert not errors.records, [r.getMessage() for r in errors.records]

    asyncio.run(scenario())
