"""The control interface: Python API and the loopback-only JSON endpoint."""

from __future__ import annotations

import asyncio
import base64
import json

import pytest

from phone_agent.adb.keys import generate_private_key
from phone_agent.adb.packet import AdbPacket, AuthType, Command
from phone_agent.sim.state_http import StateClient, StateError
from tests.sim.raw_host import RawHost


async def http(
    port: int, method: str, path: str, body: bytes = b"", host: str | None = None
) -> tuple[int, dict]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    request = (
        f"{method} {path} HTTP/1.1\r\nHost: {host or f'127.0.0.1:{port}'}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body
    writer.write(request)
    response = await asyncio.wait_for(reader.read(), 5)
    writer.close()
    head, _, payload = response.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(payload)


async def test_state_shows_adbd_and_phone(sim, raw_host):
    status, state = await http(sim.control_port, "GET", "/state")
    assert status == 200
    assert state["serial"] == sim.serial and state["auth"] == "accept"
    assert [c["state"] for c in state["connections"]] == ["device"]
    assert "phone" in state and isinstance(state["phone"], dict)


async def test_non_loopback_host_is_refused(sim):
    status, body = await http(sim.control_port, "GET", "/state", host="evil.example:80")
    assert status == 403 and "loopback" in body["error"]
    assert (await http(sim.control_port, "GET", "/state", host="localhost"))[0] == 200


async def test_reset_and_files(sim):
    sim.fs.write_file("/sdcard/Download/note.txt", b"hi")
    status, body = await http(sim.control_port, "GET", "/files?path=/sdcard/Download/note.txt")
    assert status == 200 and base64.b64decode(body["base64"]) == b"hi"
    assert (await http(sim.control_port, "POST", "/reset"))[0] == 200
    assert (await http(sim.control_port, "GET", "/files?path=/sdcard/Download/note.txt"))[0] == 404


async def test_unknown_route_and_wrong_method(sim):
    assert (await http(sim.control_port, "GET", "/nope"))[0] == 404
    assert (await http(sim.control_port, "GET", "/auth/approve"))[0] == 405


async def test_prompt_mode_pending_key_approved_over_http(make_sim):
    sim = await make_sim("prompt")
    key = generate_private_key()
    host = await RawHost.connect(sim.port)
    host.send(AdbPacket(Command.CNXN, 0x01000001, 1 << 20, b"host::features=shell_v2\x00"))
    token = await host.recv()
    host.send(AdbPacket(Command.AUTH, AuthType.SIGNATURE, 0, key.sign(token.payload)))
    assert (await host.recv()).arg0 == AuthType.TOKEN  # unknown key: a new token
    host.send(AdbPacket(Command.AUTH, AuthType.RSAPUBLICKEY, 0, key.public_key("me@host").encode()))
    for _ in range(50):
        if sim.pending_keys():
            break
        await asyncio.sleep(0.02)
    status, pending = await http(sim.control_port, "GET", "/auth/pending")
    assert status == 200 and pending[0]["comment"] == "me@host"
    assert sim.connections()[0]["state"] == "unauthorized"
    status, body = await http(sim.control_port, "POST", "/auth/approve", json.dumps(pending[0]).encode())
    assert body == {"approved": [pending[0]["fingerprint"]]}
    connected = await host.recv()
    assert connected.command == Command.CNXN and connected.payload.startswith(b"device::ro.product.name=")
    assert b";features=shell_v2," in connected.payload
    await host.close()
    # The key is now trusted: a new connection signs the token and goes online at once.
    again = await RawHost.connect(sim.port)
    assert (await again.handshake(key)).command == Command.CNXN
    await again.close()


async def test_denied_key_stays_unauthorized(make_sim):
    sim = await make_sim("prompt")
    key = generate_private_key()
    host = await RawHost.connect(sim.port)
    host.send(AdbPacket(Command.CNXN, 0x01000001, 1 << 20, b"host::\x00"))
    await host.recv()
    host.send(AdbPacket(Command.AUTH, AuthType.RSAPUBLICKEY, 0, key.public_key().encode()))
    for _ in range(50):
        if sim.pending_keys():
            break
        await asyncio.sleep(0.02)
    assert len(sim.deny()) == 1
    assert sim.pending_keys() == [] and sim.connections()[0]["state"] == "unauthorized"
    try:
        await host.recv(timeout=0.2)
        raise AssertionError("a denied host got an answer")
    except TimeoutError:
        pass
    await host.close()


async def test_control_client_from_another_thread(sim):
    sim.fs.write_file("/sdcard/Download/a b.txt", b"spaced")

    def use_client() -> tuple:
        client = StateClient(sim.control_port)
        return (
            client.state()["serial"],
            client.phone_state() == sim.phone.state(),
            client.read_file("/sdcard/Download/a b.txt"),
            client.pending_keys(),
            client.approve(),
        )

    assert await asyncio.to_thread(use_client) == (sim.serial, True, b"spaced", [], [])
    with pytest.raises(StateError, match="404"):
        await asyncio.to_thread(StateClient(sim.control_port).read_file, "/nope")
