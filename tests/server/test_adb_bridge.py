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
from phone_agent.server.adb_bridge import (
    NEED_MORE,
    NOT_ADB,
    BadTarget,
    BridgePolicy,
    answers_as_adb,
    first_request_size,
    parse_target,
)
from tests.server.harness import free_port, origin_of, serve_process


def test_targets_parse_and_only_loopback_is_allowed_by_default():
    assert parse_target("127.0.0.1:5555") == ("127.0.0.1", 5555)
    assert parse_target("[::1]:5037") == ("::1", 5037)
    for bad in (None, "", "5555", "host:", "host:port", "h:70000", ":5555"):
        with pytest.raises(BadTarget):
            parse_target(bad)
    policy = BridgePolicy()
    assert policy.allows("127.0.0.1") and policy.allows("localhost") and policy.allows("::1")
    assert policy.allows("127.0.0.2")
    assert not policy.allows("192.168.1.20") and not policy.allows("phone.example")
    assert BridgePolicy(frozenset({"192.168.1.20"})).allows("192.168.1.20")


CNXN = AdbPacket(Command.CNXN, 0x01000001, 1 << 20, b"host::\x00").encode()


def test_only_an_adb_start_opens_the_link():
    assert first_request_size(CNXN) == len(CNXN)  # the whole CNXN packet, banner included
    assert first_request_size(CNXN[:24]) == len(CNXN)  # the header says how much more to wait for
    assert first_request_size(CNXN[:23]) == NEED_MORE
    assert first_request_size(b"000chost:version") == 16  # an adb-server request
    assert first_request_size(b"000chost:versionMORE") == 16  # what follows waits
    assert first_request_size(b"001bhost-serial:emulator-5554:") == 4 + 0x1B
    assert first_request_size(b"000c") == NEED_MORE
    for other in (
        b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
        b"*1\r\n$4\r\nPING\r\n" + b"\x00" * 16,  # redis
        b"0012shell:rm -rf /sdcard",  # a service without host: first
        AdbPacket(Command.OPEN, 1, 0, b"shell:id\x00").encode(),  # ADB, but not a handshake
        CNXN[:20] + b"\x00\x00\x00\x00",  # CNXN without its magic
    ):
        assert first_request_size(other) == NOT_ADB, other


def test_only_an_adb_answer_lets_the_rest_through():
    assert answers_as_adb(b"OKAY0004001f", to_server=True) is True
    assert answers_as_adb(b"FAIL0010device not found", to_server=True) is True
    assert answers_as_adb(b"OKA", to_server=True) is None
    assert answers_as_adb(b"-ERR unknown command", to_server=True) is False
    assert answers_as_adb(b"HTTP/1.1 400 Bad Request", to_server=False) is False
    assert answers_as_adb(CNXN, to_server=False) is True
    assert answers_as_adb(AdbPacket(Command.AUTH, 1, 0, b"t" * 20).encode(), to_server=False) is True
    assert answers_as_adb(CNXN[:10], to_server=False) is None
    assert answers_as_adb(CNXN, to_server=True) is False  # an adbd where an adb server was asked


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
    async with FakeTarget() as target:  # an echo: its first answer is the CNXN it got, which is ADB
        url = f"ws://127.0.0.1:{bridge_server.port}/adb?target=127.0.0.1:{target.port}"
        async with connect(url, origin=origin_of(bridge_server.port), compression=None) as ws:
            payload = CNXN + os.urandom(3 * 1024 * 1024 + 17)
            for start in range(0, len(payload), 256 * 1024):
                await ws.send(payload[start : start + 256 * 1024])
            received = b""
            while len(received) < len(payload):
                received += await asyncio.wait_for(ws.recv(), 10)
            assert received == payload
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
    async with FakeTarget(answer=CNXN, hang_up=True) as target:
        url = f"ws://127.0.0.1:{bridge_server.port}/adb?target=127.0.0.1:{target.port}"
        async with connect(url, origin=origin_of(bridge_server.port)) as ws:
            await ws.send(CNXN)
            assert await asyncio.wait_for(ws.recv(), 10) == CNXN
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
            parse_target(bad)
