"""The device tools end to end in CPython: the page's one dispatch, the project's ADB client, the
simulated phone. Each test checks the phone's own state (the sim's, or adb shell's view of it), not
only the tool's answer, and every answer is checked against the tool's own output schema."""

from __future__ import annotations

import asyncio
import io

import jsonschema
from PIL import Image

from phone_agent.tools.catalog import TOOLS_BY_NAME
from phone_agent.tools.dispatch import ToolDispatcher
from phone_agent.tools.spec import Channel


async def call(ctx: ToolDispatcher, tool: str, **args) -> dict:
    result = await ctx.dispatch(tool, args, Channel.RELAY)
    if not result.get("isError"):
        schema = TOOLS_BY_NAME[tool].output_schema
        jsonschema.validate(result["structuredContent"], schema)
    return result


async def ok(ctx: ToolDispatcher, tool: str, **args) -> dict:
    result = await call(ctx, tool, **args)
    assert not result.get("isError"), result
    return result["structuredContent"]


async def fails(ctx: ToolDispatcher, tool: str, code: str, **args) -> dict:
    result = await call(ctx, tool, **args)
    assert result.get("isError"), result
    error = result["structuredContent"]
    assert error["code"] == code, error
    assert error["message"] == result["content"][0]["text"]
    assert error["remedy"] and isinstance(error["retryable"], bool)
    return error


async def shell(ctx: ToolDispatcher, command: str) -> str:
    return (await ctx.device.shell(command)).text.strip()


def ref_of(listed: dict, **match) -> str:
    for element in listed["elements"]:
        if all(element.get(key) == value for key, value in match.items()):
            return element["ref"]
    labels = [e.get("text") or e.get("desc") for e in listed["elements"]]
    raise AssertionError(f"no element {match} in {labels}")


async def test_list_elements_gives_refs_roles_and_one_line_each(ctx, sim):
    listed = await call(ctx, "list_elements")
    data = listed["structuredContent"]
    assert data["screen"] == {"width": 1080, "height": 2400}
    assert data["app"]["packageName"]
    refs = [element["ref"] for element in data["elements"]]
    assert refs == [f"@e{n}" for n in range(1, len(refs) + 1)]
    lines = listed["content"][0]["text"].splitlines()
    assert len(lines) == len(refs)
    settings = next(e for e in data["elements"] if e.get("text") == "Settings" or e.get("desc") == "Settings")
    line = next(line for line in lines if line.startswith(settings["ref"] + " "))
    assert f"[{settings['center']['x']},{settings['center']['y']}]" in line
    assert f"({settings['role']})" in line
    tops = [(e["bounds"]["y1"], e["bounds"]["x1"]) for e in data["elements"]]
    assert tops == sorted(tops)  # reading order
    few = await ok(ctx, "list_elements", maxElements=2)
    assert len(few["elements"]) == 2 and few["truncated"] is True


async def test_bluetooth_on_by_locator_and_ref_as_adb_sees_it(ctx, sim):
    assert await shell(ctx, "settings get global bluetooth_on") == "0"
    await ok(ctx, "tap", target="text=Settings")
    assert (await ok(ctx, "get_current_app"))["packageName"] == "com.android.settings"
    listed = await ok(ctx, "list_elements")
    await ok(ctx, "tap", target=ref_of(listed, text="Connected devices"))
    listed = await ok(ctx, "list_elements", target="role=switch")
    assert len(listed["elements"]) >= 1
    switch = listed["elements"][0]
    assert switch.get("checked", False) is False
    tapped = await ok(ctx, "tap", target=switch["ref"])
    assert tapped["target"] == switch["ref"]
    assert await shell(ctx, "settings get global bluetooth_on") == "1"
    assert sim.phone.bluetooth is True
    await ok(ctx, "wait_for", target="role=switch", condition="checked")


async def test_a_ref_from_a_changed_screen_is_stale(ctx, sim):
    listed = await ok(ctx, "list_elements")
    settings = ref_of(listed, text="Settings")
    await ok(ctx, "open_app", packageName="com.android.settings")
    error = await fails(ctx, "tap", "stale_ref", target=settings)
    assert error["retryable"] is True and "list_elements" in error["remedy"]
    await fails(ctx, "tap", "stale_ref", target="@e999")


