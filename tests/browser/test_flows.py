"""Flows in the real page on both channels: run_flow through the MCP SDK's stdio client (relayed to the
page) and through WebMCP, on the simulated phone, checked with Debian's adb; flows saved on one channel
are the same on the other and in the Flows card, and survive a reload (IndexedDB); the card runs and
records flows.

One page and one ``phone-agent mcp`` serve the whole module.
"""

from __future__ import annotations

import pytest

from phone_agent.sim.server import SimulatedPhoneServer
from tests.browser.rigs import PhoneRig as Rig
from tests.browser.rigs import PhoneRigSpec, centre_of, page_point
from tests.flows.test_run_flow import EVERY_COMMAND, OPEN_CATALOG
from tests.support import eventually

pytestmark = pytest.mark.browser

FLOW = """\
appId: com.google.android.apps.messaging
name: hello on {channel}
env:
  WHO: nobody
---
- launchApp:
    clearState: true
- tapOn:
    id: conversation_name
    index: 0
- tapOn:
    id: compose_message_text
- inputText: ${{WHO}} via {channel}
- assertVisible: ${{WHO}} via {channel}
- tapOn: Send SMS
- assertVisible:
    id: message_text
    text: ${{WHO}} via {channel}
- runFlow:
    when:
      visible: Send SMS
    commands:
      - back
- assertVisible: Messages
"""


# scrcpy off: the live view shows screenshots, whose pixels the clicks below are placed on.
RIG = PhoneRigSpec(query="&scrcpy=0")


@pytest.mark.parametrize("channel", ["mcp", "webmcp"])
async def test_every_command_runs_on_each_channel_and_adb_sees_what_it_did(fresh: Rig, channel):
    result = await fresh.call(
        channel,
        "run_flow",
        yaml=EVERY_COMMAND,
        env={"WHO": "Zoë 你好"},
        files={"subflows/open-catalog.yaml": OPEN_CATALOG},
    )
    report = result["structuredContent"]
    assert report["passed"] is True, [step for step in report["steps"] if step["status"] != "passed"]
    assert report["name"] == "every command" and len(report["steps"]) == 38
    assert fresh.sim.phone.state()["sent"] == [{"to": "Zhang San", "text": "Hello Zoë 你"}]
    assert b"Wi-Fi is disabled" in await fresh.adb.output("-s", fresh.serial, "shell", "dumpsys wifi")
    focus = await fresh.adb.output("-s", fresh.serial, "shell", "dumpsys window")
    assert b"com.android.chrome" in focus
    [shot] = report["screenshots"]
    assert result["content"][shot["image"]]["mimeType"] == "image/png"


@pytest.mark.parametrize("channel", ["mcp", "webmcp"])
async def test_run_flow_on_each_channel_types_non_ascii_and_adb_sees_it_sent(fresh: Rig, channel):
    flow = FLOW.format(channel=channel)
    result = await fresh.call(channel, "run_flow", yaml=flow, env={"WHO": "Zoë 你好"})
    report = result["structuredContent"]
    assert report["passed"] is True, report
    assert report["name"] == f"hello on {channel}"
    assert [step["status"] for step in report["steps"]] == ["passed"] * 9
    assert fresh.sim.phone.state()["sent"] == [{"to": "Zhang San", "text": f"Zoë 你好 via {channel}"}]
    assert f"Zoë 你好 via {channel}" in await fresh.ui_dump()  # the conversation list's snippet


async def test_a_failing_step_answers_the_screen_of_that_moment_on_webmcp(fresh: Rig):
    flow = (
        "appId: com.android.settings\n---\n- launchApp\n"
        "- assertNotVisible:\n    text: Settings\n    timeout: 200\n- back\n"
    )
    result = await fresh.call("webmcp", "run_flow", yaml=flow)
    report = result["structuredContent"]
    assert report["passed"] is False
    assert [step["status"] for step in report["steps"]] == ["passed", "failed", "skipped"]
    assert 'text "Settings" is not visible' in report["steps"][1]["error"]
    image = result["content"][report["failure"]["image"]]
    assert image["type"] == "image" and image["mimeType"] == "image/png"
    bad = await fresh.call("mcp", "run_flow", yaml="appId: a\n---\n- launchApp\n- fly: away\n")
    assert bad["isError"] and bad["structuredContent"]["code"] == "invalid_flow"
    assert bad["structuredContent"]["details"] == {"line": 4, "column": 3}


