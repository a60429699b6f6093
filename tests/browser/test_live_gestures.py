"""What input on the live view means: taps, long presses, drags, the wheel and keys, in device pixels."""

from phone_agent.browser.live_gestures import (
    ViewGeometry,
    key_action,
    merge_typing,
    pointer_gesture,
    wheel_gesture,
)

VIEW = ViewGeometry(270, 600, 1080, 2400)  # a 9:20 phone shown at a quarter of its size


def test_a_click_is_a_tap_at_the_device_point():
    assert pointer_gesture(VIEW, (135, 300), (136, 301), 80) == ("tap", {"x": 540, "y": 1200})


def test_a_press_held_still_is_a_long_press():
    name, args = pointer_gesture(VIEW, (10, 10), (12, 11), 900)
    assert name == "long_press" and args == {"x": 40, "y": 40, "durationMs": 900}


def test_a_drag_is_a_swipe_with_its_duration_bounded():
    name, args = pointer_gesture(VIEW, (135, 500), (135, 100), 20)
    assert name == "swipe"
    assert args == {"startX": 540, "startY": 2000, "endX": 540, "endY": 400, "durationMs": 50}
    assert pointer_gesture(VIEW, (0, 0), (200, 0), 9999)[1]["durationMs"] == 3000


def test_a_letterboxed_view_maps_through_its_picture_only():
    wide = ViewGeometry(540, 600, 1080, 2400)  # object-fit: contain leaves bars left and right
    assert wide.to_device(270, 300) == (540, 1200)
    assert wide.to_device(0, 0) == (0, 0)  # a click on the bar lands on the nearest edge
    assert wide.to_device(539, 599) == (1079, 2396)


def test_the_wheel_scrolls_by_moving_the_finger_against_it():
    name, down = wheel_gesture(VIEW, (135, 300), 100)
    assert name == "swipe" and down["startY"] > down["endY"]  # content down: finger up
    _, up = wheel_gesture(VIEW, (135, 300), -100)
    assert up["startY"] < up["endY"]
    assert wheel_gesture(VIEW, (135, 300), 0) is None
    _, far = wheel_gesture(VIEW, (135, 300), 100_000)
    assert 0 <= far["endY"] < 2400 and 0 <= far["startY"] < 2400


def test_a_big_wheel_turn_near_an_edge_stays_clear_of_the_bars():
    # one 600 px move with the pointer low on the list (and high): the stroke neither starts nor ends
    # on the navigation bar or the status bar, and still moves far
    for y_css, delta in ((590, 600), (560, -600), (5, 600), (5, -600)):
        _, stroke = wheel_gesture(VIEW, (135, y_css), delta)
        for y in (stroke["startY"], stroke["endY"]):
            assert 480 <= y <= 1920, (y_css, delta, stroke)
        assert abs(stroke["startY"] - stroke["endY"]) >= 1000
        assert (stroke["startY"] > stroke["endY"]) is (delta > 0)


def test_keys_type_text_or_press_keys_and_leave_shortcuts_alone():
    assert key_action("a") == ("type_text", {"text": "a"})
    assert key_action("é") == ("type_text", {"text": "é"})
    assert key_action("Enter") == ("press_key", {"key": "enter"})
    assert key_action("Backspace") == ("press_key", {"key": "delete"})
    assert key_action("Escape") == ("press_key", {"key": "back"})
    assert key_action("c", ctrl=True) is None
    assert key_action("Shift") is None


def test_quick_typing_becomes_one_call_in_order():
    calls = [
        ("type_text", {"text": "h"}),
        ("type_text", {"text": "i"}),
        ("press_key", {"key": "enter"}),
        ("type_text", {"text": "!"}),
    ]
    assert merge_typing(calls) == [
        ("type_text", {"text": "hi"}),
        ("press_key", {"key": "enter"}),
        ("type_text", {"text": "!"}),
    ]
