"""The ADB bridge: /adb?target=HOST:PORT relays bytes both ways to a TCP service, loopback only,
and only once the page's first bytes are ADB.

A byte-echoing TCP server stands in for adbd here (past the first bytes the bridge never reads
them); the simulated phone behind the same bridge is exercised by the ADB and browser tests.
"""

from __future__ import annotations

import asyncio
import os

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from phone_agent.adb.packet import AdbPacket, Command
from phone_agent.adb.smart_socket import encode_request
from phone_agent.server.adb_bridge import (
    NEED_MORE,
    NOT_ADB,
    BadTarget,
    BridgePolicy,
    answers_as_adb,
    first_request_size,
    parse_bridge_target,
)
from tests.server.harness import free_port, origin_of, serve_process


def test_targets_parse_and_only_loopback_is_allowed_by_default():
    assert parse_bridge_target("127.0.0.1:5555") == ("127.0.0.1", 5555)
    assert parse_bridge_target("[::1]:5037") == ("::1", 5037)
    for bad in (None, "", "5555", "host:", "host:port", "h:70000", ":5555"):
        with pytest.raises(BadTarget):
            parse_bridge_target(bad)
    policy = BridgePolicy()
    assert policy.allows("127.0.0.1") and policy.allows("localhost") and policy.allows("::1")
    assert policy.allows("127.0.0.2")
    assert not policy.allows("192.168.1.20") and not policy.allows("phone.example")
    assert BridgePolicy(frozenset({"192.168.1.20"})).allows("192.168.1.20")


CNXN = AdbPacket(Command.CNXN, 0x01000001, 1 << 20, b"host::\x00").encode()
DEVICE_CNXN = AdbPacket(
    Command.CNXN, 0x01000001, 1 << 20, b"device::ro.product.model=Pixel;features=shell_v2,cmd"
).encode()
ATTACK_REQUEST = b"002ehost\r\nSET pwned 1\r\nGET / HTTP/1.1\r\nHost: x\r\n\r\n"


def test_only_an_adb_start_opens_the_link():
    assert first_request_size(CNXN) == len(CNXN)  # the whole CNXN packet, banner included
    assert first_request_size(CNXN[:24]) == NEED_MORE  # the banner is checked whole before anything goes
    assert first_request_size(CNXN[:23]) == NEED_MORE
    assert first_request_size(b"000chost:version") == 16  # an adb-server request
    assert first_request_size(b"000chost:versionMORE") == 16  # what follows waits
    assert first_request_size(b"0022host-serial:emulator-5554:features") == 4 + 0x22
    assert first_request_size(encode_request("host:transport:emulator-5554")) == 4 + 28
    assert first_request_size(b"000ehost:devices-l") == 4 + 0xE
    assert first_request_size(encode_request("host:track-devices")) == 4 + 18  # the page watches its phones
    assert (
        first_request_size(encode_request("host:transport:emulator-5554")[:20]) == NEED_MORE
    )  # not all there yet
    assert first_request_size(b"000c") == NEED_MORE
    for other in (
        b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"*1\r\n$4\r\nPING\r\n" + b"\x00" * 16,  # redis
        b"0012shell:rm -rf /sdcard",  # a service without host: first
        AdbPacket(Command.OPEN, 1, 0, b"shell:id\x00").encode(),  # ADB, but not a handshake
        CNXN[:20] + b"\x00\x00\x00\x00",  # CNXN without its magic
    ):
        assert first_request_size(other) == NOT_ADB, other


def test_only_the_adb_server_requests_the_page_sends_pass_and_never_a_line_break():
    assert len(ATTACK_REQUEST) == 50 and first_request_size(ATTACK_REQUEST) == NOT_ADB
    # Refused from its first bad byte, before the rest of the announced length arrives.
    assert first_request_size(ATTACK_REQUEST[:9]) == NOT_ADB
    for service in (
        b"host:kill",  # a real adb-server request, but not one the page makes
        b"host:track-jdwp",
        b"host:version\r\n",
        b"host:transport:emulator-5554\nSET a 1",
        b"host:transport:",
        b"host:transport:with space",
        b"host-serial:x:features\x00",
        b"host-serial:x:reboot",
        b"hostile",
        b"host:" + "é".encode(),
        b"",
    ):
        assert first_request_size(f"{len(service):04x}".encode() + service) == NOT_ADB, service
    assert first_request_size(b"ffffhost:transport:") == NOT_ADB  # far longer than any the page sends