async def test_a_ref_before_any_list_is_stale(ctx, sim):
    await fails(ctx, "tap", "stale_ref", target="@e1")


async def test_errors_are_codes_with_remedies(ctx, sim):
    await fails(ctx, "tap", "no_such_element", target="text=No such thing here")
    await fails(ctx, "tap", "off_screen", x=5000, y=10)
    await fails(ctx, "swipe", "off_screen", startX=10, startY=10, endX=10, endY=9000)
    await fails(ctx, "open_app", "app_not_installed", packageName="com.example.nothere")
    await fails(ctx, "stop_app", "app_not_installed", packageName="com.example.nothere")
    bad = await fails(ctx, "tap", "invalid_argument", target="text=Settings", x=1, y=2)
    assert bad["details"]["field"] == "target"
    await fails(ctx, "tap", "invalid_argument")
    await fails(ctx, "tap", "invalid_argument", x=4)
    await fails(ctx, "tap", "invalid_argument", target="button=OK")
    await fails(ctx, "swipe", "invalid_argument", direction="up", startX=1, startY=1, endX=2, endY=2)
    await fails(ctx, "press_key", "invalid_argument", key="not a key")
    await fails(ctx, "press_key", "invalid_argument", key="KEYCODE_NOPE")  # a made-up KEYCODE_ name
    await fails(ctx, "open_url", "invalid_argument", url="not a url")
    await fails(ctx, "scroll_to", "invalid_argument", target="@e1")
    await fails(ctx, "wait_for", "invalid_argument", target="text=x", condition="sleeping")


async def test_no_phone_is_no_device_for_every_device_tool():
    service = ToolDispatcher()
    for name in ("list_elements", "get_current_app", "get_screen_info", "list_apps"):
        result = await service.dispatch(name, {}, Channel.WEBMCP)
        assert result["structuredContent"]["code"] == "no_device"


async def test_type_non_ascii_into_messages_and_read_it_back(ctx, sim):
    await ok(ctx, "open_app", packageName="com.google.android.apps.messaging")
    await ok(ctx, "tap", target="text=Zhang San")  # the conversation list: open the thread
    field = await ok(ctx, "list_elements", target="role=input")
    typed = await ok(ctx, "type_text", text="你好, Zoë ✓", target=field["elements"][0]["ref"])
    assert typed["method"] == "ADBKeyBoard" and typed["typed"] == "你好, Zoë ✓"
    again = await ok(ctx, "list_elements", target="role=input")
    assert again["elements"][0]["text"] == "你好, Zoë ✓"
    await ok(ctx, "type_text", text="plain", target="role=input", clear=True)
    assert (await ok(ctx, "list_elements", target="role=input"))["elements"][0]["text"] == "plain"


async def test_wait_for_a_screen_that_appears_later_and_one_that_never_does(ctx, sim):
    async def later() -> None:
        await asyncio.sleep(0.8)
        sim.phone.launch("com.android.settings")

    opener = asyncio.ensure_future(later())
    waited = await ok(ctx, "wait_for", target="text=Connected devices", condition="visible", timeoutMs=10_000)
    await opener
    assert waited["waitedMs"] >= 500 and waited["element"]["text"] == "Connected devices"
    error = await fails(
        ctx, "wait_for", "timeout", target="text=Never there", condition="visible", timeoutMs=600
    )
    assert error["retryable"] is True
    gone = await ok(ctx, "wait_for", target="text=Never there", condition="gone", timeoutMs=600)
    assert gone["waitedMs"] < 600


