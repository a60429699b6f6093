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
