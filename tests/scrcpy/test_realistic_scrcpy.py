"""``--realistic`` through scrcpy: a swipe sent as control messages drags the list with the finger
and flings it on after the lift, and the video stream sends frames all the while (the default phone
jumps once); a FLAG_SECURE screen is black in the stream too."""

from __future__ import annotations

import asyncio
import contextlib
import time

from phone_agent.adb.device import AdbDevice
from phone_agent.scrcpy.client import ScrcpyClient
from phone_agent.scrcpy.device import ScrcpyDevice
from phone_agent.scrcpy.protocol import ScrcpyServerOptions
from phone_agent.sim.realistic import RealisticProfile

SIM_OPTIONS = {"realistic": RealisticProfile(21)}


async def settle(sim, timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while sim.phone.motion.animating():
            await asyncio.sleep(0.05)


async def test_a_swipe_animates_in_the_stream_and_flings_on(client, sim, jar):
    scrcpy = ScrcpyClient(client, jar, ScrcpyServerOptions(max_size=512, max_fps=30))
    await scrcpy.start()

    async def drain() -> None:  # read the video as a viewer does
        with contextlib.suppress(Exception):
            while True:
                await scrcpy.read_packets()

    reader = asyncio.create_task(drain())
    try:
        device = ScrcpyDevice(AdbDevice(client, transport="tcp"), scrcpy, (1080, 2400))
        await client_shell(client, "monkey -p com.phoneagent.catalog 1")
        await settle(sim)
        (process,) = sim.scrcpy.running()
        scrolls: list[int] = []
        frames_before = process.frames_sent
        swipe = asyncio.create_task(device.swipe(540, 1900, 540, 900, 300))
        started = time.monotonic()
        while not swipe.done() or sim.phone.motion.animating():
            scrolls.append(sim.phone.catalog_scroll)
            await asyncio.sleep(0.02)
            assert time.monotonic() - started < 10
        await swipe
        frames = process.frames_sent - frames_before
        final = sim.phone.catalog_scroll
        assert any(0 < value < 1000 for value in scrolls)  # it moved with the finger
        assert final > 1000  # and flung on past the finger's 1000 px
        assert any(1000 < value < final for value in scrolls)
        assert frames >= 8, frames  # frames throughout, not one jump
    finally:
        reader.cancel()
        await scrcpy.close()


async def client_shell(client, command: str) -> None:
    from phone_agent.adb.services import shell

    await shell(client, command)
