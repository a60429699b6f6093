"""The pure codecs: shell-protocol framing, sync messages, smart-socket requests and device lists,
and the key store (JSON form, file mode 0600, load-or-create)."""

from __future__ import annotations

import json
import os
import stat

import pytest

from phone_agent.adb import sync_protocol as sp
from phone_agent.adb.keys import AdbKeyError, generate_private_key
from phone_agent.adb.keystore import (
    FileKeyStore,
    MemoryKeyStore,
    default_key_path,
    key_from_json,
    key_to_json,
    load_or_create_key,
)
from phone_agent.adb.services import StreamReader
from phone_agent.adb.shell_protocol import (
    ShellId,
    ShellPacket,
    ShellPacketDecoder,
    ShellProtocolError,
    encode_shell_packet,
)
from phone_agent.adb.smart_socket import encode_request, parse_devices
from phone_agent.adb.transport import PLAIN_STREAM

# ----- shell protocol ------------------------------------------------------------------------------


def test_shell_packets_split_across_writes_at_every_boundary():
    stream = (
        encode_shell_packet(ShellId.STDOUT, b"hello ")
        + encode_shell_packet(ShellId.STDERR, b"oops")
        + encode_shell_packet(ShellId.STDOUT, b"")
        + encode_shell_packet(ShellId.EXIT, b"\x03")
    )
    expected = [
        ShellPacket(ShellId.STDOUT, b"hello "),
        ShellPacket(ShellId.STDERR, b"oops"),
        ShellPacket(ShellId.STDOUT, b""),
        ShellPacket(ShellId.EXIT, b"\x03"),
    ]
    for cut in range(len(stream) + 1):
        decoder = ShellPacketDecoder()
        packets = decoder.receive_data(stream[:cut]) + decoder.receive_data(stream[cut:])
        assert packets == expected, cut
        assert decoder.buffered == 0
    decoder = ShellPacketDecoder()
    assert [p for byte in stream for p in decoder.receive_data(bytes([byte]))] == expected


def test_shell_packet_layout():
    assert encode_shell_packet(ShellId.STDIN, b"ab") == b"\x00\x02\x00\x00\x00ab"
    assert encode_shell_packet(ShellId.CLOSE_STDIN) == b"\x04\x00\x00\x00\x00"


def test_output_that_is_not_shell_protocol_is_rejected():
    with pytest.raises(ShellProtocolError, match="does not speak shell v2"):
        ShellPacketDecoder().receive_data(b"/system/bin/sh: x: not found\n")


# ----- sync -------------------------------------------------------------------------------------------


def test_sync_requests():
    assert sp.encode_request(b"STAT", "/sdcard") == b"STAT\x07\x00\x00\x00/sdcard"
    assert sp.encode_send("/data/local/tmp/x", 0o755) == sp.encode_request(b"SEND", "/data/local/tmp/x,33261")
    assert sp.encode_data(b"abc") == b"DATA\x03\x00\x00\x00"
    assert sp.encode_done(1_700_000_000) == b"DONE" + (1_700_000_000).to_bytes(4, "little")
    assert sp.encode_quit() == b"QUIT\x00\x00\x00\x00"
    with pytest.raises(sp.SyncError, match="over sync's limit"):
        sp.encode_request(b"STAT", "/" + "a" * 1024)
    with pytest.raises(sp.SyncError, match="at most"):
        sp.encode_data(b"x" * (sp.DATA_MAX + 1))


def test_sync_stat_structures():
    v1 = sp.decode_stat_v1(sp.STAT_V1.pack(b"STAT", 0o100644, 12, 99))
    assert v1.is_file and v1.size == 12 and v1.exists
    v2 = sp.decode_stat_v2(sp.STAT_V2.pack(b"STA2", 0, 1, 7, 0o40755, 2, 0, 0, 4096, 1, 2, 3))
    assert v2.is_dir and v2.mtime == 2 and v2.ino == 7
    missing = sp.decode_stat_v2(sp.STAT_V2.pack(b"STA2", 2, *[0] * 10))
    assert not missing.exists and missing.error == 2
    with pytest.raises(sp.SyncError, match="expected STAT"):
        sp.decode_stat_v1(sp.STAT_V1.pack(b"FAIL", 0, 0, 0))


class ChunkStream:
    """A ServiceStream giving fixed chunks."""

    capabilities = PLAIN_STREAM

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = list(chunks)

    async def read(self, timeout: float | None = None) -> bytes:
        return self.chunks.pop(0) if self.chunks else b""

    async def write(self, data: bytes) -> None:
        pass

    async def close(self) -> None:
        pass


async def test_sync_messages_split_across_wrtes_are_reassembled():
    message = b"DATA" + (5).to_bytes(4, "little") + b"hello" + b"DONE\x00\x00\x00\x00"
    reader = StreamReader(ChunkStream([message[:3], message[3:9], message[9:]]), timeout=1)
    assert await reader.read_exact(8) == b"DATA\x05\x00\x00\x00"
    assert await reader.read_exact(5) == b"hello"
    assert await reader.read_exact(8) == b"DONE\x00\x00\x00\x00"


# ----- smart sockets ------------------------------------------------------------------------------


def test_smart_socket_request_has_a_4_hex_digit_length():
    assert encode_request("host:version") == b"000chost:version"
    assert encode_request("host:transport:emulator-5554") == b"001chost:transport:emulator-5554"


def test_devices_l_parsing():
    text = (
        "127.0.0.1:6000         device product:sdk_phone model:Pixel_7 device:panther transport_id:3\n"
        "R58M123ABC             unauthorized usb:1-1 transport_id:4\n"
        "0123456789             no permissions (user in plugdev group; are your udev rules wrong?); "
        "see [http://developer.android.com/tools/device.html] usb:1-2 transport_id:5\n"
        "emulator-5554          offline transport_id:1\n"
    )
    entries = parse_devices(text)
    assert [(e.serial, e.state) for e in entries][:2] == [
        ("127.0.0.1:6000", "device"),
        ("R58M123ABC", "unauthorized"),
    ]
    assert entries[0].model == "Pixel_7" and entries[0].properties["transport_id"] == "3"
    assert entries[2].state.startswith("no permissions") and entries[2].properties["usb"] == "1-2"
    assert entries[3].state == "offline"
    assert parse_devices("") == []


# ----- key store --------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def key():
    return generate_private_key()


def test_key_json_round_trip_and_webcrypto_shape(key):
    data = key_to_json(key)
    jwk = json.loads(data)
    assert set(jwk) == {"kty", "n", "e", "d"} and jwk["e"] == "AQAB"
    assert key_from_json(data) == key
    jwk.update({"alg": "RS256", "ext": True, "key_ops": ["sign"], "p": "x", "q": "y"})
    assert key_from_json(json.dumps(jwk)) == key


def test_a_broken_key_is_refused(key):
    with pytest.raises(AdbKeyError, match="unreadable"):
        key_from_json(b"not json")
    jwk = json.loads(key_to_json(key))
    jwk["d"] = jwk["e"]
    with pytest.raises(AdbKeyError, match="inconsistent"):
        key_from_json(json.dumps(jwk))


async def test_file_store_creates_the_key_once_with_mode_0600(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    path = default_key_path()
    assert path == tmp_path / "phone-agent" / "adbkey"
    store = FileKeyStore()
    first = await load_or_create_key(store)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
    assert await load_or_create_key(FileKeyStore(path)) == first


async def test_memory_store_replaces_an_unreadable_key():
    store = MemoryKeyStore(b"garbage")
    key = await load_or_create_key(store)
    assert store.data is not None and key_from_json(store.data) == key
