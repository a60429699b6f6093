"""ScrcpyDevice against the simulated phone: the Device calls go as control messages (the sim's
control messages count them, no `input` runs) with the same effect as `input`; a dead control socket
falls back to `input` and says why."""

from __future__ import annotations

import asyncio

import pytest

from phone_agent.adb.device import AdbDevice
from phone_agent.errors import DeviceError
from phone_agent.scrcpy.client import ScrcpyClient
from phone_agent.scrcpy.device import ScrcpyDevice
from phone_agent.scrcpy.protocol import ScrcpyServerOptions


async def wait_for(condition, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0.02)


def center_of(sim, text: str) -> tuple[int, int]:
    for window in sim.phone.windows():
        for node in window.walk():
            if node.text == text or node.resource_id.endswith(text):
                x1, y1, x2, y2 = node.bounds
                return (x1 + x2) // 2, (y1 + y2) // 2
    raise AssertionError(f"no {text!r} on screen")


@pytest.fixture
async def scrcpy_device(client, sim, jar):
    plain = AdbDevice(client, transport="tcp")
    scrcpy = ScrcpyClient(client, jar, ScrcpyServerOptions(max_size=1024, max_fps=15))
    await scrcpy.start()
    reasons: list[str] = []
    device = ScrcpyDevice(plain, scrcpy, (1080, 2400), on_fallback=reasons.append)
    device.reasons = reasons
    try:
        yield device
    finally:
        await scrcpy.close()


def server_of(sim):
    (process,) = sim.scrcpy.running()
    return process


async def test_tap_swipe_keys_and_text_go_through_the_control_socket(scrcpy_device, sim):
    process = server_of(sim)
    await scrcpy_device.tap(*center_of(sim, "Settings"))
    await wait_for(lambda: sim.phone.state()["screen"] == "settings/main")
    await scrcpy_device.press_key("home")
    await wait_for(lambda: sim.phone.state()["screen"] == "home")
    await scrcpy_device.tap(*center_of(sim, "Catalog"))
    await wait_for(lambda: sim.phone.state()["screen"] == "catalog/list")
    await scrcpy_device.swipe(540, 1800, 540, 900, 200)
    await wait_for(lambda: sim.phone.state()["catalog_scroll"] > 0)
    await scrcpy_device.press_key("back")
    await wait_for(lambda: sim.phone.state()["screen"] == "home")
    assert process.control_messages >= 8
    assert scrcpy_device.reasons == []


async def test_text_ascii_is_injected_and_other_text_is_pasted(scrcpy_device, sim, client):
    from phone_agent.adb.services import shell

    await shell(client, "am start -a android.intent.action.VIEW -d https://example.com")
    await scrcpy_device.tap(*center_of(sim, ":id/url_bar"))
    await wait_for(lambda: sim.phone.state()["focused_field"] is not None)
    assert await scrcpy_device.type_text("abc ") == "scrcpy text"
    assert await scrcpy_device.type_text("日本") == "scrcpy clipboard"
    await wait_for(lambda: sim.phone.state()["focused_text"] == "abc 日本")


async def test_an_unknown_key_fails_as_the_plain_device_does(scrcpy_device):
    with pytest.raises(DeviceError, match="unknown key"):
        await scrcpy_device.press_key("no-such-key")


async def test_a_dead_control_socket_falls_back_to_input_and_says_why(scrcpy_device, sim):
    await scrcpy_device.scrcpy._control.close()
    await scrcpy_device.tap(*center_of(sim, "Settings"))
    await wait_for(lambda: sim.phone.state()["screen"] == "settings/main")
    assert scrcpy_device.reasons and "control socket" in scrcpy_device.reasons[0]


async def test_pinch_and_the_clipboard_go_through_scrcpy_as_tools(scrcpy_device, sim, client):
    """pinch (two pointers) and the clipboard tools through the catalog with scrcpy's control socket."""
    from phone_agent.adb.services import shell
    from phone_agent.tools.dispatch import ToolDispatcher
    from phone_agent.tools.spec import Channel

    service = ToolDispatcher()
    service.device = scrcpy_device

    async def ok(tool: str, **args) -> dict:
        result = await service.dispatch(tool, args, Channel.RELAY)
        assert not result.get("isError"), result
        return result["structuredContent"]

    await ok("open_app", packageName="com.google.android.GoogleCamera")
    await wait_for(lambda: sim.phone.state()["screen"] == "camera/main")
    pinched = await ok("pinch", scale=2.0)
    assert (pinched["x"], pinched["y"], pinched["scale"]) == (540, 1200, 2.0)
    await wait_for(lambda: sim.phone.dev.zoom > 1.5)
    assert sim.phone.dev.zoom == pytest.approx(2.0, abs=0.2)
    await ok("pinch", x=540, y=1000, scale=0.5, durationMs=200)
    await wait_for(lambda: sim.phone.dev.zoom < 1.5)
    assert sim.phone.state()["screen"] == "camera/main"  # no finger was taken for a tap or a swipe

    text = "héllo ✓ 你好 🙂"
    assert await ok("set_clipboard", text=text) == {"length": len(text), "pasted": False, "via": "scrcpy"}
    assert sim.phone.clipboard == text
    await shell(client, "am broadcast -a clipper.set -e text 'from the phone'")
    assert await ok("get_clipboard") == {"text": "from the phone"}
    assert scrcpy_device.reasons == []


async def test_settled_once_the_video_is_quiet_after_the_action(scrcpy_device, sim):
    """The screen settled = no video for QUIET_S after the latest action and frame (the page's live
    view reads the frames; here a task does)."""
    from phone_agent.scrcpy.device import QUIET_S

    scrcpy = scrcpy_device.scrcpy

    async def read_video() -> None:
        while True:
            await scrcpy.read_packets()

    reader = asyncio.ensure_future(read_video())
    try:
        await scrcpy_device.tap(*center_of(sim, "Settings"))
        started = asyncio.get_running_loop().time()
        assert await scrcpy_device.wait_settled(2000) is True
        now = asyncio.get_running_loop().time()
        assert now - started >= QUIET_S - 0.01
        assert scrcpy.last_video_at > scrcpy_device.acted_at  # the change came as a frame, then quiet
        assert now >= scrcpy.last_video_at + QUIET_S - 0.01
        assert sim.phone.state()["screen"] == "settings/main"
    finally:
        reader.cancel()
        await asyncio.gather(reader, return_exceptions=True)
