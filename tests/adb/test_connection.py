"""AdbConnection, the one ADB core: the device side without a socket, its transition table, and a host
core talking to a device core through nothing but bytes (the device's streams: ``test_streams.py``)."""

from __future__ import annotations

import pytest

from phone_agent.adb.connection import TRANSITIONS, AdbConnection, ConnectionState, Side
from phone_agent.adb.events import (
    Connected,
    ConnectionReset,
    PacketIgnored,
    StreamClosed,
    StreamData,
    StreamOpened,
    StreamRequested,
)
from phone_agent.adb.host import AdbHostProtocol
from phone_agent.adb.keys import generate_private_key
from phone_agent.adb.packet import (
    VERSION,
    VERSION_MIN,
    AdbPacket,
    AuthType,
    Command,
)
from tests.adb.device_core import (
    FEATURES,
    TOKEN,
    Trusting,
    cnxn,
    host,
    make_device,
    online_device,
    open_on,
    sent,
)


@pytest.fixture(scope="module")
def key():
    return generate_private_key()


# ----- the table -------------------------------------------------------------------------------------


@pytest.mark.parametrize("side", list(Side))
def test_every_packet_the_table_does_not_list_is_answered_with_an_event(side):
    for state in ConnectionState:
        for command in Command:
            if (side, state, command) in TRANSITIONS or state is ConnectionState.CLOSED:
                continue
            connection = AdbConnection(side)
            connection.state = state
            connection._parser.resync = False
            connection.receive_data(host(AdbPacket(command, 1, 2, b"")))
            assert connection.events_received() == [
                PacketIgnored(command, 1, 2, f"{command.name} in state {state.value}")
            ], (side, state, command)


def test_the_table_points_at_the_connections_own_methods():
    for handler in TRANSITIONS.values():
        assert getattr(AdbConnection, handler.__name__) is handler


# ----- device handshake --------------------------------------------------------------------------------


def test_device_without_auth_answers_cnxn_with_its_banner_and_the_smaller_payload():
    device = make_device()
    device.receive_data(cnxn(max_payload=4096))
    (answer,) = sent(device)
    assert (answer.command, answer.arg0, answer.arg1) == (Command.CNXN, VERSION, 4096)
    assert answer.payload == (
        b"device::ro.product.name=sim;ro.product.model=Sim;ro.product.device=sim;features=shell_v2,cmd,delayed_ack"
    )
    (event,) = device.events_received()
    assert isinstance(event, Connected) and event.features == frozenset(FEATURES)
    assert device.state is ConnectionState.ONLINE and device.delayed_ack


def test_device_negotiates_version_1_and_then_verifies_checksums():
    device = make_device()
    device.receive_data(cnxn(version=VERSION_MIN))
    assert device.version == VERSION_MIN and device.checksums
    sent(device)
    bad = bytearray(host(AdbPacket(Command.OPEN, 3, 0, b"exec:x\x00")))
    bad[16] ^= 1
    with pytest.raises(Exception, match="checksum"):
        device.receive_data(bytes(bad))
    assert device.state is ConnectionState.CLOSED


def test_device_sends_a_token_and_goes_online_on_a_trusted_signature(key):
    device = make_device(Trusting(key.public_key("t@h")))
    device.receive_data(cnxn())
    assert sent(device) == [AdbPacket(Command.AUTH, AuthType.TOKEN, 0, TOKEN)]
    assert device.state is ConnectionState.AUTHENTICATING
    device.receive_data(host(AdbPacket(Command.AUTH, AuthType.SIGNATURE, 0, key.sign(TOKEN))))
    assert [p.command for p in sent(device)] == [Command.CNXN]
    assert device.state is ConnectionState.ONLINE
    assert device.public_key is not None


def test_device_answers_a_wrong_signature_with_a_new_token_then_waits_for_the_user(key):
    auth = Trusting()
    device = make_device(auth)
    device.receive_data(cnxn())
    sent(device)
    device.receive_data(host(AdbPacket(Command.AUTH, AuthType.SIGNATURE, 0, key.sign(TOKEN))))
    assert sent(device) == [AdbPacket(Command.AUTH, AuthType.TOKEN, 0, TOKEN)]
    public = key.public_key("me@host").encode()
    device.receive_data(host(AdbPacket(Command.AUTH, AuthType.RSAPUBLICKEY, 0, public)))
    assert device.state is ConnectionState.WAITING_FOR_USER and sent(device) == []
    assert auth.offered[0].comment == "me@host"
    device.authorize()
    assert [p.command for p in sent(device)] == [Command.CNXN]
    assert device.state is ConnectionState.ONLINE


