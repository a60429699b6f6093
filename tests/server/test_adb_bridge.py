"""The ADB bridge: /adb?target=HOST:PORT relays bytes both ways to a TCP service, loopback only.

A byte-echoing TCP server stands in for adbd here (the bridge never reads the bytes); the simulated
phone behind the same bridge is exercised by the ADB and browser tests.
"""

from __future__ import annotations

import asyncio
import os

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from phone_agent.server.adb_bridge import BadTarget, BridgePolicy, parse_target
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


@pytest.fixture
async def echo_server():
    async def echo(reader, writer):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
        writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0)
    yield server.sockets[0].getsockname()[1]
    server.close()
    await server.wait_closed()


@pytest.fixture(scope="module")
def bridge_server(tmp_path_factory):
    port = free_port()
    with serve_process(["--port", str(port)], tmp_path_factory.mktemp("bridge") / "stderr.log") as served:
        yield served


async def test_bytes_cross_the_bridge_both_ways_unchanged(bridge_server, echo_server):
    url = f"ws://127.0.0.1:{bridge_server.port}/adb?target=127.0.0.1:{echo_server}"
    async with connect(url, origin=origin_of(bridge_server.port), compression=None) as ws:
        payload = os.urandom(3 * 1024 * 1024 + 17)
        for start in range(0, len(payload), 256 * 1024):
            await ws.send(payload[start : start + 256 * 1024])
        received = b""
        while len(received) < len(payload):
            received += await asyncio.wait_for(ws.recv(), 10)
        assert received == payload
        # The bridge offers no compression (it would halve throughput).
        assert ws.response.headers.get("Sec-WebSocket-Extensions") is None


async def _closed_with(url: str, port: int) -> tuple[int, str]:
    async with connect(url, origin=origin_of(port)) as ws:
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
    code, reason = await _closed_with(f"{base}?target=127.0.0.1:{closed_port}", port)
    assert code == 4502 and f"127.0.0.1:{closed_port}" in reason


async def test_the_device_closing_closes_the_page_side(bridge_server):
    async def hang_up(reader, writer):
        writer.write(b"bye")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(hang_up, "127.0.0.1", 0)
    target = server.sockets[0].getsockname()[1]
    try:
        url = f"ws://127.0.0.1:{bridge_server.port}/adb?target=127.0.0.1:{target}"
        async with connect(url, origin=origin_of(bridge_server.port)) as ws:
            assert await asyncio.wait_for(ws.recv(), 10) == b"bye"
            with pytest.raises(ConnectionClosed) as info:
                await asyncio.wait_for(ws.recv(), 10)
            assert info.value.rcvd.code == 1000
    finally:
        server.close()


async def test_the_bridge_checks_origin_like_the_relay(bridge_server, echo_server):
    url = f"ws://127.0.0.1:{bridge_server.port}/adb?target=127.0.0.1:{echo_server}"
    with pytest.raises(InvalidStatus):
        async with connect(url, origin="http://evil.example"):
            pass


def test_odd_port_digits_are_a_bad_target_not_a_crash():
    for bad in ("127.0.0.1:\u00b2", "127.0.0.1:" + "9" * 5000, "127.0.0.1:\u0661\u0662"):
        with pytest.raises(BadTarget):
            parse_target(bad)
