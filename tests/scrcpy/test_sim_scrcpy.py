"""The simulated phone speaks scrcpy 2.5, driven by the project's CPython ADB client (ScrcpyClient):
the jar is pushed once, the server runs under app_process, the video decodes to the phone's screen,
control messages reach the virtual UI, and the failures read like the real server's."""

from __future__ import annotations

import asyncio

import av
import pytest
from PIL import Image, ImageChops, ImageStat

from phone_agent.adb.services import SyncClient, shell
from phone_agent.scrcpy import control as ctl
from phone_agent.scrcpy.client import ScrcpyClient, ScrcpyClosed, ScrcpyStartError
from phone_agent.scrcpy.h264 import avc_codec_string
from phone_agent.scrcpy.protocol import CODEC_H264, DEVICE_PATH, ScrcpyServerOptions


async def decode_until(scrcpy: ScrcpyClient, decoder, frames: int = 1, timeout: float = 10.0) -> Image.Image:
    """Feed packets to a PyAV decoder until ``frames`` pictures came out; the last one."""
    image = None
    async with asyncio.timeout(timeout):
        while frames > 0:
            for packet in await scrcpy.read_packets():
                for frame in decoder.decode(av.Packet(packet.data)):
                    image = frame.to_image()
                    frames -= 1
    return image


def difference(a: Image.Image, b: Image.Image) -> float:
    """Mean absolute difference per channel (0–255) after scaling ``b`` to ``a``'s size."""
    diff = ImageChops.difference(a.convert("RGB"), b.convert("RGB").resize(a.size, Image.BILINEAR))
    return sum(ImageStat.Stat(diff).mean) / 3


async def test_the_stream_shows_the_phone_screen_and_follows_it(client, sim, jar):
    scrcpy = ScrcpyClient(client, jar, ScrcpyServerOptions(max_size=1024, max_fps=30))
    meta = await scrcpy.start()
    try:
        assert (meta.codec_id, meta.width, meta.height) == (CODEC_H264, 464, 1024)
        assert scrcpy.device_name == "Pixel 7" and scrcpy.pushed
        first = await scrcpy.read_packets()
        assert first[0].key_frame and avc_codec_string(first[0].data).startswith("avc1.42")
        decoder = av.CodecContext.create("h264", "r")
        image = None
        for packet in first:
            for frame in decoder.decode(av.Packet(packet.data)):
                image = frame.to_image()
        assert image is not None and image.size == (464, 1024)
        assert difference(image, sim.phone.screenshot()) < 6
        # the screen changes (Settings opens): a new frame shows it
        result = await shell(client, "am start -n com.android.settings/.Settings")
        assert result.exit_code == 0
        image = await decode_until(scrcpy, decoder, frames=2)
        assert sim.phone.state()["screen"] == "settings/main"
        assert difference(image, sim.phone.screenshot()) < 6
        ps = await shell(client, "ps -A")
        assert b" app_process\n" in ps.stdout
        assert len(sim.phone.change_listeners) == 1  # the stream is told of changes as they happen
    finally:
        await scrcpy.close()
    await asyncio.sleep(0.2)
    assert b"app_process" not in (await shell(client, "ps -A")).stdout
    assert sim.phone.change_listeners == []  # and stops listening when it ends


async def test_a_still_screen_is_repeated_at_least_once_a_second(client, jar):
    scrcpy = ScrcpyClient(client, jar, ScrcpyServerOptions(max_size=480, max_fps=10))
    await scrcpy.start()
    try:
        await scrcpy.read_packets()
        loop = asyncio.get_running_loop()
        start = loop.time()
        await asyncio.wait_for(scrcpy.read_packets(), 2.0)
        assert loop.time() - start <= 1.5
    finally:
        await scrcpy.close()


async def test_the_jar_is_pushed_only_when_the_phone_lacks_that_exact_file(client, sim, jar):
    first = ScrcpyClient(client, jar, ScrcpyServerOptions(max_size=320))
    await first.start()
    await first.close()
    assert first.pushed and sim.fs.read_file(DEVICE_PATH) == jar
    second = ScrcpyClient(client, jar, ScrcpyServerOptions(max_size=320))
    await second.start()
    await second.close()
    assert not second.pushed


