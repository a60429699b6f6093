"""Debian's real adb drives the simulated phone's scrcpy server the way scrcpy's own client does:
``adb push`` the jar, ``adb forward tcp:X localabstract:scrcpy``, ``adb shell … app_process …``, then
a TCP socket gets the dummy byte, the device name, the codec meta and H.264 packets."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from phone_agent.scrcpy import control as ctl
from phone_agent.scrcpy.protocol import (
    CODEC_H264,
    CodecMeta,
    DeviceMeta,
    ScrcpyServerOptions,
    VideoPacket,
    VideoStreamParser,
    server_command,
)
from tests.scrcpy.conftest import JAR_PATH
from tests.support import free_port

pytestmark = pytest.mark.adb


async def test_debian_adb_forwards_the_scrcpy_socket_of_the_sim(sim, debian_adb, adb_serial, jar):
    serial = adb_serial
    port = free_port()
    server = None
    writer = None
    try:
        await debian_adb.output("-s", serial, "push", str(JAR_PATH), "/data/local/tmp/scrcpy-server.jar")
        await debian_adb.output("-s", serial, "forward", f"tcp:{port}", "localabstract:scrcpy")
        command = server_command(ScrcpyServerOptions(max_size=800, max_fps=15))
        server = await asyncio.create_subprocess_exec(
            "adb", "-P", str(debian_adb.port), "-s", serial, "shell", command,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=debian_adb.env,
        )  # fmt: skip
        reader = None
        for _ in range(50):  # as scrcpy's client: the forward accepts at once, the dummy byte proves it
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            first = await reader.read(1)
            if first == b"\0":
                break
            writer.close()
            await asyncio.sleep(0.1)
        else:
            raise AssertionError("the scrcpy socket never answered")
        _control_reader, control_writer = await asyncio.open_connection("127.0.0.1", port)
        parser = VideoStreamParser(dummy_byte=False)
        events: list = []
        async with asyncio.timeout(15):
            while not any(isinstance(e, VideoPacket) and e.key_frame for e in events):
                events += parser.receive_data(await reader.read(65536))
        assert events[0] == DeviceMeta("Pixel 7")
        assert events[1] == CodecMeta(CODEC_H264, 360, 800)
        assert events[2].config
        # a key press on the control socket reaches the phone
        await debian_adb.output("-s", serial, "shell", "am start -n com.android.settings/.Settings")
        control_writer.write(ctl.key_press(3))  # HOME
        await control_writer.drain()
        async with asyncio.timeout(5):
            while sim.phone.state()["screen"] != "home":
                await asyncio.sleep(0.02)
        ps = await debian_adb.output("-s", serial, "shell", "ps", "-A")
        assert b"app_process" in ps
        control_writer.close()
    finally:
        if writer is not None:
            writer.close()
        if server is not None:
            with contextlib.suppress(ProcessLookupError):
                server.kill()
            await server.wait()
        await debian_adb.run("-s", serial, "forward", "--remove-all")
