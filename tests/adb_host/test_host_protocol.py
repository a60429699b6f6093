"""AdbHostProtocol, the sans-I/O core: packet sequences in, packets and events out."""

from __future__ import annotations

import struct

import pytest

from phone_agent.adb.connection import (
    TLS_UNSUPPORTED,
    AdbConnectionError,
    AdbTlsUnsupportedError,
    ConnectionState,
    parse_banner,
)
from phone_agent.adb.events import (
    AuthPromptShown,
    Connected,
    PacketIgnored,
    StreamClosed,
    StreamData,
    StreamOpened,
)
from phone_agent.adb.host import AdbHostProtocol
from phone_agent.adb.keys import AdbPublicKey, generate_private_key
from phone_agent.adb.packet import (
    HEADER_SIZE,
    MAX_PAYLOAD,
    VERSION_MIN,
    VERSION_SKIP_CHECKSUM,
    AdbPacket,
    AdbPacketParser,
    AuthType,
    Command,
)
from phone_agent.adb.streams import DELAYED_ACK_WINDOW

BANNER = b"device::ro.product.name=p;ro.product.model=M;ro.product.device=d;features=shell_v2,stat_v2,cmd"
BANNER_DELAYED = BANNER + b",delayed_ack"


@pytest.fixture(scope="module")
def key():
    return generate_private_key()


@pytest.fixture(scope="module")
def other_key():
    return generate_private_key()


def sent(protocol: AdbHostProtocol) -> list[AdbPacket]:
    """Decode what the host queued, checking header and payload come as separate chunks."""
    chunks = protocol.data_to_send()
    parser = AdbPacketParser(max_payload=MAX_PAYLOAD)
    parser.verify_checksum = False
    packets = []
    index = 0
    while index < len(chunks):
        header = chunks[index]
        assert len(header) == HEADER_SIZE, "each header must be its own 24-byte chunk"
        length = struct.unpack_from("<I", header, 12)[0]
        payload = chunks[index + 1] if length else b""
        assert len(payload) == length
        parser.receive_data(header + payload)
        packets += parser.packets_received()
        index += 2 if length else 1
    return packets


def device(packet: AdbPacket, *, checksum: bool = True) -> bytes:
    return packet.encode(with_checksum=checksum)


def online(key, banner: bytes = BANNER, version: int = VERSION_SKIP_CHECKSUM, max_payload: int = MAX_PAYLOAD):
    protocol = AdbHostProtocol([key])
    protocol.connect()
    sent(protocol)
    protocol.receive_data(device(AdbPacket(Command.CNXN, version, max_payload, banner)))
    protocol.events_received()
    return protocol


def open_stream(protocol: AdbHostProtocol, remote: int = 77, service: str = "exec:x", credit: bytes = b""):
    local = protocol.open(service)
    sent(protocol)
    checksum = protocol.checksums
    protocol.receive_data(device(AdbPacket(Command.OKAY, remote, local, credit), checksum=checksum))
    assert protocol.events_received() == [StreamOpened(local)]
    return local


# ----- handshake -------------------------------------------------------------------------------------


def test_connect_sends_cnxn_with_the_implemented_features_only(key):
    protocol = AdbHostProtocol([key])
    protocol.connect()
    (cnxn,) = sent(protocol)
    assert cnxn.command == Command.CNXN
    assert (cnxn.arg0, cnxn.arg1) == (VERSION_SKIP_CHECKSUM, MAX_PAYLOAD)
    assert cnxn.payload == b"host::features=shell_v2,stat_v2,ls_v2,fixed_push_mkdir,delayed_ack"
    assert protocol.state is ConnectionState.CONNECTING


def test_cnxn_and_auth_always_carry_a_checksum(key):
    protocol = AdbHostProtocol([key])
    protocol.connect()
    header = protocol.data_to_send()[0]
    assert struct.unpack_from("<I", header, 16)[0] != 0
    protocol.receive_data(device(AdbPacket(Command.AUTH, AuthType.TOKEN, 0, bytes(range(20)))))
    header = protocol.data_to_send()[0]
    assert struct.unpack_from("<I", header, 16)[0] != 0