async def test_control_messages_tap_type_and_press_keys_on_the_virtual_ui(client, sim, jar):
    scrcpy = ScrcpyClient(client, jar, ScrcpyServerOptions(max_size=1024))
    await scrcpy.start()
    try:
        w, h = scrcpy.video_size
        await shell(client, "am start -n com.google.android.apps.messaging/.ui.ConversationListActivity")
        before = sim.phone.state()["screen"]
        # BACK, as a key event, leaves the app
        await scrcpy.send(ctl.key_press(4))
        await wait_for(lambda: sim.phone.state()["screen"] != before)
        assert sim.phone.state()["screen"] == "home"
        # a tap (touch down/up in the video's coordinates) on the Settings icon opens Settings
        node = next(n for n in sim.phone.windows()[0].walk() if n.text == "Settings")
        x, y = _center(node.bounds)
        vx, vy = round(x * w / 1080), round(y * h / 2400)
        await scrcpy.send(ctl.inject_touch(ctl.MOTION_DOWN, vx, vy, w, h))
        await scrcpy.send(ctl.inject_touch(ctl.MOTION_UP, vx, vy, w, h, pressure=0.0))
        await wait_for(lambda: sim.phone.state()["screen"] == "settings/main")
        # a touch for another screen size is ignored, as the real server does
        await scrcpy.send(ctl.key_press(4))
        await wait_for(lambda: sim.phone.state()["screen"] == "home")
        await scrcpy.send(ctl.inject_touch(ctl.MOTION_DOWN, vx, vy, w + 8, h))
        await scrcpy.send(ctl.inject_touch(ctl.MOTION_UP, vx, vy, w + 8, h, pressure=0.0))
        await asyncio.sleep(0.3)
        assert sim.phone.state()["screen"] == "home"
        # text and clipboard paste (with its acknowledgement) into a focused field
        await shell(client, "am start -a android.intent.action.VIEW -d https://example.com")
        state = sim.phone.state()
        assert state["screen"] == "browser/page"
        sim.phone.tap(*_url_bar(sim))
        await scrcpy.send(ctl.inject_text("hello "))
        await scrcpy.set_clipboard("你好", paste=True)
        await wait_for(lambda: sim.phone.state()["focused_text"] == "hello 你好")
        assert sim.phone.state()["clipboard"] == "你好"
    finally:
        await scrcpy.close()


def _url_bar(sim) -> tuple[float, float]:
    for window in sim.phone.windows():
        for node in window.walk():
            if node.resource_id.endswith(":id/url_bar"):
                return _center(node.bounds)
    raise AssertionError("no url bar")


def _center(bounds) -> tuple[float, float]:
    x1, y1, x2, y2 = bounds
    return (x1 + x2) / 2, (y1 + y2) / 2


