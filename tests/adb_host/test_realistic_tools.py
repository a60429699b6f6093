"""The device tools against the realistic phone's behaviours (``--realistic``): the soft keyboard covers
a target (off_screen, remedy press_key back), a FLAG_SECURE screen is said to be secure, the permission
dialog is read and answered. The behaviours without the costs (``scale=0``) keep these quick; the costs
themselves are tested through Debian's adb in tests/sim/test_realistic_adb.py."""

from __future__ import annotations

import base64
import io

from PIL import Image

from phone_agent.sim.realistic import RealisticProfile
from phone_agent.tools.dispatch import ToolDispatcher
from tests.adb_host.test_device_tools import call, fails, ok

SIM_OPTIONS = {"realistic": RealisticProfile(7, scale=0.0)}


async def open_pin_screen(ctx: ToolDispatcher) -> None:
    await ctx.device.shell("am start -a android.settings.SECURITY_SETTINGS")
    await ok(ctx, "tap", target="text=Screen lock")


async def test_a_target_under_the_keyboard_is_off_screen_until_back_hides_it(ctx, sim):
    await open_pin_screen(ctx)
    await ok(ctx, "tap", target="id=password_entry")
    listed = await ok(ctx, "list_elements")
    assert any(e.get("desc") == "Keyboard" for e in listed["elements"])  # the IME window is on screen
    assert sim.phone.state()["keyboard"] is True
    error = await fails(ctx, "tap", "off_screen", target="text=Next")
    assert "press_key" in error["remedy"] and "back" in error["remedy"]
    assert error["retryable"] is True and error["details"]["keyboardTop"] < 2104
    assert sim.phone.state()["screen"] == "settings/confirm_pin"  # the tap did not land anywhere
    await ok(ctx, "press_key", key="back")
    state = sim.phone.state()
    assert state["keyboard"] is False and state["screen"] == "settings/confirm_pin"
    assert state["focused_field"] == "com.android.settings:id/password_entry"  # Back kept the focus
    await ok(ctx, "tap", target="text=Next")
    assert sim.phone.state()["screen"] != "settings/confirm_pin"


async def test_take_screenshot_of_a_secure_screen_says_so(ctx, sim):
    plain = await call(ctx, "take_screenshot")
    assert "secure" not in plain["structuredContent"]
    assert [part["type"] for part in plain["content"]] == ["image"]
    await open_pin_screen(ctx)
    shot = await call(ctx, "take_screenshot")
    assert shot["structuredContent"]["secure"] is True
    texts = [part["text"] for part in shot["content"] if part["type"] == "text"]
    assert any("secure window (FLAG_SECURE)" in text for text in texts)
    image = next(part for part in shot["content"] if part["type"] == "image")

    pixels = Image.open(io.BytesIO(base64.b64decode(image["data"]))).convert("RGB")
    assert pixels.getpixel((540, 700)) == (0, 0, 0)  # black where the app is, as on a phone
    listed = await ok(ctx, "list_elements")  # the tree still reads
    assert any(e.get("text") == "Re-enter your PIN" for e in listed["elements"])
    scaled = await call(ctx, "take_screenshot", maxSide=512, format="jpeg")
    assert scaled["structuredContent"]["secure"] is True


async def test_the_permission_dialog_is_read_and_answered(ctx, sim):
    await ok(ctx, "open_app", packageName="com.google.android.GoogleCamera")
    listed = await ok(ctx, "list_elements")
    assert listed["app"]["packageName"] == "com.google.android.permissioncontroller"
    texts = [e.get("text") for e in listed["elements"]]
    assert "Allow Camera to take pictures and record video?" in texts
    assert {"While using the app", "Only this time", "Don't allow"} <= set(texts)
    await ok(ctx, "tap", target="text=While using the app")
    assert sim.phone.state()["permissions"] == {"com.google.android.GoogleCamera": "granted"}
    app = await ok(ctx, "get_current_app")
    assert app["packageName"] == "com.google.android.GoogleCamera"
    await ok(ctx, "stop_app", packageName="com.google.android.GoogleCamera")
    await ok(ctx, "open_app", packageName="com.google.android.GoogleCamera")
    assert sim.phone.state()["permission_dialog"] is None  # granted: asked once
