"""run_flow end to end in CPython: the page's one dispatch, the project's ADB client, the simulated phone,
and Debian's adb checking afterwards what the flow did. Every answer is checked against the tool's own
output schema."""

from __future__ import annotations

import base64

import jsonschema
import pytest

from phone_agent.tools.catalog import TOOLS_BY_NAME
from phone_agent.tools.dispatch import ToolDispatcher
from phone_agent.tools.spec import Channel

MESSAGES = "com.google.android.apps.messaging"

# Every command of the issue, against the simulated phone's apps (Settings, Messages, the catalog, Chrome).
EVERY_COMMAND = """\
appId: com.android.settings
name: every command
env:
  WHO: nobody
  GREETING: Hello
---
- launchApp:
    clearState: true
- assertVisible: Settings
- tapOn: Network & internet
- assertVisible:
    text: Wi-Fi
    below: Network & internet
    enabled: true
- tapOn:
    text: "Wi-Fi"
    retryTapIfNoChange: false
- extendedWaitUntil:
    visible: "Off"
    timeout: 5000
- back
- waitForAnimationToEnd
- assertVisible: Wi-Fi is off
- stopApp
- clearState
- launchApp: com.google.android.apps.messaging
- tapOn:
    id: conversation_name
    index: 0
- longPressOn:
    id: compose_message_text
- inputText: ${GREETING} ${WHO}
- assertVisible: ${GREETING} ${WHO}
- eraseText: 1
- copyTextFrom:
    id: compose_message_text
- eraseText
- pasteText
- hideKeyboard
- tapOn: Send SMS
- assertVisible:
    id: message_text
    text: ${maestro.copiedText}
- runFlow:
    when:
      notVisible: Messages
    commands:
      - back
- runFlow:
    file: subflows/open-catalog.yaml
- scrollUntilVisible:
    element: Item 30 - .*
    direction: DOWN
    timeout: 20000
- swipe:
    direction: DOWN
- swipe:
    start: 50%, 70%
    end: 50%, 30%
- scroll
- repeat:
    while:
      notVisible: Item 01 - .*
    commands:
      - swipe:
          direction: DOWN
- doubleTapOn:
    point: 50%,50%
- pressKey: Home
- repeat:
    times: 2
    commands:
      - pressKey: Back
- openLink: https://example.com/flows
- assertVisible:
    containsChild: example.com
- takeScreenshot: shots/browser
- tapOn:
    point: "540,1200"
- assertNotVisible: Zhang San
"""
OPEN_CATALOG = "appId: com.phoneagent.catalog\n---\n- launchApp\n- assertVisible: Catalog\n"


async def call(dispatcher: ToolDispatcher, tool: str, channel: Channel = Channel.RELAY, **args) -> dict:
    result = await dispatcher.dispatch(tool, args, channel)
    if not result.get("isError"):
        jsonschema.validate(result["structuredContent"], TOOLS_BY_NAME[tool].output_schema)
    return result


@pytest.mark.parametrize("channel", [Channel.RELAY, Channel.WEBMCP])
async def test_every_command_runs_on_the_phone_and_adb_sees_what_it_did(dispatcher, by_adb, channel):
    progress: list[str] = []
    result = await dispatcher.dispatch(
        "run_flow",
        {
            "yaml": EVERY_COMMAND,
            "env": {"WHO": "Zoë 你好"},
            "files": {"subflows/open-catalog.yaml": OPEN_CATALOG},
        },
        channel,
        progress=progress.append,
    )
    report = result["structuredContent"]
    jsonschema.validate(report, TOOLS_BY_NAME["run_flow"].output_schema)
    failed = [step for step in report["steps"] if step["status"] != "passed"]
    assert report["passed"] is True, failed
    assert len(report["steps"]) == EVERY_COMMAND.split("---\n", 1)[1].count("\n- ") + 1
    assert len(progress) == len(report["steps"]) and progress[0].startswith("[1/")
    assert report["name"] == "every command"
    # Debian's adb: Wi-Fi went off, the message (typed in non-ASCII, erased, copied, pasted) was sent.
    assert await by_adb.wifi_on() is False
    assert await by_adb.focused_package() == "com.android.chrome"
    await by_adb.shell(f"am start -n {MESSAGES}/.ui.ConversationListActivity")
    texts = await by_adb.screen_texts()
    assert "Hello Zoë 你" in texts and "Hello Zoë 你好" not in texts
    [shot] = report["screenshots"]
    assert shot["path"] == "shots/browser.png"
    image = result["content"][shot["image"]]
    assert image["type"] == "image" and base64.b64decode(image["data"]).startswith(b"\x89PNG")


async def test_a_failing_assertion_stops_the_flow_with_the_screen_of_that_moment(dispatcher, by_adb):
    flow = (
        "appId: com.android.settings\n---\n- launchApp\n"
        "- assertVisible:\n    text: Bluetooth\n    timeout: 500\n"
        "- tapOn: Network & internet\n"
    )
    result = await call(dispatcher, "run_flow", yaml=flow)
    assert not result.get("isError")
    report = result["structuredContent"]
    assert report["passed"] is False
    assert [step["status"] for step in report["steps"]] == ["passed", "failed", "skipped"]
    failed = report["steps"][1]
    assert failed["line"] == 4 and failed["command"] == "assertVisible: {text: Bluetooth, timeout: 500}"
    assert 'text "Bluetooth" is visible' in failed["error"] and '"Network & internet"' in failed["error"]
    assert report["failure"]["index"] == 2
    image = result["content"][report["failure"]["image"]]
    assert base64.b64decode(image["data"]).startswith(b"\x89PNG")
    assert "FAILED" in result["content"][0]["text"]
    assert "Settings" in await by_adb.screen_texts()  # the step after it did not run: still on Settings