async def wait_for(condition, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


async def test_a_wrong_version_fails_with_the_servers_message(client, jar):
    async with await SyncClient.open(client) as sync:
        await sync.push(jar, DEVICE_PATH)
    command = f"CLASSPATH={DEVICE_PATH} app_process / com.genymobile.scrcpy.Server 2.4 tunnel_forward=true"
    result = await shell(client, command)
    assert result.exit_code == 1
    assert result.stderr.startswith(
        b"[server] ERROR: The server version (2.5) does not match the client (2.4)\n"
        b"java.lang.IllegalArgumentException: The server version (2.5) does not match the client (2.4)\n"
    )


async def test_a_jar_with_another_hash_does_not_run_as_2_5(client, jar):
    async with await SyncClient.open(client) as sync:
        await sync.push(jar[:-1] + b"x", DEVICE_PATH)
    result = await shell(
        client, f"CLASSPATH={DEVICE_PATH} app_process / com.genymobile.scrcpy.Server 2.5 tunnel_forward=true"
    )
    assert result.exit_code == 1
    assert b"does not match the client (2.5)" in result.stderr
    scrcpy = ScrcpyClient(client, jar[:-1] + b"x")
    with pytest.raises(ScrcpyStartError, match=r"not the 2\.5 release"):
        await scrcpy.start()


async def test_a_phone_without_scrcpy_says_why(make_sim, host_key, jar):
    from phone_agent.server.adb_tcp import connect_adbd

    sim = await make_sim(scrcpy=False)
    sim.trust_key(host_key.public_key("tests@scrcpy"))
    client = await connect_adbd("127.0.0.1", sim.port, host_key)
    try:
        scrcpy = ScrcpyClient(client, jar)
        with pytest.raises(ScrcpyStartError, match="app_process: inaccessible or not found"):
            await scrcpy.start(timeout=10)
    finally:
        await client.close()


def test_phone_agent_sim_no_scrcpy_builds_a_phone_without_app_process():
    import argparse

    from phone_agent.sim.commandline import add_sim_arguments, build_sim

    parser = argparse.ArgumentParser()
    add_sim_arguments(parser)
    assert build_sim(parser.parse_args(["--no-scrcpy"])).scrcpy.enabled is False
    assert build_sim(parser.parse_args([])).scrcpy.enabled is True


async def test_the_phone_closing_the_sockets_ends_the_stream_and_the_control_socket(client, sim, jar):
    from phone_agent.adb.client import AdbError
    from phone_agent.scrcpy.client import ScrcpyClosed

    scrcpy = ScrcpyClient(client, jar, ScrcpyServerOptions(max_size=320))
    await scrcpy.start()
    try:
        await scrcpy.read_packets()
        (process,) = sim.scrcpy.running()
        process.stop()
        with pytest.raises(ScrcpyClosed):
            async with asyncio.timeout(5):
                while True:
                    await scrcpy.read_packets()
        with pytest.raises(AdbError, match="closed"):
            async with asyncio.timeout(5):
                while True:
                    await scrcpy.send(ctl.key_press(4))
                    await asyncio.sleep(0.05)
    finally:
        await scrcpy.close()
    assert b"app_process" not in (await shell(client, "ps -A")).stdout


async def test_a_stream_cut_inside_a_packet_says_so_and_an_injected_packet_arrives_as_sent(client, sim, jar):
    from phone_agent.scrcpy.client import ScrcpyClosed

    scrcpy = ScrcpyClient(client, jar, ScrcpyServerOptions(max_size=320))
    await scrcpy.start()
    try:
        await scrcpy.read_packets()
        (process,) = sim.scrcpy.running()
        garbage = bytes(range(256)) * 8
        process.inject(garbage, key_frame=True)  # a corrupt frame: the client passes it on untouched
        async with asyncio.timeout(5):
            while not any(p.data == garbage for p in await scrcpy.read_packets()):
                pass
        process.inject(garbage, cut_after=12 + 100)  # the 12-byte header and 100 bytes of 2048
        with pytest.raises(ScrcpyClosed, match=r"in the middle of a packet \(100 of its 2048 bytes came\)"):
            async with asyncio.timeout(5):
                while True:
                    await scrcpy.read_packets()
    finally:
        await scrcpy.close()
    assert b"app_process" not in (await shell(client, "ps -A")).stdout


async def test_kill_of_app_process_ends_the_server_and_closes_its_sockets(client, jar):
    scrcpy = ScrcpyClient(client, jar, ScrcpyServerOptions(max_size=480, max_fps=10))
    await scrcpy.start()
    try:
        await scrcpy.read_packets()
        ps = (await shell(client, "ps -A")).stdout.decode().splitlines()
        pid = next(line.split()[1] for line in ps if line.endswith(" app_process"))
        assert (await shell(client, f"kill {pid}")).exit_code == 0
        with pytest.raises(ScrcpyClosed):
            async with asyncio.timeout(5):
                while True:
                    await scrcpy.read_packets()
    finally:
        await scrcpy.close()
    await asyncio.sleep(0.2)
    assert b"app_process" not in (await shell(client, "ps -A")).stdout