def test_token_is_signed_with_the_stored_key_then_device_cnxn_brings_it_online(key):
    protocol = AdbHostProtocol([key])
    protocol.connect()
    sent(protocol)
    token = bytes(range(20))
    protocol.receive_data(device(AdbPacket(Command.AUTH, AuthType.TOKEN, 0, token)))
    (signature,) = sent(protocol)
    assert (signature.command, signature.arg0) == (Command.AUTH, AuthType.SIGNATURE)
    assert key.public_key().verify(token, signature.payload)
    assert protocol.state is ConnectionState.AUTHENTICATING
    protocol.receive_data(device(AdbPacket(Command.CNXN, VERSION_SKIP_CHECKSUM, 256 * 1024, BANNER)))
    (event,) = protocol.events_received()
    assert isinstance(event, Connected)
    assert event.max_payload == 256 * 1024
    assert event.features == {"shell_v2", "stat_v2"}
    assert event.properties["ro.product.model"] == "M"
    assert protocol.state is ConnectionState.ONLINE


def test_each_key_is_tried_then_the_public_key_is_sent_once_and_the_prompt_is_observable(key, other_key):
    protocol = AdbHostProtocol([key, other_key], key_name="tester@page")
    protocol.connect()
    sent(protocol)
    signatures = []
    for _ in range(2):
        protocol.receive_data(device(AdbPacket(Command.AUTH, AuthType.TOKEN, 0, b"t" * 20)))
        (packet,) = sent(protocol)
        signatures.append(packet.payload)
    assert other_key.public_key().verify(b"t" * 20, signatures[1])
    protocol.receive_data(device(AdbPacket(Command.AUTH, AuthType.TOKEN, 0, b"u" * 20)))
    (public,) = sent(protocol)
    assert (public.command, public.arg0) == (Command.AUTH, AuthType.RSAPUBLICKEY)
    assert public.payload.endswith(b" tester@page\x00")
    assert AdbPublicKey.decode(public.payload).n == key.n
    assert protocol.events_received() == [AuthPromptShown("tester@page")]
    assert protocol.state is ConnectionState.WAITING_FOR_USER
    # Another token while the phone waits for the user: nothing more is sent.
    protocol.receive_data(device(AdbPacket(Command.AUTH, AuthType.TOKEN, 0, b"v" * 20)))
    assert sent(protocol) == []
    protocol.receive_data(device(AdbPacket(Command.CNXN, VERSION_SKIP_CHECKSUM, MAX_PAYLOAD, BANNER)))
    assert protocol.state is ConnectionState.ONLINE


@pytest.mark.parametrize(
    ("ours", "theirs", "expected", "checksums"),
    [
        (VERSION_SKIP_CHECKSUM, VERSION_SKIP_CHECKSUM, VERSION_SKIP_CHECKSUM, False),
        (VERSION_SKIP_CHECKSUM, VERSION_MIN, VERSION_MIN, True),
        (VERSION_MIN, VERSION_SKIP_CHECKSUM, VERSION_MIN, True),
    ],
)
def test_version_is_the_minimum_and_decides_checksums(key, ours, theirs, expected, checksums):
    protocol = AdbHostProtocol([key], version=ours, max_payload=64 * 1024)
    protocol.connect()
    assert sent(protocol)[0].arg0 == ours
    protocol.receive_data(device(AdbPacket(Command.CNXN, theirs, MAX_PAYLOAD, BANNER)))
    assert protocol.version == expected and protocol.checksums is checksums
    assert protocol.max_payload == 64 * 1024  # the smaller of both
    local = protocol.open("shell:true")
    (open_packet,) = sent(protocol)
    assert open_packet.payload == b"shell:true\x00"
    protocol.receive_data(device(AdbPacket(Command.OKAY, 5, local), checksum=checksums))
    protocol.write(local, b"abc")
    header = protocol.data_to_send()[0]
    assert (struct.unpack_from("<I", header, 16)[0] != 0) is checksums


def test_old_version_rejects_a_bad_checksum_once_online(key):
    protocol = online(key, version=VERSION_MIN)
    local = open_stream(protocol)
    bad = bytearray(device(AdbPacket(Command.WRTE, 77, local, b"hello")))
    bad[16] ^= 1
    with pytest.raises(AdbConnectionError, match="checksum"):
        protocol.receive_data(bytes(bad))
    assert protocol.state is ConnectionState.CLOSED