def test_device_ignores_an_unusable_public_key_with_an_event():
    device = make_device(Trusting())
    device.receive_data(cnxn())
    sent(device)
    device.receive_data(host(AdbPacket(Command.AUTH, AuthType.RSAPUBLICKEY, 0, b"not a key\x00")))
    (event,) = device.events_received()
    assert isinstance(event, PacketIgnored) and event.reason.startswith("unusable public key")
    assert device.state is ConnectionState.AUTHENTICATING


def test_stream_traffic_before_cnxn_is_ignored_with_events_and_no_answer():
    device = make_device()
    device.receive_data(host(AdbPacket(Command.OPEN, 4, 0, b"exec:echo no\x00")))
    assert device.events_received() == [PacketIgnored(Command.OPEN, 4, 0, "OPEN in state idle")]
    assert sent(device) == []


def test_an_unknown_auth_type_takes_an_online_device_offline():
    device = online_device()
    local = open_on(device)
    sent(device)
    device.receive_data(host(AdbPacket(Command.AUTH, 9, 0, b""), checksum=False))
    assert device.events_received() == [StreamClosed(local, refused=False), ConnectionReset("AUTH type 9")]
    assert device.state is ConnectionState.IDLE
    device.receive_data(host(AdbPacket(Command.OPEN, 5, 0, b"exec:x\x00")))
    assert sent(device) == []  # offline: the OPEN gets no reply


def test_a_new_cnxn_resets_the_streams():
    device = online_device()
    local = open_on(device)
    sent(device)
    device.receive_data(cnxn())
    events = device.events_received()
    assert events[:2] == [StreamClosed(local, refused=False), ConnectionReset("the host connected again")]
    assert [p.command for p in sent(device)] == [Command.CNXN]


# ----- device end of the connection ---------------------------------------------------------------------


def test_eof_mid_packet_is_an_error_on_the_device():
    device = online_device()
    device.receive_data(host(AdbPacket(Command.OPEN, 5, 0, b"exec:echo half\x00"))[:30])
    with pytest.raises(Exception, match="middle of a message"):
        device.receive_eof()
    assert device.state is ConnectionState.CLOSED


# ----- both ends, bytes only -----------------------------------------------------------------------------


def pump(a: AdbConnection, b: AdbConnection) -> None:
    """Carry bytes both ways until neither side has anything to send."""
    while True:
        moved = False
        for src, dst in ((a, b), (b, a)):
            for chunk in src.data_to_send():
                dst.receive_data(chunk)
                moved = True
        if not moved:
            return


@pytest.mark.parametrize("features", ["shell_v2,delayed_ack", "shell_v2"])
def test_a_host_core_and_a_device_core_connect_authenticate_and_move_a_megabyte(key, features):
    device = make_device(Trusting(key.public_key("t@h")), features=tuple(features.split(",")))
    host_core = AdbHostProtocol([key], max_payload=64 * 1024)
    host_core.connect()
    pump(host_core, device)
    assert host_core.state is device.state is ConnectionState.ONLINE
    assert host_core.delayed_ack is device.delayed_ack is ("delayed_ack" in features)
    local = host_core.open("exec:cat")
    pump(host_core, device)
    (request,) = [e for e in device.events_received() if isinstance(e, StreamRequested)]
    remote = device.accept(request.remote_id)
    assert remote is not None
    pump(host_core, device)
    assert StreamOpened(local) in host_core.events_received()
    payload = bytes(range(256)) * 4096
    device.write(remote, payload)
    received = bytearray()
    while len(received) < len(payload):
        pump(host_core, device)
        for event in host_core.events_received():
            if isinstance(event, StreamData):
                received += event.data
                host_core.acknowledge(local, len(event.data))
    assert received == payload
    device.close(remote)
    pump(host_core, device)
    assert StreamClosed(local, refused=False) in host_core.events_received()