def test_only_a_printable_host_banner_opens_a_link_to_an_adbd():
    def cnxn(banner: bytes) -> bytes:
        return AdbPacket(Command.CNXN, 0x01000001, 1 << 20, banner).encode()

    good = cnxn(b"host::features=shell_v2,cmd,stat_v2,ls_v2,fixed_push_mkdir,delayed_ack")
    assert first_request_size(good) == len(good)
    assert first_request_size(cnxn(b"host::features=shell_v2\x00")) > 0  # one NUL at the end
    for banner in (
        b"host::\r\nSET pwned 1\r\n",
        b"host::features=a\nb",
        b"host::\x00trailing",
        b"host::\x00\x00",
        b"device::ro.product.model=x",  # the page is the host
        b"GET / HTTP/1.1",
        b"host::\x1b[31m",
        b"host::" + "é".encode(),
    ):
        assert first_request_size(cnxn(banner)) == NOT_ADB, banner
    bad = cnxn(b"host::\r\nSET pwned 1\r\n")
    assert first_request_size(bad[:32]) == NOT_ADB  # refused at the CR, not at the banner's end
    assert first_request_size(cnxn(b"host::" + b"x" * 5000)) == NOT_ADB  # CNXN is at most 4 KiB


def test_only_an_adb_answer_lets_the_rest_through():
    to_server = b"000chost:version"
    assert answers_as_adb(b"OKAY0004001f", to_server) is True
    assert answers_as_adb(b"FAIL0010device not found", to_server) is True
    assert answers_as_adb(b"OKA", to_server) is None
    assert answers_as_adb(b"-ERR unknown command", to_server) is False
    assert answers_as_adb(to_server, to_server) is False  # an echo
    assert answers_as_adb(b"HTTP/1.1 400 Bad Request", CNXN) is False
    assert answers_as_adb(DEVICE_CNXN, CNXN) is True
    assert answers_as_adb(DEVICE_CNXN[:30], CNXN) is None  # the banner is read whole
    assert answers_as_adb(AdbPacket(Command.AUTH, 1, 0, b"t" * 20).encode(), CNXN) is True
    assert answers_as_adb(CNXN[:10], CNXN) is None
    assert answers_as_adb(DEVICE_CNXN, to_server) is False  # an adbd where an adb server was asked


def test_an_answer_that_echoes_the_page_is_no_device():
    assert answers_as_adb(CNXN, CNXN) is False  # the page's own CNXN back
    host_like = AdbPacket(Command.CNXN, 0x01000001, 4096, b"host::features=shell_v2").encode()
    assert answers_as_adb(host_like, CNXN) is False  # another host's banner is no device either
    for banner in (b"device::\r\nSET pwned 1", b"device::x\x00y", b"nothing", b""):
        answer = AdbPacket(Command.CNXN, 0x01000001, 4096, banner).encode()
        assert answers_as_adb(answer, CNXN) is False, banner
    for kind in (b"device", b"recovery", b"sideload", b"rescue", b"bootloader"):
        answer = AdbPacket(Command.CNXN, 0x01000001, 4096, kind + b"::features=shell_v2\x00").encode()
        assert answers_as_adb(answer, CNXN) is True, kind


