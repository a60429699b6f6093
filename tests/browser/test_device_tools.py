"""The phone as tools on both channels: every device tool through the MCP SDK's stdio client (relayed
to the page) and through WebMCP (``page.webmcp.call_tool``), on the simulated phone, checked by the
phone's own state as Debian's adb sees it — not by the tool's answer. Every answer is validated
against the tool's own output schema, and every error code is produced and checked on both channels.

One page and one ``phone-agent mcp`` serve the whole module.
"""

from __future__ import annotations

import asyncio
import re

import pytest

from tests.browser.rigs import CHANNELS

pytestmark = pytest.mark.browser


def ref_of(listed: dict, **match) -> str:
    for element in listed["elements"]:
        if all(element.get(key) == value for key, value in match.items()):
            return element["ref"]
    raise AssertionError(f"no element {match}")


@pytest.mark.parametrize("channel", CHANNELS)
async def test_bluetooth_switched_by_locator_and_by_ref(fresh, channel):
    rig = fresh
    assert await rig.adb_shell("settings get global bluetooth_on") == "0"
    await rig.ok(channel, "tap", target="text=Settings")
    listed = await rig.ok(channel, "list_elements")
    assert listed["app"]["packageName"] == "com.android.settings"
    await rig.ok(channel, "tap", target=ref_of(listed, text="Connected devices"))
    switch = (await rig.ok(channel, "list_elements", target="role=switch"))["elements"][0]
    await rig.ok(channel, "tap", target=switch["ref"])
    assert await rig.adb_shell("settings get global bluetooth_on") == "1"
    await rig.ok(channel, "wait_for", target="role=switch", condition="checked", timeoutMs=3000)


@pytest.mark.parametrize("channel", CHANNELS)
async def test_list_elements_text_lists_one_element_a_line(fresh, channel):
    result = await fresh.call(channel, "list_elements")
    lines = result["content"][0]["text"].splitlines()
    # The role said in brackets, but for text (the most common): `@e5 Wi-Fi is on [610,505]`.
    assert lines and all(re.match(r"^@e\d+ (.*\(\w+\) )?.*\[\d+,\d+\]", line) for line in lines), lines
    assert any("(button)" in line for line in lines) and not any("(text)" in line for line in lines)
    assert len(lines) == len(result["structuredContent"]["elements"])


@pytest.mark.parametrize("channel", CHANNELS)
async def test_non_ascii_typed_into_messages_reads_back_from_the_ui_dump(fresh, channel):
    rig = fresh
    await rig.ok(channel, "open_app", packageName="com.google.android.apps.messaging")
    await rig.ok(channel, "tap", target="text=Zhang San")  # the conversation list: open the thread
    typed = await rig.ok(channel, "type_text", text="明天见 ✓ Zoë", target="role=input")
    assert typed["typed"] == "明天见 ✓ Zoë"
    assert 'text="明天见 ✓ Zoë"' in await rig.ui_dump()


@pytest.mark.parametrize("channel", CHANNELS)
async def test_wait_for_a_screen_that_appears_later_and_one_that_never_does(fresh, channel):
    rig = fresh

    async def later() -> None:
        await asyncio.sleep(1.0)
        await rig.adb.output("-s", rig.serial, "shell", "am start -n com.android.settings/.Settings")

    opener = asyncio.ensure_future(later())
    waited = await rig.ok(channel, "wait_for", target="text=Network & internet", condition="visible")
    await opener
    assert waited["waitedMs"] >= 500
    error = await rig.fails(
        channel, "wait_for", "timeout", target="text=Never shown", condition="visible", timeoutMs=800
    )
    assert error["retryable"] is True


@pytest.mark.parametrize("channel", CHANNELS)
async def test_apps_keys_urls_screen_and_gestures(fresh, channel):
    rig = fresh
    await rig.ok(channel, "open_app", packageName="com.phoneagent.catalog")
    app = await rig.ok(channel, "get_current_app")
    assert app["packageName"] == "com.phoneagent.catalog"
    swiped = await rig.ok(channel, "swipe", direction="up")
    assert swiped["startY"] > swiped["endY"]
    assert rig.sim.phone.catalog_scroll > 0
    await rig.ok(channel, "press_key", key="home")
    assert "NexusLauncher" in await rig.adb_shell("dumpsys window | grep mCurrentFocus")
    apps = await rig.ok(channel, "list_apps", includeSystem=True)
    assert {"packageName": "com.android.settings"} in apps["apps"]
    opened = await rig.ok(channel, "open_url", url="https://example.com/")
    assert opened["packageName"] == "com.android.chrome"
    await rig.ok(channel, "stop_app", packageName="com.android.chrome")
    assert "com.android.chrome" not in await rig.adb_shell("dumpsys window | grep mCurrentFocus")
    await rig.ok(channel, "long_press", x=540, y=1200, durationMs=200)
    info = await rig.ok(channel, "get_screen_info")
    assert (info["width"], info["height"], info["orientation"]) == (1080, 2400, "portrait")
    await rig.ok(channel, "set_orientation", orientation="landscape")
    assert await rig.adb_shell("settings get system user_rotation") == "1"
    await rig.ok(channel, "set_orientation", orientation="portrait")
    small = await rig.call(channel, "take_screenshot", maxSide=512, format="jpeg")
    assert small["content"][0]["mimeType"] == "image/jpeg"
    assert max(small["structuredContent"]["width"], small["structuredContent"]["height"]) == 512


@pytest.mark.parametrize("channel", CHANNELS)
async def test_scroll_to_reaches_an_item_far_down(fresh, channel):
    rig = fresh
    from phone_agent.sim.android.data import CATALOG_ITEMS

    await rig.ok(channel, "open_app", packageName="com.phoneagent.catalog")
    name = CATALOG_ITEMS[-1].name
    found = await rig.ok(channel, "scroll_to", target=f"textContains={name}", maxSwipes=40)
    assert found["swipes"] >= 1 and name in found["element"]["text"]
    assert name in await rig.ui_dump()


@pytest.mark.parametrize("channel", CHANNELS)
async def test_every_error_code_with_its_remedy(fresh, channel):
    rig = fresh
    listed = await rig.ok(channel, "list_elements")
    old = ref_of(listed, text="Settings")
    await rig.ok(channel, "open_app", packageName="com.android.settings")
    stale = await rig.fails(channel, "tap", "stale_ref", target=old)
    assert stale["retryable"] is True and "list_elements" in stale["remedy"]
    await rig.fails(channel, "tap", "no_such_element", target="text=Nothing like this")
    await rig.fails(channel, "tap", "off_screen", x=9999, y=5)
    missing = await rig.fails(channel, "open_app", "app_not_installed", packageName="com.example.nothere")
    assert "list_apps" in missing["remedy"]
    await rig.fails(channel, "wait_for", "timeout", target="text=Never", condition="visible", timeoutMs=300)
    bad = await rig.fails(channel, "tap", "invalid_argument", target="nonsense")
    assert bad["details"]["field"] == "target"
    await rig.fails(channel, "swipe", "invalid_argument", direction="sideways")
    await rig.fails(channel, "tap", "invalid_argument", x=1, y=2, extra=3)
    if channel == "mcp":  # WebMCP callers only see the registered tools
        await rig.fails(channel, "no_such_tool", "unknown_tool")
