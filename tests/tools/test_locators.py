"""``locators``: which nodes of a UI dump become addressable elements, in what order and with what
label; what a ref and each locator form match; and the exact errors of a malformed target."""

from __future__ import annotations

import pytest

from phone_agent.device.interface import Bounds, UiNode
from phone_agent.tools.locators import (
    MAX_LABEL_CHARS,
    LocatorError,
    ScreenSnapshot,
    Target,
    parse_target,
    role_of,
)

Box = tuple[int, int, int, int]


def node(cls: str = "android.widget.TextView", box: Box = (0, 0, 100, 50), **kw) -> UiNode:
    return UiNode(bounds=Bounds(*box), class_name=cls, **kw)


def snapshot(*nodes: UiNode) -> ScreenSnapshot:
    return ScreenSnapshot.from_nodes([node("android.widget.FrameLayout", (0, 0, 1080, 2400)), *nodes])


@pytest.mark.parametrize(
    ("cls", "flags", "role"),
    [
        ("android.widget.EditText", {}, "input"),
        ("androidx.appcompat.widget.SearchView$SearchAutoComplete", {}, "input"),
        ("android.widget.Switch", {"checkable": True}, "switch"),
        ("com.google.android.material.switchmaterial.SwitchMaterial", {}, "switch"),
        ("android.widget.CheckBox", {}, "checkbox"),
        ("android.view.View", {"checkable": True}, "checkbox"),
        ("androidx.recyclerview.widget.RecyclerView", {}, "list"),
        ("android.widget.FrameLayout", {"scrollable": True}, "list"),
        ("android.widget.ImageButton", {}, "button"),
        ("android.widget.LinearLayout", {"clickable": True}, "button"),
        ("android.widget.LinearLayout", {"long_clickable": True}, "button"),
        ("android.widget.ImageView", {"clickable": True}, "button"),
        ("android.widget.ImageView", {}, "image"),
        ("android.widget.TextView", {}, "text"),
    ],
)
def test_role_of_says_what_the_element_is_to_a_person(cls: str, flags: dict, role: str) -> None:
    assert role_of(node(cls, **flags)) == role


def test_elements_are_in_reading_order_with_refs_from_1() -> None:
    shot = snapshot(
        node(text="Below", box=(0, 500, 100, 550)),
        node(text="Right", box=(600, 100, 700, 150)),
        node(text="Left", box=(0, 100, 100, 150)),
    )
    assert [(e.ref, e.text) for e in shot.elements] == [("@e1", "Left"), ("@e2", "Right"), ("@e3", "Below")]
    assert shot.by_ref["@e2"].text == "Right"
    assert (shot.width, shot.height) == (1080, 2400)  # from the root node


def test_only_nodes_worth_addressing_become_elements() -> None:
    shot = snapshot(
        node("android.widget.LinearLayout", (0, 0, 1080, 200)),  # no text, not interactive: skipped
        node(text="Off screen", box=(0, 2500, 100, 2600)),  # nothing of it visible: skipped
        node(text="Twice", box=(0, 300, 100, 350)),
        node(text="Twice", box=(0, 300, 100, 350)),  # the same node again: skipped
        node("android.widget.EditText", (0, 400, 500, 450)),  # empty input: kept
        node("android.widget.FrameLayout", (0, 600, 100, 650), scrollable=True),  # interactive: kept
    )
    assert [e.role for e in shot.elements] == ["text", "input", "list"]


def test_the_label_is_text_then_description_then_inner_text_then_id() -> None:
    row = node("android.widget.LinearLayout", (0, 100, 1080, 300), clickable=True)
    row.children = [node(text="  Wi-Fi  "), node(content_desc="On"), node(text="third")]
    shot = snapshot(
        row,
        node(content_desc="Navigate up", box=(0, 400, 100, 450), clickable=True),
        node("android.widget.ImageButton", (0, 500, 100, 550), resource_id="com.app:id/send", clickable=True),
        node(text="x" * 200, box=(0, 600, 100, 650)),
    )
    labels = [e.label for e in shot.elements]
    # The row has no text of its own: its label is that of its first two labelled children.
    assert labels[:3] == ["Wi-Fi · On", "Navigate up", "send"]
    assert len(labels[3]) == MAX_LABEL_CHARS


def test_a_password_field_never_shows_its_text() -> None:
    secret = node("android.widget.EditText", (0, 100, 500, 150), text="hunter2", password=True)
    (field,) = snapshot(secret).elements
    assert field.text == "" and "hunter2" not in field.line() and "hunter2" not in str(field.to_json())
    assert field.states() == ("password",)