async def test_flows_are_one_set_on_every_channel_in_the_card_and_after_a_reload(fresh: Rig):
    page = fresh.page
    flow = "appId: com.android.settings\n---\n- launchApp\n- tapOn: Network & internet\n- tapOn: Wi-Fi\n"
    saved = await fresh.call("webmcp", "save_flow", name="wifi toggle", yaml=flow)
    assert saved["structuredContent"]["commands"] == 3
    listed = await fresh.call("mcp", "list_flows")
    assert "wifi toggle" in [item["name"] for item in listed["structuredContent"]["flows"]]
    row = page.locator('#flow-list li[data-flow="wifi toggle"]')
    await row.wait_for(timeout=10_000)
    await page.reload()
    await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=60_000)
    got = await fresh.call("mcp", "get_flow", name="wifi toggle")
    assert got["structuredContent"]["yaml"] == flow
    # The card runs it: Wi-Fi goes off, as Debian's adb sees it.
    await page.locator('#flow-list li[data-flow="wifi toggle"] button[data-action="run"]').click()
    await page.wait_for_selector("#flow-state[data-flow-state=passed]", timeout=30_000)
    out = await fresh.adb.output("-s", fresh.serial, "shell", "dumpsys wifi")
    assert b"Wi-Fi is disabled" in out
    # The card records: Record, an MCP call, Stop and save.
    await page.fill("#flow-record-name", "from the card")
    await page.click("#flow-record")
    await page.wait_for_selector("#flow-state[data-flow-state=recording]", timeout=10_000)
    tapped = await fresh.call("mcp", "tap", target="text=Wi-Fi")
    assert not tapped.get("isError"), tapped
    await page.click("#flow-stop")
    await page.wait_for_selector('#flow-list li[data-flow="from the card"]', timeout=10_000)
    shown = await page.text_content("#flow-yaml")
    assert "- tapOn: Wi-Fi" in shown
    await fresh.call("webmcp", "delete_flow", name="from the card")
    await eventually(lambda: _gone(page, "from the card"))


async def _gone(page, name: str) -> bool:
    return await page.locator(f'#flow-list li[data-flow="{name}"]').count() == 0


async def test_clicks_on_the_live_view_are_recorded_by_the_elements_text_and_replay(fresh: Rig):
    page = fresh.page
    phone = fresh.sim.phone
    await page.set_viewport_size({"width": 1280, "height": 1600})
    await page.check("#live-toggle")
    try:
        shown = "document.getElementById('screen').naturalWidth === 1080"
        await page.wait_for_function(shown, timeout=30_000)
        await page.fill("#flow-record-name", "by hand")
        await page.click("#flow-record")
        await page.wait_for_selector("#flow-state[data-flow-state=recording]", timeout=10_000)
        await page.mouse.click(*await page_point(page, *centre_of(fresh.sim, "Settings")))
        await eventually(_is(lambda: phone.current == "com.android.settings"), 15)
        await eventually(_shows(fresh.sim, "Network & internet"), 15)
        await page.mouse.click(*await page_point(page, *centre_of(fresh.sim, "Network & internet")))
        await eventually(_shows(fresh.sim, "Wi-Fi"), 15)
        await page.click("#flow-stop")
        await page.wait_for_selector('#flow-list li[data-flow="by hand"]', timeout=10_000)
    finally:
        await page.uncheck("#live-toggle")
    recorded = (await fresh.call("mcp", "get_flow", name="by hand"))["structuredContent"]["yaml"]
    assert "- tapOn: Settings\n" in recorded and "- tapOn: Network & internet\n" in recorded, recorded
    phone.reset()
    report = (await fresh.call("webmcp", "run_flow", name="by hand"))["structuredContent"]
    assert report["passed"] is True, report
    assert "Connected to PhoneAgent-WiFi" in await fresh.ui_dump()


def _is(check):
    async def run():
        return check()

    return run


def _shows(sim: SimulatedPhoneServer, label: str):
    async def run():
        try:
            centre_of(sim, label)
        except AssertionError:
            return False
        return True

    return run