class FakeTarget:
    """A TCP service on loopback that records what it receives: ``answer`` first (on the first
    bytes), then it echoes, or hangs up when ``hang_up``."""

    def __init__(self, answer: bytes | None = None, hang_up: bool = False) -> None:
        self.answer = answer  # None: echo from the start
        self.hang_up = hang_up
        self.connections = 0
        self.received = b""
        self.server: asyncio.Server | None = None
        self.port = 0

    async def __aenter__(self) -> FakeTarget:
        self.server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self.server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()
        await self.server.wait_closed()

    async def _serve(self, reader, writer) -> None:
        self.connections += 1
        answered = self.answer is None
        while data := await reader.read(65536):
            self.received += data
            if not answered:
                answered = True
                writer.write(self.answer)
                if self.hang_up:
                    break
            else:
                writer.write(data)
            await writer.drain()
        writer.close()


@pytest.fixture(scope="module")
def bridge_server(tmp_path_factory):
    port = free_port()
    with serve_process(["--port", str(port)], tmp_path_factory.mktemp("bridge") / "stderr.log") as served:
        yield served


async def test_bytes_cross_the_bridge_both_ways_unchanged(bridge_server):
    async with FakeTarget(answer=DEVICE_CNXN) as target:  # a device's CNXN first, then an echo
        url = f"ws://127.0.0.1:{bridge_server.port}/adb?target=127.0.0.1:{target.port}"
        async with connect(url, origin=origin_of(bridge_server.port), compression=None) as ws:
            payload = CNXN + os.urandom(3 * 1024 * 1024 + 17)
            for start in range(0, len(payload), 256 * 1024):
                await ws.send(payload[start : start + 256 * 1024])
            expected = DEVICE_CNXN + payload[len(CNXN) :]
            received = b""
            while len(received) < len(expected):
                received += await asyncio.wait_for(ws.recv(), 10)
            assert received == expected
            # The bridge offers no compression (it would halve throughput).
            assert ws.response.headers.get("Sec-WebSocket-Extensions") is None


async def _closed_with(url: str, port: int, *frames: bytes) -> tuple[int, str]:
    async with connect(url, origin=origin_of(port)) as ws:
        for frame in frames:
            try:
                await ws.send(frame)
            except ConnectionClosed:
                break
        with pytest.raises(ConnectionClosed) as info:
            await asyncio.wait_for(ws.recv(), 10)
    return info.value.rcvd.code, info.value.rcvd.reason


async def test_refused_targets_say_why(bridge_server):
    port = bridge_server.port
    base = f"ws://127.0.0.1:{port}/adb"
    code, reason = await _closed_with(f"{base}", port)
    assert code == 4400 and "target" in reason
    code, reason = await _closed_with(f"{base}?target=10.0.0.7:5555", port)
    assert code == 4403 and "--allow-device-host 10.0.0.7" in reason
    closed_port = free_port()
    code, reason = await _closed_with(f"{base}?target=127.0.0.1:{closed_port}", port, CNXN)
    assert code == 4502 and f"127.0.0.1:{closed_port}" in reason


async def test_a_link_that_does_not_start_with_adb_never_reaches_the_target(bridge_server):
    port = bridge_server.port
    async with FakeTarget() as target:
        url = f"ws://127.0.0.1:{port}/adb?target=127.0.0.1:{target.port}"
        request = b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
        code, reason = await _closed_with(url, port, request[:10], request[10:])
    assert code == 4415 and "ADB only" in reason
    assert target.connections == 0  # refused before connecting: no banner, no request


async def test_a_target_that_does_not_answer_as_adb_gets_only_the_first_request(bridge_server):
    port = bridge_server.port
    async with FakeTarget(answer=b"-ERR unknown command '000chost:version'\r\n") as target:
        url = f"ws://127.0.0.1:{port}/adb?target=127.0.0.1:{target.port}"
        code, reason = await _closed_with(url, port, b"000chost:version", b"CONFIG SET dir /tmp\r\n")
    assert code == 4415 and f"127.0.0.1:{target.port} does not answer as" in reason
    assert target.received == b"000chost:version"  # the rest never left the bridge


