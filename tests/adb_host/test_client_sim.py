"""AdbClient and the services against the simulated phone over TCP: every service, both protocol
versions, and the authentication flows (known key, new key accepted, prompt then approve, denied)."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import urllib.request
import weakref

import pytest

from phone_agent.adb.client import AdbAuthError, AdbClient, AdbError
from phone_agent.adb.connection import ConnectionState
from phone_agent.adb.device import AdbDevice
from phone_agent.adb.host import HOST_FEATURES
from phone_agent.adb.keys import generate_private_key
from phone_agent.adb.packet import VERSION_MIN, VERSION_SKIP_CHECKSUM
from phone_agent.adb.services import SyncClient, exec_out, shell
from phone_agent.adb.sync_protocol import SyncError
from phone_agent.server.adb_tcp import TcpTransport, connect_adbd


async def test_handshake_negotiates_features_and_payload(client, sim):
    connection = client.connection
    assert connection is not None
    assert connection.version == VERSION_SKIP_CHECKSUM
    assert connection.max_payload == 1024 * 1024
    assert {"shell_v2", "stat_v2", "ls_v2"} <= client.features
    assert ("delayed_ack" in client.features) == ("delayed_ack" in sim.banner())
    assert connection.properties["ro.product.model"] == sim.phone.props["ro.product.model"]
    assert client.state is ConnectionState.ONLINE


async def test_shell_v2_gives_stdout_stderr_and_exit_code(client):
    result = await shell(client, "echo out; echo err >&2; exit 7")
    assert (result.stdout, result.stderr, result.exit_code) == (b"out\n", b"err\n", 7)


async def test_shell_v2_stdin_reaches_the_command_and_is_closed(client):
    data = os.urandom(200_000).hex().encode()
    result = await shell(client, "cat", stdin=data, timeout=20)
    assert result.exit_code == 0 and result.stdout == data


async def test_raw_shell_when_shell_v2_is_not_shared(sim, host_key):
    client = await connect_adbd("127.0.0.1", sim.port, host_key, features=("stat_v2",))
    try:
        assert "shell_v2" not in client.features
        result = await shell(client, "echo hi; echo there >&2")
        assert result.exit_code == -1 and b"hi\n" in result.stdout and b"there\n" in result.stdout
    finally:
        await client.close()


async def test_exec_is_binary_safe_for_a_large_file(client, sim):
    data = os.urandom(3 * 1024 * 1024 + 17)
    sim.fs.write_file("/data/local/tmp/blob.bin", data)
    assert await exec_out(client, "cat /data/local/tmp/blob.bin") == data


async def test_exec_screencap_is_a_png(client):
    png = await exec_out(client, "screencap -p")
    assert png.startswith(b"\x89PNG\r\n\x1a\n")


async def test_sync_push_stat_list_pull_round_trip(client, sim):
    data = os.urandom(5 * 1024 * 1024 + 3)
    async with await SyncClient.open(client) as sync:
        await sync.push(data, "/data/local/tmp/new/dir/f.bin", mode=0o700, mtime=1_700_000_000)
        info = await sync.stat("/data/local/tmp/new/dir/f.bin")
        assert info.is_file and info.size == len(data) and info.mtime == 1_700_000_000
        assert (info.mode & 0o777) == 0o777  # adbd copies the user bits to group and other
        names = {entry.name: entry.stat for entry in await sync.list("/data/local/tmp/new/dir")}
        assert names["f.bin"].size == len(data)
        assert await sync.pull("/data/local/tmp/new/dir/f.bin") == data
    assert sim.fs.read_file("/data/local/tmp/new/dir/f.bin") == data


async def test_sync_v1_stat_and_list_without_v2_features(sim, host_key):
    sim.fs.write_file("/sdcard/v1.txt", b"hello")
    client = await connect_adbd("127.0.0.1", sim.port, host_key, features=("shell_v2",))
    try:
        async with await SyncClient.open(client) as sync:
            info = await sync.stat("/sdcard/v1.txt")
            assert info.is_file and info.size == 5
            missing = await sync.stat("/sdcard/none")
            assert not missing.exists
            assert "v1.txt" in [e.name for e in await sync.list("/sdcard")]
    finally:
        await client.close()


async def test_sync_errors_carry_the_phones_reason(client):
    async with await SyncClient.open(client) as sync:
        with pytest.raises(SyncError, match="No such file"):
            await sync.pull("/sdcard/missing.bin")
        with pytest.raises(SyncError, match="open a new one"):  # adbd ends the session after FAIL
            await sync.stat("/sdcard/missing.bin")
    async with await SyncClient.open(client) as sync:
        info = await sync.stat("/sdcard/missing.bin")
        assert not info.exists and info.error != 0


async def test_many_streams_at_once(client):
    results = await asyncio.gather(*(shell(client, f"echo {i}") for i in range(12)))
    assert [r.stdout for r in results] == [f"{i}\n".encode() for i in range(12)]


async def test_a_finished_stream_is_freed_without_the_cyclic_collector(client):
    # A stream in a reference cycle lives, with what it still buffers, until Python's next full
    # collection: in the page that let Pyodide's wasm memory grow for good (it never shrinks).
    stream = await client.open_stream("shell:echo hi")
    assert stream.capabilities.drain is not None
    assert await stream.read_all(timeout=10) == b"hi\n"
    await stream.close()
    gone = weakref.ref(stream)
    gc.disable()
    try:
        del stream
        assert gone() is None
    finally:
        gc.enable()


async def test_unknown_service_is_refused_clearly(client):
    with pytest.raises(AdbError, match="refused the service 'nosuch:'"):
        await client.open_stream("nosuch:")


@pytest.mark.parametrize("delayed_ack", [False, True], ids=["no-delayed-ack", "delayed-ack"])
@pytest.mark.parametrize("version", [VERSION_MIN, VERSION_SKIP_CHECKSUM], ids=["v1.0.0", "v1.0.1"])
async def test_both_versions_with_and_without_delayed_ack(sim, host_key, version, delayed_ack):
    if delayed_ack and "delayed_ack" not in sim.banner():
        pytest.skip("this simulated phone does not offer delayed_ack")
    features = HOST_FEATURES if delayed_ack else tuple(f for f in HOST_FEATURES if f != "delayed_ack")
    client = await connect_adbd("127.0.0.1", sim.port, host_key, version=version, features=features)
    try:
        assert client.version == version
        assert client._protocol.checksums is (version == VERSION_MIN)
        assert ("delayed_ack" in client.features) is delayed_ack
        data = os.urandom(3 * 1024 * 1024 + 5)
        sim.fs.write_file("/data/local/tmp/v.bin", data)
        assert await exec_out(client, "cat /data/local/tmp/v.bin") == data
        async with await SyncClient.open(client) as sync:
            await sync.push(data, "/data/local/tmp/w.bin")
            assert await sync.pull("/data/local/tmp/w.bin") == data
        assert sim.fs.read_file("/data/local/tmp/w.bin") == data
        result = await shell(client, "cat", stdin=data[:300_000].hex().encode())
        assert result.stdout == data[:300_000].hex().encode()
        connection = next(c for c in sim.connections() if c["state"] == "device")
        assert connection["version"] == f"0x{version:08x}"
    finally:
        await client.close()


async def test_small_max_payload_splits_writes(sim, host_key):
    client = await connect_adbd("127.0.0.1", sim.port, host_key, max_payload=4096)
    try:
        assert client.max_payload == 4096
        data = os.urandom(100_000)
        result = await shell(client, "cat", stdin=data.hex().encode())
        assert result.stdout == data.hex().encode()
    finally:
        await client.close()


# ----- authentication ---------------------------------------------------------------------------


async def test_known_key_connects_without_a_prompt(sim, host_key):
    states: list[ConnectionState] = []
    client = await connect_adbd("127.0.0.1", sim.port, host_key, on_state=states.append)
    await client.close()
    assert ConnectionState.WAITING_FOR_USER not in states
    assert states[-1] is ConnectionState.ONLINE or ConnectionState.ONLINE in states


async def test_new_key_is_offered_and_accepted(make_sim):
    sim = await make_sim(auth="accept")
    key = generate_private_key()
    states: list[ConnectionState] = []
    client = await connect_adbd("127.0.0.1", sim.port, key, on_state=states.append)
    await client.close()
    assert ConnectionState.WAITING_FOR_USER in states and ConnectionState.ONLINE in states
    (trusted,) = sim.trusted_keys.values()
    assert trusted.n == key.n and trusted.comment == "phone-agent@browser"
    # Next time the same key is known: no prompt.
    states.clear()
    client = await connect_adbd("127.0.0.1", sim.port, key, on_state=states.append)
    await client.close()
    assert ConnectionState.WAITING_FOR_USER not in states


async def test_prompt_then_approve_through_the_control_endpoint(make_sim):
    sim = await make_sim(auth="prompt")
    key = generate_private_key()
    prompted = asyncio.Event()

    def on_state(state: ConnectionState) -> None:
        if state is ConnectionState.WAITING_FOR_USER:
            prompted.set()

    transport = await TcpTransport.open("127.0.0.1", sim.port)
    client = AdbClient(transport, key, key_name="tester@ci", on_state=on_state)
    connecting = asyncio.create_task(client.connect(timeout=5, auth_timeout=20))
    await asyncio.wait_for(prompted.wait(), 5)
    assert client.state is ConnectionState.WAITING_FOR_USER

    def approve() -> dict:
        pending = json.loads(
            urllib.request.urlopen(f"http://127.0.0.1:{sim.control_port}/auth/pending", timeout=5).read()
        )
        assert [p["comment"] for p in pending] == ["tester@ci"]
        request = urllib.request.Request(
            f"http://127.0.0.1:{sim.control_port}/auth/approve", data=b"{}", method="POST"
        )
        return json.loads(urllib.request.urlopen(request, timeout=5).read())

    approved = await asyncio.to_thread(approve)
    assert len(approved["approved"]) == 1
    await asyncio.wait_for(connecting, 10)
    try:
        assert (await shell(client, "echo ok")).stdout == b"ok\n"
    finally:
        await client.close()


async def test_a_denied_key_ends_in_bounded_time_with_an_actionable_error(make_sim):
    sim = await make_sim(auth="prompt")
    key = generate_private_key()
    transport = await TcpTransport.open("127.0.0.1", sim.port)
    client = AdbClient(transport, key)
    connecting = asyncio.create_task(client.connect(timeout=5, auth_timeout=1.0))
    await asyncio.sleep(0.3)
    sim.deny()
    started = asyncio.get_running_loop().time()
    with pytest.raises(AdbAuthError, match="Allow USB debugging"):
        await asyncio.wait_for(connecting, 10)
    assert asyncio.get_running_loop().time() - started < 3
    assert transport.closed


class _Opened:
    """The client as AdbDevice sees it, writing down the exec: services it opens."""

    def __init__(self, opener) -> None:
        self.opener, self.services = opener, []

    @property
    def features(self):
        return self.opener.features

    async def open_stream(self, service: str, timeout: float | None = None):
        if service.startswith("exec:"):
            self.services.append(service)
        return await self.opener.open_stream(service, timeout=timeout)


async def test_a_screenshot_takes_the_faster_of_raw_and_png_screencap(client):
    spy = _Opened(client)
    device = AdbDevice(spy, transport="tcp")
    first, second = await device.screenshot_png(), await device.screenshot_png()
    assert spy.services == ["exec:screencap", "exec:screencap -p"]  # each way timed once
    assert first.startswith(b"\x89PNG\r\n\x1a\n") and second.startswith(b"\x89PNG\r\n\x1a\n")
    device._screencap_s = {True: 0.1, False: 0.5}  # raw was the faster here: it stays
    await device.screenshot_png()
    assert spy.services[-1] == "exec:screencap"
    device._screencap_s = {True: 9.0, False: 0.5}  # the phone's PNG was: it is used
    await device.screenshot_png()
    assert spy.services[-1] == "exec:screencap -p"
    only_png = _Opened(client)
    png_device = AdbDevice(only_png, transport="tcp", raw_screencap=False)  # the page's way
    await png_device.screenshot_png()
    await png_device.screenshot_png()
    assert only_png.services == ["exec:screencap -p"] * 2
