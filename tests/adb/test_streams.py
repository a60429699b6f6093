"""Streams and their flow control (``adb/streams.py``): a device core's streams driven by bytes, and
``OutgoingBytes``, the queue a WRTE's payload is cut from."""

from __future__ import annotations

import struct

from phone_agent.adb.events import PacketIgnored, StreamClosed, StreamData
from phone_agent.adb.packet import AdbPacket, Command
from phone_agent.adb.streams import DELAYED_ACK_WINDOW, MAX_UNACKED_WRITES, OutgoingBytes
from tests.adb.device_core import host, online_device, open_on, sent

# ----- device streams ------------------------------------------------------------------------------------


def test_open_is_offered_then_accepted_with_okay_and_ids_count_up():
    device = online_device()
    assert open_on(device, remote=9) == 1
    assert sent(device) == [AdbPacket(Command.OKAY, 1, 9)]
    assert open_on(device, remote=10) == 2


def test_refused_open_is_answered_with_clse_0():
    device = online_device()
    device.receive_data(host(AdbPacket(Command.OPEN, 9, 0, b"frobnicate:\x00"), checksum=False))
    device.events_received()
    device.refuse(9)
    assert sent(device) == [AdbPacket(Command.CLSE, 0, 9)]


def test_open_with_a_window_is_refused_when_delayed_ack_is_not_agreed():
    device = online_device("shell_v2")
    device.receive_data(host(AdbPacket(Command.OPEN, 9, DELAYED_ACK_WINDOW, b"exec:x\x00"), checksum=False))
    assert sent(device) == [AdbPacket(Command.CLSE, 0, 9)] and device.events_received() == []


def test_device_writes_one_wrte_at_a_time_without_delayed_ack():
    device = online_device()
    local = open_on(device)
    sent(device)
    device.write(local, b"a" * 10)
    device.write(local, b"b" * 10)
    assert sent(device) == [AdbPacket(Command.WRTE, local, 9, b"a" * 10)]
    assert device.awaiting_ack(local) and device.pending_output(local) == 10
    device.receive_data(host(AdbPacket(Command.OKAY, 9, local), checksum=False))
    assert sent(device) == [AdbPacket(Command.WRTE, local, 9, b"b" * 10)]


def test_device_data_is_acknowledged_when_taken():
    device = online_device()
    local = open_on(device)
    sent(device)
    device.receive_data(host(AdbPacket(Command.WRTE, 9, local, b"stdin"), checksum=False))
    assert device.events_received() == [StreamData(local, b"stdin")]
    assert sent(device) == []
    device.acknowledge(local, 5)
    assert sent(device) == [AdbPacket(Command.OKAY, local, 9)]


def test_a_host_that_ignores_flow_control_loses_the_stream():
    device = online_device()
    local = open_on(device)
    sent(device)
    for _ in range(MAX_UNACKED_WRITES + 1):
        device.receive_data(host(AdbPacket(Command.WRTE, 9, local, b"x"), checksum=False))
    events = device.events_received()
    assert events[-1] == StreamClosed(local, refused=False)
    assert sent(device) == [AdbPacket(Command.CLSE, local, 9)]


def test_with_delayed_ack_a_peer_may_overshoot_the_window_by_one_packet_and_no_more():
    # The sender's budget may go negative by one packet (AOSP's sockets.cpp): a reader that takes
    # nothing for a while (a pull streamed to a slow network) still gets its whole window and that
    # packet; one byte more loses the stream.
    device = online_device("shell_v2,delayed_ack")
    local = open_on(device, window=100)
    sent(device)
    packet = device.max_payload
    for _ in range(DELAYED_ACK_WINDOW // packet + 1):
        device.receive_data(host(AdbPacket(Command.WRTE, 9, local, b"x" * packet), checksum=False))
    assert StreamClosed(local, refused=False) not in device.events_received() and sent(device) == []
    device.receive_data(host(AdbPacket(Command.WRTE, 9, local, b"x"), checksum=False))
    assert device.events_received()[-1] == StreamClosed(local, refused=False)


def test_device_with_delayed_ack_spends_and_regains_a_budget():
    device = online_device("shell_v2,delayed_ack")
    local = open_on(device, window=100)
    assert sent(device) == [AdbPacket(Command.OKAY, local, 9, struct.pack("<I", DELAYED_ACK_WINDOW))]
    device.write(local, b"x" * 150)
    assert [len(p.payload) for p in sent(device)] == [150]  # budget 100 goes to -50
    device.write(local, b"y")
    assert sent(device) == []
    device.receive_data(host(AdbPacket(Command.OKAY, 9, local, struct.pack("<i", 60)), checksum=False))
    assert sent(device) == [AdbPacket(Command.WRTE, local, 9, b"y")]
    device.receive_data(host(AdbPacket(Command.WRTE, 9, local, b"in"), checksum=False))
    device.events_received()
    device.acknowledge(local, 2)
    assert sent(device) == [AdbPacket(Command.OKAY, local, 9, struct.pack("<i", 2))]


def test_device_okay_without_its_int32_is_ignored_with_an_event():
    device = online_device("shell_v2,delayed_ack")
    local = open_on(device, window=100)
    sent(device)
    device.receive_data(host(AdbPacket(Command.OKAY, 9, local), checksum=False))
    assert device.events_received() == [PacketIgnored(Command.OKAY, 9, local, "OKAY with a 0-byte payload")]


def test_device_answers_clse_with_clse_and_unknown_streams_with_clse():
    device = online_device()
    local = open_on(device)
    sent(device)
    device.receive_data(host(AdbPacket(Command.CLSE, 9, local), checksum=False))
    assert device.events_received() == [StreamClosed(local, refused=False)]
    assert sent(device) == [AdbPacket(Command.CLSE, local, 9)]
    device.receive_data(host(AdbPacket(Command.WRTE, 55, 4242, b"x"), checksum=False))
    device.receive_data(host(AdbPacket(Command.OKAY, 56, 4243), checksum=False))
    assert sent(device) == [AdbPacket(Command.CLSE, 0, 55), AdbPacket(Command.CLSE, 4243, 56)]


# ----- the outgoing queue --------------------------------------------------------------------------------


def test_outgoing_bytes_slice_a_large_write_without_copying_and_join_small_ones():
    big = bytes(range(256)) * 16
    out = OutgoingBytes()
    out.append(big)
    first = out.take(1000)
    assert isinstance(first, memoryview) and first.obj is big and bytes(first) == big[:1000]
    buffer = bytearray(b"abc")
    out.append(buffer)
    buffer[:] = b"xyz"  # the caller reuses its buffer: what was written stays written
    rest = b"".join(bytes(out.take(1000)) for _ in range(4))
    assert rest == big[1000:] + b"abc" and len(out) == 0
    for piece in (b"12", b"34", b"56"):
        out.append(piece)
    assert out.take(5) == b"12345" and len(out) == 1 and bytes(out.take(5)) == b"6"