async def test_a_smuggled_adb_server_request_never_reaches_an_echo_server(bridge_server):
    port = bridge_server.port
    async with FakeTarget() as echo:
        url = f"ws://127.0.0.1:{port}/adb?target=127.0.0.1:{echo.port}"
        code, reason = await _closed_with(url, port, ATTACK_REQUEST)
        assert code == 4415 and "ADB only" in reason
        # In pieces too: the length prefix first, then the lines.
        code, _ = await _closed_with(url, port, ATTACK_REQUEST[:8], ATTACK_REQUEST[8:])
        assert code == 4415
    assert echo.connections == 0 and echo.received == b""  # not one byte of the 50


async def test_a_cnxn_banner_carrying_lines_never_reaches_an_echo_server(bridge_server):
    port = bridge_server.port
    smuggling = AdbPacket(Command.CNXN, 0x01000001, 1 << 20, b"host::\r\nSET pwned 1\r\n").encode()
    async with FakeTarget() as echo:
        url = f"ws://127.0.0.1:{port}/adb?target=127.0.0.1:{echo.port}"
        code, reason = await _closed_with(url, port, smuggling, b"GET / HTTP/1.1\r\n\r\n")
    assert code == 4415 and "ADB only" in reason
    assert echo.connections == 0 and echo.received == b""


async def test_an_echo_server_answering_the_cnxn_with_itself_is_not_taken_for_an_adbd(bridge_server):
    port = bridge_server.port
    async with FakeTarget() as echo:
        url = f"ws://127.0.0.1:{port}/adb?target=127.0.0.1:{echo.port}"
        code, reason = await _closed_with(url, port, CNXN, b"SET pwned 1\r\n")
    assert code == 4415 and f"127.0.0.1:{echo.port} does not answer as" in reason
    assert echo.received == CNXN  # the page's CNXN, and nothing after it


async def test_an_echo_server_answering_an_adb_server_request_with_itself_gets_nothing_more(bridge_server):
    port = bridge_server.port
    async with FakeTarget() as echo:
        url = f"ws://127.0.0.1:{port}/adb?target=127.0.0.1:{echo.port}"
        request = encode_request("host:transport:emulator-5554")
        code, _ = await _closed_with(url, port, request, b"0012shell:echo pwned")
    assert code == 4415 and echo.received == request


async def test_first_bytes_may_come_in_pieces_and_an_adb_server_request_passes(bridge_server):
    async with FakeTarget(answer=b"OKAY0004001f") as target:
        url = f"ws://127.0.0.1:{bridge_server.port}/adb?target=127.0.0.1:{target.port}"
        async with connect(url, origin=origin_of(bridge_server.port)) as ws:
            for piece in (b"00", b"0chos", b"t:versionAND", b"MORE"):
                await ws.send(piece)
            received = b""
            while len(received) < 19:
                received += await asyncio.wait_for(ws.recv(), 10)
            assert received == b"OKAY0004001fANDMORE"  # the answer, then the rest, echoed
    assert target.connections == 1 and target.received == b"000chost:versionANDMORE"


async def test_the_device_closing_closes_the_page_side(bridge_server):
    async with FakeTarget(answer=DEVICE_CNXN, hang_up=True) as target:
        url = f"ws://127.0.0.1:{bridge_server.port}/adb?target=127.0.0.1:{target.port}"
        async with connect(url, origin=origin_of(bridge_server.port)) as ws:
            await ws.send(CNXN)
            assert await asyncio.wait_for(ws.recv(), 10) == DEVICE_CNXN
            with pytest.raises(ConnectionClosed) as info:
                await asyncio.wait_for(ws.recv(), 10)
            assert info.value.rcvd.code == 1000


async def test_the_bridge_checks_origin_like_the_relay(bridge_server):
    async with FakeTarget() as target:
        url = f"ws://127.0.0.1:{bridge_server.port}/adb?target=127.0.0.1:{target.port}"
        with pytest.raises(InvalidStatus):
            async with connect(url, origin="http://evil.example"):
                pass


def test_odd_port_digits_are_a_bad_target_not_a_crash():
    for bad in ("127.0.0.1:\u00b2", "127.0.0.1:" + "9" * 5000, "127.0.0.1:\u0661\u0662"):
        with pytest.raises(BadTarget):
            parse_bridge_target(bad)
