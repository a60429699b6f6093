"""The uiautomator dump format: bounds, and a dump's nodes flattened in document order."""

import pytest

from phone_agent.adb.ui_dump import parse_bounds, parse_ui_dump
from phone_agent.device.interface import Bounds
from phone_agent.errors import DeviceError

DUMP = (
    "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>"
    '<hierarchy rotation="0">'
    '<node index="0" text="" resource-id="" class="android.widget.FrameLayout" package="com.android.settings"'
    ' content-desc="" checkable="false" checked="false" clickable="false" enabled="true" focusable="false"'
    ' focused="false" scrollable="true" long-clickable="false" password="false" selected="false"'
    ' bounds="[0,0][1080,2400]">'
    '<node index="0" text="Wi-Fi" resource-id="android:id/title" class="android.widget.Switch"'
    ' package="com.android.settings" content-desc="" checkable="true" checked="true" clickable="true"'
    ' enabled="true" focusable="true" focused="false" scrollable="false" long-clickable="false"'
    ' password="false" selected="false" bounds="[42,300][1038,420]" />'
    "</node></hierarchy>"
)


def test_bounds():
    bounds = parse_bounds("[42,300][1038,420]")
    assert bounds == Bounds(42, 300, 1038, 420)
    assert bounds.center == (540, 360) and bounds.width == 996 and bounds.height == 120
    assert bounds.contains(42, 300) and not bounds.contains(1038, 420)
    with pytest.raises(ValueError):
        parse_bounds("[1,2][3]")


def test_parse_ui_dump_flattens_in_document_order():
    nodes = parse_ui_dump("UI hierchary dumped to: /dev/tty\n" + DUMP)
    assert [n.class_name for n in nodes] == ["android.widget.FrameLayout", "android.widget.Switch"]
    switch = nodes[1]
    assert switch.text == "Wi-Fi" and switch.checkable and switch.checked and switch.clickable
    assert switch.depth == 1 and switch.bounds.center == (540, 360)
    assert nodes[0].children == [switch] and nodes[0].scrollable


@pytest.mark.parametrize("text", ["", "ERROR: could not get idle state.", "<hierarchy><node"])
def test_a_failed_dump_is_a_device_error(text):
    with pytest.raises(DeviceError) as info:
        parse_ui_dump(text)
    assert info.value.to_result()["structuredContent"]["code"] == "device_error"


# ----- odd and hostile trees (issue 35, item 5; issue 33, item 5) ------------------------------------


def test_odd_attributes_take_their_defaults_and_the_note_counts_them():
    from phone_agent.adb.ui_dump import read_ui_dump

    dump = read_ui_dump(
        '<hierarchy rotation="3"><node index="x" text="A" bounds="[0,0][10,10]">'
        '<node index="1.0" class="android.widget.Button" clickable="true" bounds="[0,0][5,5]" />'
        '<node text="no bounds" /><node text="broken" bounds="[0,0][5]" enabled="maybe" /></node></hierarchy>'
    )
    assert [n.index for n in dump.nodes] == [0, 1, 0, 0]
    assert dump.rotation == 3 and dump.nodes[1].clickable and dump.nodes[3].enabled
    assert dump.nodes[2].bounds == Bounds(0, 0, 0, 0) and dump.nodes[2].package == ""
    assert "2 nodes without readable bounds (not shown)" in dump.note
    assert "2 node indexes not a number (read as 0)" in dump.note


def test_nodes_inside_an_unknown_wrapper_element_are_kept_with_their_parents():
    nodes = parse_ui_dump(
        '<hierarchy><window id="1"><node text="root" bounds="[0,0][10,10]"><extra>'
        '<node text="child" bounds="[0,0][5,5]" /></extra></node></window></hierarchy>'
    )
    assert [(n.text, n.depth) for n in nodes] == [("root", 0), ("child", 1)]
    assert nodes[0].children == [nodes[1]]


def test_characters_xml_forbids_are_read_as_question_marks():
    nodes = parse_ui_dump('<hierarchy><node text="a\x01b&#2;c" bounds="[0,0][1,1]" /></hierarchy>')
    assert nodes[0].text == "a?b?c"


@pytest.mark.parametrize(
    ("levels", "kept", "note"),
    [
        (600, 500, "100 nodes deeper than 500 levels (the tree goes 600 deep) left out"),
        (100_000, 500, "99,500 nodes deeper than 500 levels (the tree goes 100,000 deep) left out"),
    ],
)
def test_a_deep_tree_is_cut_at_its_depth_bound_without_recursion(levels, kept, note):
    from phone_agent.adb.ui_dump import read_ui_dump

    xml = "<hierarchy>" + '<node bounds="[0,0][9,9]">' * levels + "</node>" * levels + "</hierarchy>"
    dump = read_ui_dump(xml)
    assert len(dump.nodes) == kept and dump.nodes[-1].depth == kept - 1
    assert dump.note == note


def test_a_wide_tree_is_cut_at_its_size_bound():
    from phone_agent.adb.ui_dump import MAX_TREE_NODES, read_ui_dump

    rows = '<node text="r" bounds="[0,0][9,9]" />' * (MAX_TREE_NODES + 10)
    dump = read_ui_dump(f'<hierarchy><node bounds="[0,0][9,9]">{rows}</node></hierarchy>')
    assert len(dump.nodes) == MAX_TREE_NODES
    assert dump.note.startswith(f"the tree has more than {MAX_TREE_NODES:,} nodes")
    assert len(dump.nodes[0].children) == MAX_TREE_NODES - 1
