"""The recorder names what a call acted on as a person would: its text, else its id, else its
description, with an index when several nodes match, and a point only when nothing identifies it."""

from __future__ import annotations

from phone_agent.device.interface import Bounds, UiNode
from phone_agent.flows.flow_reader import read_flow
from phone_agent.flows.recorder import Acted, FlowRecorder, node_at, selector_for
from phone_agent.flows.selectors import UiScreen, find


def screen() -> tuple[UiScreen, dict[str, UiNode]]:
    root = UiNode(Bounds(0, 0, 1080, 2400), class_name="android.widget.FrameLayout")
    nodes = {
        "ok1": UiNode(Bounds(0, 100, 500, 200), text="OK", class_name="android.widget.Button"),
        "ok2": UiNode(Bounds(0, 300, 500, 400), text="OK", class_name="android.widget.Button"),
        "field": UiNode(Bounds(0, 500, 1080, 600), resource_id="com.app:id/search_box"),
        "icon": UiNode(Bounds(0, 700, 100, 800), content_desc="Menu (more)"),
        "blank": UiNode(Bounds(200, 700, 300, 800), clickable=True),
        "title": UiNode(Bounds(0, 900, 1080, 1000), text="Title"),
        "below": UiNode(Bounds(0, 1000, 1080, 1100), text="Subtitle"),
    }
    root.children = list(nodes.values())
    return UiScreen([root, *nodes.values()]), nodes


def test_a_node_is_named_by_text_then_id_then_description_with_an_index_when_needed():
    shown, nodes = screen()
    assert selector_for(nodes["ok1"], shown) == {"text": "OK"}
    assert selector_for(nodes["ok2"], shown) == {"text": "OK", "index": 1}
    assert selector_for(nodes["field"], shown) == {"id": "search_box"}
    assert selector_for(nodes["icon"], shown) == {"text": "Menu \\(more\\)"}
    assert selector_for(nodes["blank"], shown) is None
    for name in ("ok2", "field", "icon"):
        assert find(selector_for(nodes[name], shown), shown)[0] is nodes[name]
    assert node_at(shown, 50, 750) is nodes["icon"]
    assert node_at(shown, 250, 750) is nodes["blank"]  # the clickable node the finger lands on
    assert node_at(shown, 700, 750) is None


def test_relative_selectors_find_the_nearest_node_on_that_side():
    shown, nodes = screen()
    assert find({"below": {"text": "Title"}}, shown)[0] is nodes["below"]
    assert find({"text": "OK", "above": {"id": "search_box"}}, shown) == [nodes["ok2"], nodes["ok1"]]
    assert find({"text": "O."}, shown) == [nodes["ok1"], nodes["ok2"]]  # a regex, matching the whole text
    assert find({"text": "O"}, shown) == []


def test_recorded_calls_become_a_flow_that_reads_back():
    recorder = FlowRecorder()
    recorder.start("com.android.launcher")
    recorder.add("open_app", {"packageName": "com.app"})
    recorder.add("tap", {"x": 250, "y": 750}, Acted(point=(250, 750)))
    recorder.add("tap", {"target": "text=OK"}, Acted(selector={"text": "OK", "index": 1}))
    recorder.add("type_text", {"text": "Zoë", "clear": True, "submit": True})
    recorder.add("swipe", {"direction": "up"})
    recorder.add("press_key", {"key": "back"})
    recorder.add("list_elements", {})  # reads nothing into the flow
    flow = read_flow(recorder.stop("recorded"))
    assert flow.app_id == "com.app" and flow.name == "recorded"
    assert [(c.name, c.args) for c in flow.commands] == [
        ("launchApp", {"appId": "com.app"}),
        ("tapOn", {"point": "250,750"}),
        ("tapOn", {"text": "OK", "index": 1}),
        ("eraseText", {}),
        ("inputText", {"text": "Zoë"}),
        ("pressKey", {"key": "Enter"}),
        ("swipe", {"direction": "UP"}),
        ("back", {}),
    ]
