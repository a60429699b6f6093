"""Through the host's real adb server (Debian's adb, isolated: own port, own HOME): our client lists
the simulated phone with host:devices-l and uses it via host:transport; screenshots match adb's (our
PNG is written from raw ``screencap``: the same pixels as the phone's own ``screencap -p``)."""

from __future__ import annotations

import asyncio
import contextlib
import io

import pytest
from PIL import Image

from phone_agent.adb.client import AdbConnectionLost, AdbError
from phone_agent.adb.device import AdbDevice
from phone_agent.adb.services import SyncClient, exec_out, shell
from phone_agent.adb.smart_socket import AdbServerClient, AdbServerError
from phone_agent.adb.transport import PLAIN_TRANSPORT
from phone_agent.server.adb_tcp import adb_server_client, connect_adbd
from tests.support import free_port

pytestmark = pytest.mark.adb


@pytest.fixture
def held(sim, adb_serial):
    """A simulated phone connected to the isolated adb server: (sim, its adb serial)."""
    return sim, adb_serial


async def test_version_and_devices_l(debian_adb, held):
    sim, serial = held
    server = adb_server_client(port=debian_adb.port)
    assert await server.version() >= 39
    entry = next(e for e in await server.devices() if e.serial == serial)
    assert entry.state == "device"
    assert entry.model == sim.phone.props["ro.product.model"].replace(" ", "_")
    assert "transport_id" in entry.properties


async def test_services_through_host_transport(debian_adb, held):
    sim, serial = held
    device = await adb_server_client(port=debian_adb.port).device(serial)
    assert "shell_v2" in device.features
    result = await shell(device, "echo out; echo err >&2; exit 5")
    assert (result.stdout, result.stderr, result.exit_code) == (b"out\n", b"err\n", 5)
    data = bytes(range(256)) * 4096
    sim.fs.write_file("/data/local/tmp/b.bin", data)
    assert await exec_out(device, "cat /data/local/tmp/b.bin") == data
    async with await SyncClient.open(device) as sync:
        await sync.push(data, "/data/local/tmp/c.bin")
        assert (await sync.stat("/data/local/tmp/c.bin")).size == len(data)
        assert await sync.pull("/data/local/tmp/c.bin") == data


def pixels(png: bytes) -> bytes:
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    return Image.open(io.BytesIO(png)).convert("RGBA").tobytes()


async def test_adb_device_over_the_adb_server_and_screenshot_equals_adb_exec_out(debian_adb, held, host_key):
    sim, serial = held
    direct = await connect_adbd("127.0.0.1", sim.port, host_key)
    try:
        direct_png = await AdbDevice(direct, transport="tcp").screenshot_png()
    finally:
        await direct.close()
    opener = await adb_server_client(port=debian_adb.port).device(serial)
    device = AdbDevice(opener, transport="adb-server", serial=serial)
    info = await device.info()
    assert info["transport"] == "adb-server" and info["screenWidth"] == 1080
    ours = await device.screenshot_png()
    code, theirs, err = await debian_adb.run("-s", serial, "exec-out", "screencap", "-p")
    assert code == 0, err
    again = await device.screenshot_png()  # the status-bar clock may tick between the two
    assert pixels(theirs) in (pixels(ours), pixels(again))
    assert direct_png in (ours, again)
    assert [n.label for n in await device.ui_nodes()]


async def test_unknown_serial_fails_with_the_servers_message(debian_adb):
    server = adb_server_client(port=debian_adb.port)
    # An unknown (or unplugged) serial means the phone is gone: AdbConnectionLost with the server's words.
    with pytest.raises(AdbConnectionLost, match="not found"):
        await server.open_service("no-such-serial", "shell:true")
    with pytest.raises(AdbServerError, match="unknown"):
        await server.query("host:no-such-query")


async def test_no_adb_server_is_a_clear_error():
    server = adb_server_client(port=free_port(), timeout=2)
    with pytest.raises(AdbError, match="cannot connect"):
        await server.version()


async def test_the_servers_phones_are_tracked_as_they_come_and_go(debian_adb, held):
    _sim, serial = held
    server = adb_server_client(port=debian_adb.port)

    def state(entries) -> str | None:
        return next((entry.state for entry in entries if entry.serial == serial), None)

    async with contextlib.aclosing(server.track_devices()) as updates:
        assert state(await asyncio.wait_for(anext(updates), 10)) == "device"  # the list now, at once
        await debian_adb.run("disconnect", serial)
        while state(await asyncio.wait_for(anext(updates), 10)) is not None:
            pass  # it may say "offline" first
        await debian_adb.run("connect", serial)
        while state(await asyncio.wait_for(anext(updates), 10)) != "device":
            pass


async def test_a_tracking_that_the_server_ends_is_a_lost_connection():
    async def one_answer_then_closed() -> _OneAnswer:
        return _OneAnswer(b"OKAY" + b"0000")

    updates = AdbServerClient(one_answer_then_closed).track_devices()
    assert await anext(updates) == []
    with pytest.raises(AdbConnectionLost, match="stopped telling its phones"):
        await anext(updates)


class _OneAnswer:
    """A pipe to an 'adb server' that answers once and then closes."""

    capabilities = PLAIN_TRANSPORT

    def __init__(self, answer: bytes) -> None:
        self.answer = answer
        self.sent: list[bytes] = []

    async def send(self, data: bytes) -> None:
        self.sent.append(bytes(data))

    async def receive(self) -> bytes:
        answer, self.answer = self.answer, b""
        return answer

    async def close(self) -> None:
        pass
