"""The widget kit: views clipped to their container, text fields that show their hint, list rows."""

from __future__ import annotations

from phone_agent.sim.android.screens.widgets import list_row, text_field, view
from phone_agent.sim.android.ui import SimulatedView


def test_a_view_is_clipped_to_its_container_and_keeps_its_box_for_drawing():
    node = view("android.widget.TextView", (0, 300, 100, 500), clip_to=(0, 340, 1080, 2274))
    assert node is not None
    assert (node.bounds, node.box) == ((0, 340, 100, 500), (0, 300, 100, 500))
    unclipped = view("android.widget.TextView", (0, 400, 100, 500), clip_to=(0, 340, 1080, 2274))
    assert unclipped is not None and unclipped.box is None


def test_a_view_outside_its_container_is_not_there():
    assert view("android.widget.TextView", (0, 0, 100, 200), clip_to=(0, 340, 1080, 2274)) is None


def test_an_empty_text_field_reports_its_hint_as_its_text_like_android():
    empty = text_field((0, 0, 500, 100), "app:id/field", "", "Search", focused=False)
    typed = text_field((0, 0, 500, 100), "app:id/field", "hello", "Search", focused=True)
    assert empty is not None and typed is not None
    assert (empty.text, typed.text, typed.focused) == ("Search", "hello", True)
    assert empty.action == "focus:app:id/field"


def test_a_list_row_with_a_switch_toggles_by_the_rows_action():
    root = SimulatedView(cls="android.widget.FrameLayout", bounds=(0, 0, 1080, 2400))
    row = list_row(root, 440, "Wi-Fi", "On", action="toggle:wifi", switch=True)
    switch = [node for node in row.walk() if node.cls == "android.widget.Switch"]
    assert len(switch) == 1
    assert (switch[0].checked, switch[0].action, row.action) == (True, "toggle:wifi", "toggle:wifi")
    assert [node.text for node in row.walk() if node.text] == ["Wi-Fi", "On"]