def test_new_version_ignores_checksums_the_device_sends_as_zero(key):
    protocol = online(key)
    local = open_stream(protocol)
    protocol.receive_data(device(AdbPacket(Command.WRTE, 77, local, b"hello"), checksum=False))
    assert protocol.events_received() == [StreamData(local, b"hello")]


def test_stls_ends_the_connection_with_a_clear_error(key):
    protocol = AdbHostProtocol([key])
    protocol.connect()
    sent(protocol)
    with pytest.raises(AdbTlsUnsupportedError, match="use USB or `adb tcpip`"):
        protocol.receive_data(device(AdbPacket(Command.STLS, 0x01000000, 0)))
    assert protocol.state is ConnectionState.CLOSED
    assert protocol.close_reason == TLS_UNSUPPORTED


def test_stale_bytes_before_cnxn_are_skipped(key):
    protocol = AdbHostProtocol([key])
    protocol.connect()
    sent(protocol)
    stale = (
        b"\x00garbage from an earlier session"
        + device(AdbPacket(Command.WRTE, 9, 1, b"old data"), checksum=False)  # checksum 0: dropped
        + device(AdbPacket(Command.OKAY, 9, 1))  # a valid stream packet before CNXN: ignored
        + b"\xff" * 30
    )
    protocol.receive_data(stale)
    protocol.receive_data(device(AdbPacket(Command.CNXN, VERSION_SKIP_CHECKSUM, MAX_PAYLOAD, BANNER)))
    events = protocol.events_received()
    assert events[0] == PacketIgnored(Command.OKAY, 9, 1, "OKAY in state connecting")  # said, not silent
    assert [type(e) for e in events[1:]] == [Connected]
    assert sent(protocol) == []  # nothing answered the stale OKAY


def test_garbage_after_online_is_a_protocol_error(key):
    protocol = online(key)
    with pytest.raises(AdbConnectionError, match="not ADB"):
        protocol.receive_data(b"HTTP/1.1 400 Bad Request\r\n\r\n")
    assert protocol.state is ConnectionState.CLOSED


def test_eof_during_the_handshake_says_so(key):
    protocol = AdbHostProtocol([key])
    protocol.connect()
    protocol.receive_eof()
    assert protocol.state is ConnectionState.CLOSED
    assert "during the handshake" in protocol.close_reason


# ----- streams and flow control ---------------------------------------------------------------------


def test_without_delayed_ack_one_wrte_is_in_flight_until_okay(key):
    protocol = online(key, max_payload=4096)
    local = open_stream(protocol)
    protocol.write(local, b"a" * 10_000)
    packets = sent(protocol)
    assert [(p.command, len(p.payload)) for p in packets] == [(Command.WRTE, 4096)]
    assert packets[0].arg0 == local and packets[0].arg1 == 77
    protocol.receive_data(device(AdbPacket(Command.OKAY, 77, local), checksum=False))
    assert [len(p.payload) for p in sent(protocol)] == [4096]
    protocol.receive_data(device(AdbPacket(Command.OKAY, 77, local), checksum=False))
    assert [len(p.payload) for p in sent(protocol)] == [10_000 - 8192]
    assert protocol.pending_output(local) == 0


def test_every_received_wrte_is_answered_with_okay_once_taken(key):
    protocol = online(key)
    local = open_stream(protocol)
    for data in (b"one", b"two"):
        protocol.receive_data(device(AdbPacket(Command.WRTE, 77, local, data), checksum=False))
    assert sent(protocol) == []  # not before the application took the bytes
    protocol.acknowledge(local, 3)
    (okay,) = sent(protocol)
    assert (okay.command, okay.arg0, okay.arg1, okay.payload) == (Command.OKAY, local, 77, b"")
    protocol.acknowledge(local, 2)
    assert sent(protocol) == []
    protocol.acknowledge(local, 1)
    assert [p.command for p in sent(protocol)] == [Command.OKAY]