async def test_scroll_to_finds_an_item_far_down_the_list(ctx, sim):
    await ok(ctx, "open_app", packageName="com.phoneagent.catalog")
    listed = await ok(ctx, "list_elements")
    texts = [e.get("text") for e in listed["elements"] if e.get("text")]
    assert sim.phone.catalog_scroll == 0
    from phone_agent.sim.android.data import CATALOG_ITEMS

    name = CATALOG_ITEMS[-1].name
    assert name not in texts
    found = await ok(ctx, "scroll_to", target=f"textContains={name}", maxSwipes=40)
    assert found["swipes"] >= 1 and name in found["element"]["text"]
    assert sim.phone.catalog_scroll > 0
    await ok(ctx, "tap", target=found["element"]["ref"])  # its ref is valid on the screen it found
    await fails(ctx, "scroll_to", "no_such_element", target="text=Not in the catalog", maxSwipes=2)


async def test_keys_apps_urls_and_screen(ctx, sim):
    await ok(ctx, "open_app", packageName="catalog")  # a unique part of a package name is enough
    assert sim.phone.current == "com.phoneagent.catalog"
    await fails(ctx, "open_app", "invalid_argument", packageName="google")  # but not an ambiguous one
    assert (await ok(ctx, "press_key", key="home")) == {"key": "KEYCODE_HOME"}
    assert sim.phone.current is None
    apps = await ok(ctx, "list_apps", includeSystem=True)
    assert {"packageName": "com.android.settings"} in apps["apps"]
    user_apps = await ok(ctx, "list_apps")
    assert len(user_apps["apps"]) < len(apps["apps"])
    opened = await ok(ctx, "open_url", url="https://example.com/")
    assert opened == {"url": "https://example.com/", "packageName": "com.android.chrome"}
    await ok(ctx, "stop_app", packageName="com.android.chrome")
    assert sim.phone.current != "com.android.chrome"
    info = await ok(ctx, "get_screen_info")
    assert info["width"] == 1080 and info["height"] == 2400 and info["orientation"] == "portrait"
    assert info["density"] > 0 and info["screenOn"] is True
    await ok(ctx, "set_orientation", orientation="landscape")
    assert await shell(ctx, "settings get system user_rotation") == "1"
    assert (await ok(ctx, "get_screen_info"))["orientation"] == "landscape"
    await ok(ctx, "set_orientation", orientation="portrait")


async def test_gestures_report_their_points(ctx, sim):
    swiped = await ok(ctx, "swipe", direction="up")
    assert swiped["startY"] > swiped["endY"] and swiped["startX"] == swiped["endX"]
    await ok(ctx, "swipe", startX=500, startY=1500, endX=500, endY=900, durationMs=100)
    pressed = await ok(ctx, "long_press", x=540, y=1200, durationMs=300)
    assert pressed == {"x": 540, "y": 1200, "durationMs": 300}
    double = await ok(ctx, "tap", x=100, y=100, double=True)
    assert double["double"] is True


async def test_take_screenshot_is_the_full_png_unless_scaled(ctx, sim):
    full = await call(ctx, "take_screenshot")
    assert [item["type"] for item in full["content"]] == ["image"]
    assert full["content"][0]["mimeType"] == "image/png"
    assert full["structuredContent"]["width"] == 1080
    small = await call(ctx, "take_screenshot", maxSide=1024, format="jpeg")
    image, note = small["content"]
    assert image["mimeType"] == "image/jpeg"
    import base64

    picture = Image.open(io.BytesIO(base64.b64decode(image["data"])))
    assert max(picture.size) == 1024
    data = small["structuredContent"]
    assert (data["width"], data["height"]) == picture.size
    assert (data["deviceWidth"], data["deviceHeight"]) == (1080, 2400)
    assert "1080x2400" in note["text"] and "device pixels" in note["text"].lower()
    assert full["structuredContent"]["source"] == data["source"] == "phone"
    # CPython has no live view: source "live" says so (and how to get a screenshot), never falls back
    live = await call(ctx, "take_screenshot", source="live")
    assert live["isError"] and live["structuredContent"]["code"] == "invalid_argument"
    assert live["content"][0]["text"] == (
        'take_screenshot cannot answer source "live": there is no live view here (scrcpy runs in the '
        "phone-agent page)."
    )
    assert 'source "phone"' in live["structuredContent"]["remedy"]