async def test_a_malformed_flow_is_refused_with_its_line_and_column_and_nothing_runs(dispatcher, by_adb):
    before = await by_adb.focused_package()
    result = await call(
        dispatcher, "run_flow", yaml="appId: com.android.settings\n---\n- launchApp\n- tapOn: {id: x\n"
    )
    error = result["structuredContent"]
    assert result["isError"] and error["code"] == "invalid_flow"
    assert error["details"] == {"line": 4, "column": 16}
    assert "line 4, column 16" in error["message"]
    result = await call(dispatcher, "run_flow", yaml="appId: a\n---\n- launchApp\n- teleport: {to: Mars}\n")
    assert result["structuredContent"]["details"] == {"line": 4, "column": 3}
    assert "unsupported command 'teleport'" in result["structuredContent"]["message"]
    assert await by_adb.focused_package() == before


async def test_an_unknown_variable_fails_its_step_saying_how_to_give_it(dispatcher):
    result = await call(dispatcher, "run_flow", yaml="appId: a\n---\n- inputText: ${NOPE}\n")
    step = result["structuredContent"]["steps"][0]
    assert step["status"] == "failed" and "--env NOPE=VALUE" in step["error"]


async def test_optional_commands_that_fail_are_skipped_and_the_flow_goes_on(dispatcher):
    flow = (
        "appId: com.android.settings\n---\n- launchApp\n"
        "- tapOn:\n    text: Nowhere\n    optional: true\n- assertVisible: Settings\n"
    )
    report = (await call(dispatcher, "run_flow", yaml=flow))["structuredContent"]
    assert report["passed"] is True
    assert [step["status"] for step in report["steps"]] == ["passed", "skipped", "passed"]
    assert "Element not found" in report["steps"][1]["error"]


async def test_saved_flows_run_by_name_and_from_run_flow_and_are_the_same_on_both_channels(
    dispatcher, by_adb
):
    inner = "appId: com.android.settings\n---\n- launchApp\n- tapOn: Network & internet\n"
    outer = "appId: com.android.settings\n---\n- runFlow: open-network\n- tapOn: Wi-Fi\n"
    assert (await call(dispatcher, "save_flow", Channel.WEBMCP, name="open-network", yaml=inner))[
        "structuredContent"
    ]["commands"] == 2
    await call(dispatcher, "save_flow", Channel.RELAY, name="wifi-off", yaml=outer)
    listed = (await call(dispatcher, "list_flows", Channel.RELAY))["structuredContent"]["flows"]
    assert [flow["name"] for flow in listed] == ["open-network", "wifi-off"]
    got = await call(dispatcher, "get_flow", Channel.WEBMCP, name="wifi-off")
    assert got["structuredContent"]["yaml"] == outer
    report = (await call(dispatcher, "run_flow", Channel.WEBMCP, name="wifi-off"))["structuredContent"]
    assert report["passed"] is True, report
    assert await by_adb.wifi_on() is False
    bad = await call(dispatcher, "save_flow", name="broken", yaml="appId: a\n---\n- fly\n")
    assert bad["structuredContent"]["code"] == "invalid_flow"
    assert (await call(dispatcher, "delete_flow", name="open-network"))["structuredContent"][
        "deleted"
    ] is True
    gone = await call(dispatcher, "run_flow", name="open-network")
    assert gone["structuredContent"]["code"] == "flow_not_found"
    missing = await call(dispatcher, "run_flow", name="wifi-off")
    assert missing["structuredContent"]["code"] == "invalid_flow"
    assert "open-network" in missing["structuredContent"]["message"]


async def test_assertion_tools_pass_and_fail_with_assertion_failed_naming_target_and_screen(dispatcher):
    await call(dispatcher, "open_app", packageName="com.android.settings")
    seen = (await call(dispatcher, "assert_visible", target="text=Network & internet"))["structuredContent"]
    assert seen["visible"] is True and seen["element"]["text"] == "Network & internet"
    gone = (await call(dispatcher, "assert_not_visible", target="text=Zhang San", timeoutMs=0))[
        "structuredContent"
    ]
    assert gone == {"visible": False, "waitedMs": gone["waitedMs"]}
    failed = await call(dispatcher, "assert_visible", target="text=Bluetooth", timeoutMs=300)
    error = failed["structuredContent"]
    assert failed["isError"] and error["code"] == "assertion_failed"
    assert '"text=Bluetooth"' in error["message"] and '"Network & internet"' in error["message"]
    assert error["details"]["target"] == "text=Bluetooth" and error["details"]["waitedMs"] == 300
    still = await call(dispatcher, "assert_not_visible", target="text=Settings", timeoutMs=200)
    assert still["structuredContent"]["code"] == "assertion_failed"
    assert "is still visible" in still["structuredContent"]["message"]


async def test_launch_app_sets_permissions_and_refuses_a_bad_state_when_read(dispatcher, by_adb):
    flow = (
        "appId: com.google.android.GoogleCamera\n---\n- launchApp:\n    permissions:\n"
        "      android.permission.CAMERA: allow\n      android.permission.RECORD_AUDIO: deny\n"
    )
    report = (await call(dispatcher, "run_flow", yaml=flow))["structuredContent"]
    assert report["passed"] is True, report
    assert await by_adb.focused_package() == "com.google.android.GoogleCamera"
    bad = await call(dispatcher, "run_flow", yaml=flow.replace("deny", "maybe"))
    assert bad["structuredContent"]["code"] == "invalid_flow"
    assert bad["structuredContent"]["details"] == {"line": 6, "column": 40}
