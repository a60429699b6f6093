"""Tests for phone_agent.adb.packet: header codec, checksum rules and the incremental parser."""

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from phone_agent.adb.packet import (
    HEADER_SIZE,
    AdbPacket,
    AdbPacketParser,
    AdbProtocolError,
    Command,
    checksum,
    find_header,
)


def test_command_values_are_little_endian_ascii_names():
    for command in Command:
        assert struct.pack("<I", command).decode() == command.name


def test_header_carries_byte_sum_and_magic():
    packet = AdbPacket(Command.WRTE, 1, 2, b"\x01\x02\xff")
    header = packet.header()
    assert struct.unpack("<6I", header) == (Command.WRTE, 1, 2, 3, 0x102, Command.WRTE ^ 0xFFFFFFFF)


def test_header_without_checksum_sends_zero():
    assert struct.unpack("<6I", AdbPacket(Command.WRTE, 1, 2, b"abc").header(with_checksum=False))[4] == 0


def test_checksum_is_byte_sum_not_crc32():
    assert checksum(b"\xff" * 4) == 0x3FC


def test_parser_yields_packets_fed_one_byte_at_a_time():
    packets = [AdbPacket(Command.CNXN, 0x01000000, 4096, b"host::\x00"), AdbPacket(Command.OKAY, 5, 6)]
    data = b"".join(p.encode() for p in packets)
    parser = AdbPacketParser()
    received = []
    for i in range(len(data)):
        parser.receive_data(data[i : i + 1])
        received += parser.packets_received()
    assert received == packets
    parser.receive_eof()


def test_parser_rejects_bad_magic():
    data = bytearray(AdbPacket(Command.OKAY, 1, 2).encode())
    data[20] ^= 1
    with pytest.raises(AdbProtocolError, match="bad magic"):
        AdbPacketParser().receive_data(data)


def test_parser_rejects_length_over_max_payload():
    parser = AdbPacketParser(max_payload=4096)
    with pytest.raises(AdbProtocolError, match="exceeds"):
        parser.receive_data(AdbPacket(Command.WRTE, 1, 2, b"x" * 4097).header())


def test_parser_rejects_bad_checksum_until_told_to_skip():
    data = bytearray(AdbPacket(Command.WRTE, 1, 2, b"abc").encode())
    data[16] ^= 1
    with pytest.raises(AdbProtocolError, match="checksum"):
        AdbPacketParser().receive_data(data)
    parser = AdbPacketParser()
    parser.verify_checksum = False
    parser.receive_data(data)
    assert parser.packets_received()[0].payload == b"abc"


def test_eof_in_the_middle_of_a_message_is_an_error():
    parser = AdbPacketParser()
    parser.receive_data(AdbPacket(Command.WRTE, 1, 2, b"abcdef").encode()[:-1])
    with pytest.raises(AdbProtocolError, match="middle"):
        parser.receive_eof()


def test_unknown_command_with_valid_magic_is_passed_through():
    parser = AdbPacketParser()
    parser.receive_data(AdbPacket(0x41414141, 0, 0).encode())
    assert parser.packets_received()[0].command == 0x41414141


def test_resync_skips_stale_bytes_before_a_header():
    packet = AdbPacket(Command.CNXN, 0x01000001, 1 << 20, b"device::\x00")
    parser = AdbPacketParser(resync=True)
    parser.receive_data(b"stale junk from an earlier session" * 3 + packet.encode())
    assert parser.packets_received() == [packet]


def test_find_header_locates_a_known_command():
    data = b"xyz" + AdbPacket(Command.OKAY, 1, 2).encode()
    assert find_header(data) == 3
    assert find_header(b"\x00" * 10) == 10


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(list(Command)), st.integers(0, 2**32 - 1), st.binary(max_size=300)),
        max_size=8,
    ),
    st.lists(st.integers(1, 64), min_size=1, max_size=20),
)
def test_any_split_of_a_packet_stream_parses_back(specs, cuts):
    packets = [AdbPacket(c, a, a ^ 0xFFFF, p) for c, a, p in specs]
    data = b"".join(p.encode() for p in packets)
    parser = AdbPacketParser()
    received, offset, i = [], 0, 0
    while offset < len(data):
        step = cuts[i % len(cuts)]
        parser.receive_data(data[offset : offset + step])
        received += parser.packets_received()
        offset += step
        i += 1
    assert received == packets
    assert parser.buffered == 0 and HEADER_SIZE == 24
