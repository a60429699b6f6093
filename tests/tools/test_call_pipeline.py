"""The one pipeline every tool call takes (tools/pipeline): its steps in their order, who made each call
and under which call (a flow's steps under their run_flow), a confirmation asked whoever the caller, and
secrets kept out of every answer, error and activity row.

The phone is the test's simulated phone over the project's ADB client (``client``, tests/conftest.py).
"""

from __future__ import annotations

import base64
import io
import json

import pytest
from PIL import Image

from phone_agent import errors
from phone_agent.adb.device import AdbDevice
from phone_agent.tools.dispatch import Caller, CallRecord, ToolDispatcher
from phone_agent.tools.named_secrets import SecretBook, placeholder
from phone_agent.tools.pipeline.call import Call
from phone_agent.tools.pipeline.chain import CallPipeline
from phone_agent.tools.pipeline.redaction import redacting
from phone_agent.tools.spec import Channel
from tests.agent.pillow_codec import PillowCodec
from tests.tools.test_type_secret import USERNAME
from tests.tools.test_type_secret import rig as type_secret_rig

FLOW = "appId: com.android.settings\n---\n- launchApp\n- tapOn: Network & internet\n- back\n"


@pytest.fixture
def page(client) -> tuple[ToolDispatcher, list[CallRecord]]:
    """The page's service on the simulated phone, and the activity log's records (in the order calls end)."""
    context = ToolDispatcher()
    context.device = AdbDevice(client, transport="tcp")
    records: list[CallRecord] = []
    context.add_call_listener(records.append)
    return context, records


def text_of(result: dict) -> str:
    return result["content"][0]["text"]


def test_the_page_lists_its_steps_in_one_order():
    steps = [type(step).__name__ for step in ToolDispatcher().pipeline.steps]
    assert steps == [
        "Activity",
        "Timing",
        "Redaction",
        "ScreenshotSecrets",
        "Failures",
        "Validation",
        "Confirmation",
        "FlowRecording",
        "ScreenMoved",
    ]


async def test_each_step_wraps_the_ones_after_it_and_the_handler_runs_last():
    seen: list[str] = []

    class Trace:
        def __init__(self, name: str) -> None:
            self.name = name

        async def __call__(self, call, call_next):
            seen.append(f"{self.name}>")
            try:
                return await call_next(call)
            finally:
                seen.append(f"<{self.name}")

    class Checked:  # stands where Validation does: the handler needs a spec
        async def __call__(self, call, call_next):
            from phone_agent.tools.catalog import get_tool

            call.spec = get_tool("get_device_status")
            return await call_next(call)

    context = ToolDispatcher()
    pipeline = CallPipeline([Trace("a"), Trace("b"), Checked(), Trace("c")], context)
    result = await pipeline.run(Call("get_device_status", {}, Channel.RELAY, Caller.MCP))
    assert text_of(result) == '{"connected":false}'
    assert seen == ["a>", "b>", "c>", "<c", "<b", "<a"]


async def test_a_flows_steps_are_calls_of_the_flow_under_their_run_flow(page):
    context, records = page
    result = await context.dispatch("run_flow", {"yaml": FLOW}, Channel.RELAY)
    assert text_of(result).startswith("Flow passed: 3/3 steps passed"), text_of(result)
    parent = records[-1]
    assert (parent.tool, parent.caller, parent.parent, parent.depth) == ("run_flow", Caller.MCP, None, 0)
    steps = records[:-1]
    assert {record.caller for record in steps} == {Caller.FLOW}
    assert {record.parent for record in steps} == {parent.call_id}
    assert {record.depth for record in steps} == {1}
    assert [record.tool for record in steps][-3:] == ["open_app", "tap", "press_key"]
    assert len({record.call_id for record in records}) == len(records)
    assert all(record.duration_ms <= parent.duration_ms for record in steps)


async def test_each_channel_names_its_caller_and_an_app_view_says_so(page):
    context, records = page
    await context.dispatch("get_device_status", {}, Channel.RELAY)
    await context.dispatch("get_device_status", {}, Channel.FARM)
    await context.dispatch("get_device_status", {}, Channel.WEBMCP)
    await context.dispatch("get_device_status", {}, Channel.PAGE)
    await context.dispatch("get_device_status", {}, Channel.RELAY, caller=Caller.APP)
    assert [record.caller for record in records] == [
        Caller.MCP,
        Caller.MCP,
        Caller.WEBMCP,
        Caller.LIVE,
        Caller.APP,
    ]
    assert {record.parent for record in records} == {None}