def test_the_line_tells_ref_label_role_center_and_states() -> None:
    (switch,) = snapshot(
        node("android.widget.Switch", (0, 100, 200, 200), text="Wi-Fi", checkable=True, enabled=False)
    ).elements
    assert switch.line() == "@e1 Wi-Fi (switch) [100,150] unchecked disabled"
    assert switch.to_json()["bounds"] == {"x1": 0, "y1": 100, "x2": 200, "y2": 200}
    assert switch.to_json()["center"] == {"x": 100, "y": 150}


def test_the_center_is_that_of_the_visible_part() -> None:
    (wide,) = snapshot(node(text="wide", box=(-100, 2300, 1180, 2500))).elements
    assert wide.center == (540, 2350)


def test_find_same_follows_an_element_to_its_new_ref_and_not_to_a_changed_one() -> None:
    before = snapshot(node(text="A", box=(0, 100, 100, 150)), node(text="B", box=(0, 200, 100, 250)))
    after = snapshot(node(text="B", box=(0, 200, 100, 250)))
    b = before.by_ref["@e2"]
    assert after.find_same(b) == after.by_ref["@e1"]
    assert after.find_same(before.by_ref["@e1"]) is None
    moved = snapshot(node(text="B", box=(0, 260, 100, 310)))
    assert moved.find_same(b) is None


@pytest.mark.parametrize(
    ("target", "wanted"),
    [
        ("text=Wi-Fi", ["Wi-Fi"]),
        ("text=wi-fi", ["Wi-Fi"]),  # no exact match: falls back to case-insensitive
        ("textContains=FI", ["Wi-Fi", "Wi-Fi calling"]),
        ("desc=Navigate up", ["Navigate up"]),
        ("descContains=navigate", ["Navigate up"]),
        ("id=send", ["Send"]),
        ("id=com.app:id/send", ["Send"]),
        ("class=ImageButton", ["Send"]),
        ("class=android.widget.ImageButton", ["Send"]),
        ("role=switch", ["Wi-Fi"]),
    ],
)
def test_each_locator_form_matches_what_it_says(target: str, wanted: list[str]) -> None:
    shot = snapshot(
        node("android.widget.Switch", (0, 100, 200, 150), text="Wi-Fi", checkable=True),
        node(text="Wi-Fi calling", box=(0, 200, 200, 250)),
        node("android.widget.ImageButton", (0, 300, 100, 350), text="Send", resource_id="com.app:id/send"),
        node("android.widget.ImageView", (0, 400, 100, 450), content_desc="Navigate up"),
    )
    found = parse_target(target).find(shot)
    assert [e.label for e in found] == wanted


def test_an_exact_text_match_wins_over_the_case_insensitive_fallback() -> None:
    shot = snapshot(node(text="OK", box=(0, 100, 100, 150)), node(text="ok", box=(0, 200, 100, 250)))
    assert [e.text for e in parse_target("text=ok").find(shot)] == ["ok"]


def test_targets_parse_and_print_back() -> None:
    assert parse_target(" @e12 ") == Target(ref="@e12")
    assert parse_target("text = Settings ") == Target(key="text", value="Settings")
    assert parse_target("text=a=b").value == "a=b"
    assert str(parse_target("@e3")) == "@e3" and str(parse_target("role=button")) == "role=button"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("@e0", "'@e0' is not a ref; refs look like @e12. A target is a ref from list_elements"),
        ("@x1", "'@x1' is not a ref"),
        ("Settings", "'Settings' is not a target. A target is a ref from list_elements (@e12), or a locator"),
        ("label=Settings", "'label=Settings' is not a target"),
        ("text=  ", "the locator text= needs a value, e.g. text=Settings"),
        ("role=slider", "role=slider is not a role; the roles are button, input, switch, checkbox, list"),
        (12, "a target must be a string: a ref from list_elements"),
    ],
)
def test_a_malformed_target_says_what_the_forms_are(text: object, message: str) -> None:
    with pytest.raises(LocatorError) as caught:
        parse_target(text)  # type: ignore[arg-type]
    assert str(caught.value).startswith(message)


def test_every_locator_key_has_its_matcher():
    from phone_agent.tools.locators import _MATCHERS, LOCATOR_KEYS

    assert tuple(_MATCHERS) == LOCATOR_KEYS


# ----- joined clauses, in the flows' vocabulary (issue 35) -----------------------------------------