def test_delayed_ack_window_in_open_credit_in_okay_and_bursts(key):
    protocol = online(key, banner=BANNER_DELAYED, max_payload=4096)
    assert protocol.delayed_ack
    local = protocol.open("exec:cat")
    (open_packet,) = sent(protocol)
    assert open_packet.arg1 == DELAYED_ACK_WINDOW
    protocol.receive_data(
        device(AdbPacket(Command.OKAY, 77, local, struct.pack("<i", 10_000)), checksum=False)
    )
    assert protocol.events_received() == [StreamOpened(local)]
    protocol.write(local, b"x" * 20_000)
    # Budget 10 000: WRTEs go out while it is positive (the last one may overshoot).
    assert [len(p.payload) for p in sent(protocol)] == [4096, 4096, 4096]
    protocol.receive_data(device(AdbPacket(Command.OKAY, 77, local, struct.pack("<i", 8192)), checksum=False))
    # Budget -2288 + 8192 = 5904: two more WRTEs, the second one the last 3616 bytes.
    assert [len(p.payload) for p in sent(protocol)] == [4096, 20_000 - 4 * 4096]
    protocol.write(local, b"y" * 100)
    assert sent(protocol) == []  # budget spent (-1808): wait for the next OKAY
    protocol.receive_data(device(AdbPacket(Command.OKAY, 77, local, struct.pack("<i", 4096)), checksum=False))
    assert [p.payload for p in sent(protocol)] == [b"y" * 100]


def test_delayed_ack_okay_carries_the_bytes_acknowledged(key):
    protocol = online(key, banner=BANNER_DELAYED)
    local = open_stream(protocol, credit=struct.pack("<i", 1 << 20))
    protocol.receive_data(device(AdbPacket(Command.WRTE, 77, local, b"z" * 300), checksum=False))
    protocol.receive_data(device(AdbPacket(Command.WRTE, 77, local, b"z" * 200), checksum=False))
    protocol.acknowledge(local, 500)
    (okay,) = sent(protocol)
    assert okay.command == Command.OKAY and struct.unpack("<i", okay.payload) == (500,)


def test_delayed_ack_okay_without_its_int32_is_an_error(key):
    protocol = online(key, banner=BANNER_DELAYED)
    local = protocol.open("exec:x")
    with pytest.raises(AdbConnectionError, match="int32"):
        protocol.receive_data(device(AdbPacket(Command.OKAY, 77, local), checksum=False))


def test_without_delayed_ack_open_announces_no_window(key):
    protocol = online(key)
    protocol.open("exec:x")
    (open_packet,) = sent(protocol)
    assert open_packet.arg1 == 0 and not protocol.delayed_ack


def test_clse_zero_before_okay_means_the_open_was_refused(key):
    protocol = online(key)
    local = protocol.open("nope:")
    protocol.receive_data(device(AdbPacket(Command.CLSE, 0, local), checksum=False))
    assert protocol.events_received() == [StreamClosed(local, refused=True)]


def test_clse_zero_after_okay_is_a_normal_close(key):
    protocol = online(key)
    local = open_stream(protocol)
    protocol.receive_data(device(AdbPacket(Command.CLSE, 0, local), checksum=False))
    assert protocol.events_received() == [StreamClosed(local, refused=False)]
    assert sent(protocol) == []  # the host does not answer the device's CLSE


def test_clse_with_the_wrong_remote_id_is_ignored_and_the_right_one_closes(key):
    protocol = online(key)
    local = open_stream(protocol)
    protocol.receive_data(device(AdbPacket(Command.CLSE, 12345, local), checksum=False))
    assert protocol.events_received() == [
        PacketIgnored(Command.CLSE, 12345, local, "CLSE for no such stream")
    ]
    protocol.receive_data(device(AdbPacket(Command.CLSE, 77, local), checksum=False))
    assert protocol.events_received() == [StreamClosed(local, refused=False)]


def test_host_close_flushes_then_sends_clse_and_ignores_the_reply(key):
    protocol = online(key, max_payload=4096)
    local = open_stream(protocol)
    protocol.write(local, b"q" * 5000)
    protocol.close(local)
    assert [p.command for p in sent(protocol)] == [Command.WRTE]
    protocol.receive_data(device(AdbPacket(Command.OKAY, 77, local), checksum=False))
    assert [(p.command, p.arg0, p.arg1) for p in sent(protocol)] == [
        (Command.WRTE, local, 77),
        (Command.CLSE, local, 77),
    ]
    protocol.receive_data(device(AdbPacket(Command.CLSE, 77, local), checksum=False))
    assert protocol.events_received() == [PacketIgnored(Command.CLSE, 77, local, "CLSE for no such stream")]


