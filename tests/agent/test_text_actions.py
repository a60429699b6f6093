"""Text action formats (UI-TARS, AutoGLM, JSON, the agent's own names) become the agent's actions."""

from __future__ import annotations

import pytest

from phone_agent.agent.model import ToolCall
from phone_agent.agent.model_functions import ActionError, validate_action, validate_plan
from phone_agent.agent.text_actions import parse_text_action


def swipe(start_x: int, start_y: int, end_x: int, end_y: int) -> dict[str, int]:
    return {"startX": start_x, "startY": start_y, "endX": end_x, "endY": end_y}


@pytest.mark.parametrize(
    ("text", "name", "args", "normalized"),
    [
        ("Thought: tap it.\nAction: click(start_box='(500,250)')", "tap", {"x": 500, "y": 250}, True),
        ("Action: click(start_box='<|box_start|>(100,200)<|box_end|>')", "tap", {"x": 100, "y": 200}, True),
        ("click(start_box='[100,200,300,400]')", "tap", {"x": 200, "y": 300}, True),
        ("click(point='<point>10 20</point>')", "tap", {"x": 10, "y": 20}, True),
        ("long_press(start_box='(5,6)')", "long_press", {"x": 5, "y": 6}, True),
        ("drag(start_box='(1,2)', end_box='(3,4)')", "swipe", swipe(1, 2, 3, 4), True),
        ("scroll(start_box='(500,500)', direction='down')", "swipe", swipe(500, 650, 500, 350), True),
        ("type(content='see you\\n')", "type_text", {"text": "see you", "submit": True}, False),
        ("type(content='hi')", "type_text", {"text": "hi", "submit": False}, False),
        ("hotkey(key='enter')", "press_key", {"key": "enter"}, False),
        ("press_back()", "press_key", {"key": "back"}, False),
        ("press_home()", "press_key", {"key": "home"}, False),
        ("open_app(app_name='Settings')", "open_app", {"packageName": "Settings"}, False),
        ("wait()", "wait", {}, False),
        ("finished(content='Wi-Fi is on')", "finish_step", {"summary": "Wi-Fi is on"}, False),
        ('<answer>do(action="Tap", element=[499, 120])</answer>', "tap", {"x": 499, "y": 120}, True),
        ('do(action="Long Press", element=[1,2])', "long_press", {"x": 1, "y": 2}, True),
        ('do(action="Swipe", start=[500, 800], end=[500, 200])', "swipe", swipe(500, 800, 500, 200), True),
        ('do(action="Type", text="see you tomorrow")', "type_text", {"text": "see you tomorrow"}, False),
        ('do(action="Launch", app="com.example")', "open_app", {"packageName": "com.example"}, False),
        ('do(action="Back")', "press_key", {"key": "back"}, False),
        ('do(action="Wait", duration="2 seconds")', "wait", {"ms": 2000}, False),
        ('finish(message="Sent it")', "finish_step", {"summary": "Sent it"}, False),
        ('I will call {"name": "tap", "arguments": {"x": 3, "y": 4}} now', "tap", {"x": 3, "y": 4}, False),
        ("tap(x=30, y=40)", "tap", {"x": 30, "y": 40}, False),
    ],
)
def test_text_formats(text, name, args, normalized):
    call = parse_text_action(text)
    assert call is not None
    assert (call.name, call.arguments, call.normalized) == (name, args, normalized)


def test_text_without_an_action():
    assert parse_text_action("I am not sure what to do. Maybe click somewhere?") is None
    assert parse_text_action("") is None


def test_normalised_coordinates_map_to_image_pixels():
    call = parse_text_action("click(start_box='(500,1000)')")
    action = validate_action(call, 461, 1024)
    assert action.args == {"x": 230, "y": 1023}


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (ToolCall("fly", {}), "unknown tool 'fly'"),
        (ToolCall("tap", {"x": 1}), "missing required argument 'y'"),
        (ToolCall("tap", {"x": -1, "y": 3}), "x=-1 is outside 0–460"),
        (ToolCall("tap", {"x": "a", "y": 3}), "'x' must be a number"),
        (
            ToolCall("swipe", {"startX": 1, "startY": 1, "endX": 2, "endY": 2000}),
            "endY=2000 is outside 0–1023",
        ),
        (ToolCall("press_key", {"key": "warp"}), "unknown key 'warp'"),
        (ToolCall("type_text", {"text": ""}), '"text" must not be empty'),
        (ToolCall("wait", {"ms": 99999}), "must be 0–10000"),
        (
            ToolCall("long_press", {"x": 1, "y": 1, "durationMs": 5}),
            '"durationMs" must be at least 100, not 5',
        ),
    ],
)
def test_invalid_actions_say_what_is_wrong(call, message):
    with pytest.raises(ActionError, match=message):
        validate_action(call, 461, 1024)


def test_lenient_forms_are_accepted():
    assert validate_action(ToolCall("tap", {"x": "12", "y": 3.6}), 461, 1024).args == {"x": 12, "y": 4}
    assert validate_action(ToolCall("type_text", {"text": "a", "submit": "true"}), 9, 9).args == {
        "text": "a",
        "submit": True,
    }
    assert validate_action(ToolCall("press_key", {"key": "KEYCODE_ENTER"}), 9, 9).args == {
        "key": "KEYCODE_ENTER"
    }


def test_plans():
    steps = validate_plan(ToolCall("submit_plan", {"steps": [{"title": "A", "description": "do a"}, "B"]}), 5)
    assert [(s.title, s.description) for s in steps] == [("A", "do a"), ("B", "B")]
    with pytest.raises(ActionError, match="at most 1 steps"):
        validate_plan(ToolCall("submit_plan", {"steps": ["a", "b"]}), 1)
    with pytest.raises(ActionError, match="non-empty array"):
        validate_plan(ToolCall("submit_plan", {"steps": []}), 5)