async def test_a_confirmation_is_asked_whoever_makes_the_call(page):
    """``--confirm always``: the same question for an MCP client, an App view, WebMCP and a flow's step
    (the agent's: tests/agent); not for the person's own live view, nor before the arguments hold."""
    context, records = page
    asked: list[tuple[str, Caller]] = []

    async def refuse(tool, args, caller):
        asked.append((tool, caller))
        if tool == "press_key":
            raise errors.not_confirmed(tool, "the person refused")

    context.before_call = refuse
    home = {"key": "home"}
    for channel, caller in [
        (Channel.RELAY, None),
        (Channel.RELAY, Caller.APP),
        (Channel.WEBMCP, None),
    ]:
        result = await context.dispatch("press_key", home, channel, caller=caller)
        assert result["isError"] and result["structuredContent"]["code"] == "cancelled"
    assert asked == [("press_key", Caller.MCP), ("press_key", Caller.APP), ("press_key", Caller.WEBMCP)]
    asked.clear()
    live = await context.dispatch("press_key", home, Channel.PAGE)
    assert "isError" not in live and asked == []
    bad = await context.dispatch("press_key", {"key": 5}, Channel.RELAY)
    assert bad["structuredContent"]["code"] == "invalid_argument" and asked == []
    flow = await context.dispatch("run_flow", {"yaml": "appId: x\n---\n- back\n"}, Channel.WEBMCP)
    assert "Flow FAILED" in text_of(flow) and "Not confirmed" in text_of(flow), text_of(flow)
    assert asked == [("run_flow", Caller.WEBMCP), ("press_key", Caller.FLOW)]
    refused = records[-2]
    assert (refused.tool, refused.caller, refused.parent) == ("press_key", Caller.FLOW, records[-1].call_id)
    assert refused.result["isError"]


async def test_a_one_character_secret_is_kept_out_by_its_field_until_the_field_changes():
    """A 1-character secret in a plain field: no answer, error or activity row shows it, and no locator
    finds the field by it (redacted by the field, not by searching texts for "7" everywhere)."""
    book = SecretBook()
    book.set_page({"PIN": "7"})
    context, _device, records = type_secret_rig(book)
    typed = await context.dispatch("type_secret", {"name": "PIN", "target": USERNAME}, Channel.RELAY)
    assert not typed.get("isError"), typed
    shown = placeholder("PIN")
    field = await context.dispatch("wait_for", {"target": USERNAME, "condition": "visible"}, Channel.RELAY)
    assert f"{shown} (input)" in text_of(field) and field["structuredContent"]["element"]["text"] == shown
    listed = await context.dispatch("list_elements", {"target": USERNAME}, Channel.WEBMCP)
    [element] = listed["structuredContent"]["elements"]
    assert element["text"] == shown
    # The value's letters find nothing; the failure says what the screen shows: the placeholder.
    guessed = await context.dispatch("assert_visible", {"target": "text=7", "timeoutMs": 0}, Channel.RELAY)
    assert guessed["isError"] and shown in text_of(guessed), text_of(guessed)
    by_placeholder = await context.dispatch("assert_visible", {"target": f"text={shown}"}, Channel.RELAY)
    assert not by_placeholder.get("isError"), by_placeholder
    rows = [record.result for record in records]
    assert all('"7"' not in json.dumps(row) and "=7)" not in json.dumps(row) for row in rows)
    # Typing more changes the field's text: it is a plain field again.
    await context.dispatch("type_text", {"text": "ab", "target": USERNAME}, Channel.RELAY)
    again = await context.dispatch("list_elements", {"target": USERNAME}, Channel.RELAY)
    assert again["structuredContent"]["elements"][0]["text"] == "7ab"


async def test_a_redacted_progress_sink_still_asks_the_caller():
    """The relay's progress sink can ask the MCP client (a take over); redacting its lines keeps that."""
    asked, lines = [], []

    class Link:
        def __call__(self, line):
            lines.append(line)

        async def ask(self, kind, message):
            asked.append((kind, message))
            return "done"

    book = SecretBook()
    book.set_page({"LONGPW": "Zebra-Quartz-9911"})
    sink = redacting(Link(), book.redact)
    sink("typed Zebra-Quartz-9911")
    assert await sink.ask("takeover", "is Zebra-Quartz-9911 right?") == "done"
    assert lines == ["typed ${secret:LONGPW}"] and asked == [("takeover", "is ${secret:LONGPW} right?")]
    assert redacting(lines.append, book.redact).ask is None


async def test_a_screenshot_showing_a_secret_in_a_plain_field_has_the_field_blacked_out():
    book = SecretBook()
    book.set_page({"PIN": "7"})
    context, _device, _records = type_secret_rig(book)
    await context.dispatch("type_secret", {"name": "PIN", "target": USERNAME}, Channel.RELAY)
    field = (await context.dispatch("wait_for", {"target": USERNAME, "condition": "visible"}, Channel.RELAY))[
        "structuredContent"
    ]["element"]
    without_codec = await context.dispatch("take_screenshot", {}, Channel.RELAY)
    assert [item["type"] for item in without_codec["content"]] == ["text"]
    assert "withheld" in text_of(without_codec) and "PIN" in text_of(without_codec)
    context.image_codec = PillowCodec()
    shot = await context.dispatch("take_screenshot", {}, Channel.RELAY)
    image = next(item for item in shot["content"] if item["type"] == "image")
    said = " ".join(item["text"] for item in shot["content"] if item["type"] == "text")
    assert "blacked out" in said and "PIN" in said
    picture = Image.open(io.BytesIO(base64.b64decode(image["data"]))).convert("RGB")
    x, y = field["center"]["x"], field["center"]["y"]
    assert picture.getpixel((x, y)) == (0, 0, 0)
    assert picture.getpixel((x, max(0, y - 400))) != (0, 0, 0)  # the rest of the screen is shown