def test_okay_for_an_unknown_stream_is_answered_with_clse(key):
    protocol = online(key)
    protocol.receive_data(device(AdbPacket(Command.OKAY, 42, 999), checksum=False))
    assert [(p.command, p.arg0, p.arg1) for p in sent(protocol)] == [(Command.CLSE, 0, 42)]


def test_wrte_for_an_unknown_stream_is_dropped(key):
    protocol = online(key)
    protocol.receive_data(device(AdbPacket(Command.WRTE, 42, 999, b"x"), checksum=False))
    assert protocol.events_received() == [PacketIgnored(Command.WRTE, 42, 999, "WRTE for no open stream")]
    assert sent(protocol) == []


def test_eof_closes_every_open_stream(key):
    protocol = online(key)
    a = open_stream(protocol, remote=1)
    b = protocol.open("exec:y")
    protocol.receive_eof()
    assert set(protocol.events_received()) == {StreamClosed(a, False), StreamClosed(b, True)}


def test_a_second_cnxn_while_online_fails_the_connection(key):
    protocol = online(key)
    with pytest.raises(AdbConnectionError, match="restarted"):
        protocol.receive_data(device(AdbPacket(Command.CNXN, VERSION_SKIP_CHECKSUM, MAX_PAYLOAD, BANNER)))


def test_open_before_online_is_refused(key):
    protocol = AdbHostProtocol([key])
    with pytest.raises(AdbConnectionError, match="not online"):
        protocol.open("shell:")


def test_packets_split_at_every_byte_boundary_still_parse(key):
    protocol = online(key)
    local = open_stream(protocol)
    data = device(AdbPacket(Command.WRTE, 77, local, b"hello world"), checksum=False)
    for byte in data:
        protocol.receive_data(bytes([byte]))
    assert protocol.events_received() == [StreamData(local, b"hello world")]


def test_banner_parsing():
    properties, features = parse_banner("device::ro.product.model=X;features=a,b")
    assert properties == {"ro.product.model": "X"} and features == {"a", "b"}
    assert parse_banner("device::") == ({}, frozenset())


# ----- the parser on a host's traffic: big payloads in uneven chunks, stale bytes first ------------


@pytest.mark.parametrize("seed", range(30))
def test_the_parser_reassembles_big_payloads_from_uneven_chunks(seed):
    import random

    rng = random.Random(seed)
    packets = [
        AdbPacket(
            rng.choice([Command.WRTE, Command.OKAY, Command.CLSE, Command.OPEN]),
            rng.randrange(1 << 32),
            rng.randrange(1 << 32),
            rng.randbytes(rng.choice([0, 1, 23, 24, 25, 1000, 70_000])),
        )
        for _ in range(rng.randrange(1, 12))
    ]
    checksums = rng.random() < 0.5
    stream = b"".join(p.encode(with_checksum=checksums) for p in packets)
    parser = AdbPacketParser(max_payload=MAX_PAYLOAD)
    parser.verify_checksum = checksums
    got = []
    pos = 0
    while pos < len(stream):
        step = rng.choice([1, 7, 24, 100, 4096, 65536, 300_000])
        chunk = stream[pos : pos + step]
        parser.receive_data(bytearray(chunk) if step == 7 else chunk)  # a mutable chunk is copied
        got += parser.packets_received()
        pos += step
    parser.receive_eof()
    assert got == packets


def test_before_the_handshake_the_parser_resyncs_then_refuses_garbage_once_strict():
    from phone_agent.adb.packet import AdbProtocolError

    parser = AdbPacketParser(max_payload=MAX_PAYLOAD, resync=True)
    good = AdbPacket(Command.CNXN, 1, 2, b"device::")
    stale = AdbPacket(Command.CNXN, 1, 2, b"stale").encode()
    stale = stale[:16] + b"\x00\x00\x00\x00" + stale[20:]  # checksum 0, as a newer session sends
    parser.receive_data(b"\x01\x02junk" * 20 + stale + good.encode() + b"x" * 5)
    assert parser.packets_received() == [good]
    parser.resync = False
    with pytest.raises(AdbProtocolError, match="bad magic"):
        parser.receive_data(b"y" * 40)
