"""The recorder records what a person means on list rows (issue 34, item 5): a tap on a row whose own
text is empty — by its ref, by a point on it, from MCP, WebMCP or the live view — is recorded as a
selector that finds that row on another screen (the label inside it), never as a point; a point is
recorded only when nothing identifies the element, with a comment in the flow saying so. On the
simulated phone's Settings and Catalog, and replayed."""

from __future__ import annotations

from phone_agent.adb.ui_dump import parse_ui_dump
from phone_agent.flows.flow_reader import read_flow
from phone_agent.flows.recorder import Acted, FlowRecorder
from phone_agent.flows.selectors import UiScreen, find
from phone_agent.sim.android.data import CATALOG_ITEMS
from phone_agent.tools.dispatch import ToolDispatcher
from phone_agent.tools.spec import Channel
from tests.agent.sim_device import SimDevice
from tests.ui_corpus.screens import DUMPS

CATALOG = "com.phoneagent.catalog"
ROW = {"containsDescendants": [{"text": "Connected devices"}]}


def rig() -> tuple[ToolDispatcher, SimDevice]:
    context = ToolDispatcher()
    device = SimDevice()
    context.device = device
    return context, device


async def call(context: ToolDispatcher, tool: str, args: dict, channel: Channel = Channel.RELAY) -> dict:
    answer = await context.dispatch(tool, args, channel)
    assert not answer.get("isError"), answer
    return answer["structuredContent"]


async def test_a_settings_row_is_recorded_by_the_label_inside_it_from_every_channel() -> None:
    context, device = rig()
    await call(context, "open_app", {"packageName": "com.android.settings"})
    await call(context, "start_flow_recording", {})
    answer = await context.dispatch("list_elements", {}, Channel.RELAY)
    line = next(line for line in answer["content"][0]["text"].splitlines() if "Connected devices ·" in line)
    assert line.endswith("(button) [540,690]")  # the row: its label is the text inside it
    row = next(e for e in answer["structuredContent"]["elements"] if e["ref"] == line.split()[0])
    assert "text" not in row and row["locator"] == "role=button; index=1"
    await call(context, "tap", {"target": row["ref"]})  # MCP, by ref
    assert device.phone.state()["screen"] == "settings/connected"
    await call(context, "press_key", {"key": "back"})
    x2, y = row["bounds"]["x2"], row["center"]["y"]
    await call(context, "tap", {"x": x2 - 20, "y": y})  # MCP, a point on the row beside its label
    await call(context, "press_key", {"key": "back"})
    await call(context, "tap", {"x": x2 - 20, "y": y}, Channel.PAGE)  # the live view
    await call(context, "press_key", {"key": "back"})
    await call(context, "tap", {"x": x2 - 20, "y": y}, Channel.WEBMCP)
    await call(context, "press_key", {"key": "back"})
    await call(context, "tap", {"target": "text=Connected devices"})  # the label itself: its text
    stopped = await call(context, "stop_flow_recording", {"name": "rows"})
    text = stopped["yaml"]
    assert "point" not in text, text
    flow = read_flow(text)
    taps = [command.args for command in flow.commands if command.name == "tapOn"]
    assert taps == [ROW, ROW, ROW, ROW, {"text": "Connected devices"}]
    assert stopped["commands"] == len(flow.commands)
    # Replayed from Settings' first page, every tap reaches the row's page.
    await call(context, "press_key", {"key": "back"})
    ran = await call(context, "run_flow", {"yaml": text})
    assert ran["passed"], ran
    assert device.phone.state()["screen"] == "settings/connected"


def test_the_recorded_row_selector_finds_that_row_on_another_screen_size() -> None:
    for dump in DUMPS:
        if not dump.name.startswith("settings-") or "Connected devices" not in dump.xml:
            continue
        nodes = parse_ui_dump(dump.xml)
        found = find(ROW, UiScreen(nodes))
        assert found and found[0].clickable, dump.name
        inside = [n.text for n in nodes if found[0].bounds.contains(*n.bounds.center) and n.text]
        assert "Connected devices" in inside and "Apps" not in inside, dump.name


async def test_a_catalog_row_is_recorded_by_its_title_and_replays_after_scrolling() -> None:
    context, device = rig()
    await call(context, "open_app", {"packageName": "com.phoneagent.catalog"})
    await call(context, "start_flow_recording", {})
    listed = await call(context, "list_elements", {})
    rows = [e for e in listed["elements"] if e.get("id", "").endswith(":id/item")]
    assert len(rows) > 3 and len({row["locator"] for row in rows}) == len(rows)
    third = rows[2]
    await call(context, "tap", {"target": third["ref"]})
    opened = device.phone.state()
    assert opened["screen"] == "catalog/item" and opened["screen_arg"] == "3"
    await call(context, "press_key", {"key": "back"})
    fourth = rows[3]
    await call(context, "long_press", {"x": fourth["bounds"]["x2"] - 10, "y": fourth["center"]["y"]})
    stopped = await call(context, "stop_flow_recording", {})
    flow = read_flow(stopped["yaml"])
    commands = {command.name: command.args for command in flow.commands}
    title = CATALOG_ITEMS[2].title
    assert commands["tapOn"] == {"containsDescendants": [{"text": title}]}
    assert commands["longPressOn"]["containsDescendants"][0]["text"] == CATALOG_ITEMS[3].title
    # Another screen: the list scrolled so the row sits elsewhere; the tap still opens item 3.
    await call(context, "swipe", {"startX": 540, "startY": 1000, "endX": 540, "endY": 900})
    tap_only = f"appId: {CATALOG}\n---\n- tapOn:\n    containsDescendants:\n      - text: {title}\n"
    ran = await call(context, "run_flow", {"yaml": tap_only})
    assert ran["passed"], ran
    assert device.phone.state()["screen_arg"] == "3"


def test_a_point_is_recorded_only_with_a_comment_saying_why() -> None:
    recorder = FlowRecorder()
    recorder.start("com.app")
    note = "point: the View at 250,750 has no text, description, id or label inside it that finds it"
    recorder.add("tap", {"x": 250, "y": 750}, Acted(point=(250, 750), note=note))
    text = recorder.stop()
    assert f"# {note}\n- tapOn:\n    point: 250,750\n" in text
    assert recorder.count() == 1
    assert [(c.name, c.args) for c in read_flow(text).commands] == [("tapOn", {"point": "250,750"})]


def test_an_agent_task_names_a_row_it_tapped_by_ref_as_the_recorder_does() -> None:
    from phone_agent.agent.model_functions import Action
    from phone_agent.agent.resolve import acted_on
    from phone_agent.agent.screen import Observation, ScreenMapping
    from phone_agent.flows.recorder import commands_from_task
    from phone_agent.sim.android.commands.capture import screen_dump
    from phone_agent.sim.android.phone import VirtualPhone
    from phone_agent.tools.locators import ScreenSnapshot

    phone = VirtualPhone()
    phone.launch("com.android.settings")
    snapshot = ScreenSnapshot.from_nodes(parse_ui_dump(screen_dump(phone)), 1080, 2400)
    row = next(e for e in snapshot.elements if e.role == "button" and e.label.startswith("Connected devices"))
    seen = Observation(b"", ScreenMapping(1080, 2400, 540, 1200), b"", "image/png", snapshot=snapshot)
    target, point = acted_on(Action("tap", {"target": row.ref}), seen)
    assert target == "containsDescendants=(text=Connected devices)" and point == ""
    commands = commands_from_task([("tap", {"target": row.ref}, "tapped", True, target, point)])
    assert commands == [("tapOn", ROW)]