def rows_screen() -> ScreenSnapshot:
    """Three Settings-like rows (a clickable row with no text, its title and a switch), as read."""
    from phone_agent.adb.ui_dump import read_ui_dump
    from tests.ui_corpus.shapes import n, render

    rows = [
        n(
            "LinearLayout",
            (0, y, 1080, y + 200),
            n("TextView", (40, y + 40, 800, y + 100), text=title, rid="android:id/title"),
            n("Switch", (860, y + 50, 1040, y + 150), rid="android:id/switch_widget", checkable=True),
            clickable=True,
        )
        for y, title in ((300, "Wi-Fi"), (500, "Bluetooth"), (700, "Wi-Fi calling"))
    ]
    app = n("FrameLayout", (0, 0, 1080, 2400), *rows, pkg="com.android.settings")
    return ScreenSnapshot.from_nodes(read_ui_dump(render([app])).nodes)


@pytest.mark.parametrize(
    ("target", "wanted"),
    [
        ("id=title; index=1", [("text", "Bluetooth")]),
        ("id = title ;index=2", [("text", "Wi-Fi calling")]),
        ("role=switch; index=0", [("top", 350)]),
        ("role=switch; rightOf=(text=Bluetooth)", [("top", 550), ("top", 350), ("top", 750)]),
        ("role=switch; rightOf=(text=Bluetooth); index=0", [("top", 550)]),
        ("role=switch; childOf=(role=button; containsDescendants=(text=Wi-Fi calling))", [("top", 750)]),
        ("role=button; containsDescendants=(text=Bluetooth)", [("top", 500)]),
        ("role=button; containsChild=(text=Wi-Fi)", [("top", 300)]),
        ("id=switch_widget; below=(text=Bluetooth)", [("top", 750)]),
        ("text=Wi-Fi; above=(text=Bluetooth)", [("text", "Wi-Fi")]),
    ],
)
def test_joined_clauses_narrow_what_a_locator_finds(target: str, wanted: list[tuple[str, object]]) -> None:
    shot = rows_screen()
    found = parse_target(target).find(shot)
    assert len(found) == len(wanted)
    pairs = zip(wanted, found, strict=True)
    assert [("text", e.text) if key == "text" else ("top", e.bounds.top) for (key, _), e in pairs] == wanted


def test_every_element_has_a_locator_that_finds_exactly_it_and_reads_back() -> None:
    shot = rows_screen()
    assert [e.locator for e in shot.elements] == [
        "role=button; index=0",
        "text=Wi-Fi",
        "role=switch; index=0",
        "role=button; index=1",
        "text=Bluetooth",
        "role=switch; index=1",
        "role=button; index=2",
        "text=Wi-Fi calling",
        "role=switch; index=2",
    ]
    for element in shot.elements:
        assert parse_target(element.locator).find(shot) == [element]
        assert str(parse_target(element.locator)) == element.locator
        assert element.to_json()["locator"] == element.locator and "window" not in element.to_json()
    assert "index" not in shot.elements[1].line() and "locator" not in shot.elements[1].line()


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("a;b", "text=a;b"),  # one clause: the value as written
        ("Terms; index=3", "text=Terms\\; index=3"),  # would read as two clauses: escaped
        ("Smile :)", "text=Smile :)"),
        ("C:\\path", "text=C:\\path"),
    ],
)
def test_a_locator_is_written_so_that_it_reads_back(value: str, written: str) -> None:
    from phone_agent.flows.locator_syntax import Clause, format_clauses, parse_clauses

    assert format_clauses([Clause("text", value)]) == written
    assert parse_clauses(written) == [Clause("text", value)]
    joined = [Clause("text", value), Clause("index", "2")]
    assert parse_clauses(format_clauses(joined)) == joined
    nested = [Clause("role", "button"), Clause("containsDescendants", inner=(Clause("text", value),))]
    assert parse_clauses(format_clauses(nested)) == nested


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("text=OK; index=x", "index=x is not a number"),
        ("index=2", "'index=2' is not a target"),
        ("text=OK; index=1; index=2", "index= is given twice"),
        ("rightOf=text=OK", "rightOf= takes a locator in parentheses"),
        ("text=OK; below=(text=Title", "is not closed with )"),
        ("text=OK; below=(label=Title)", "'label' is not a locator key"),
        ("role=button; below=(role=knob)", "role=knob is not a role"),
        ("text=a" + "; childOf=(text=a" * 8 + ")" * 8, "nests at most 6 levels"),
    ],
)
def test_a_malformed_joined_locator_says_what_is_wrong(text: str, message: str) -> None:
    with pytest.raises(LocatorError) as caught:
        parse_target(text)
    assert message in str(caught.value)
