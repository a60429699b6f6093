"""The Device interface's pure parts: key names, bounds, and parsing uiautomator dumps."""

import pytest

from phone_agent.device import Bounds, DeviceInfo, key_code, parse_bounds, parse_ui_dump
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


def test_key_names():
    assert key_code("back") == "KEYCODE_BACK"
    assert key_code("Recents") == "KEYCODE_APP_SWITCH"
    assert key_code("keycode_enter") == "KEYCODE_ENTER"
    assert key_code("66") == "66"
    for bad in ("", "KEYCODE_", "rm -rf", "back; reboot", "KEYCODE_A B"):
        with pytest.raises(ValueError):
            key_code(bad)


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


def test_device_info_json_puts_the_seeds_fields_first():
    info = DeviceInfo("Pixel 7", "google", "Google", "14", "34", "SER1", 1080, 2400, "tcp")
    data = info.to_json()
    assert list(data)[:4] == ["model", "brand", "release", "sdk"]
    assert data["screenWidth"] == 1080 and data["transport"] == "tcp"


def test_screen_info_from_wm_and_the_display():
    from phone_agent.device_actions import parse_screen_info

    text = (
        "Physical size: 1080x2400\nPhysical density: 420\n"
        '  mBaseDisplayInfo=DisplayInfo{"Built-in Screen", displayId 0, real 1080 x 2400, rotation 0, '
        "density 420 (403.4 x 399.7) dpi, state ON}\n"
    )
    assert parse_screen_info(text) == {
        "width": 1080,
        "height": 2400,
        "density": 420,
        "orientation": "portrait",
        "rotation": 0,
        "screenOn": True,
    }
    turned = text.replace("rotation 0", "rotation 1").replace("state ON", "state OFF")
    info = parse_screen_info(turned + "Override size: 720x1600\nOverride density: 320\n")
    assert (info["width"], info["height"], info["orientation"]) == (1600, 720, "landscape")
    assert info["density"] == 320 and info["screenOn"] is False
    tablet = "Physical size: 2560x1600\nPhysical density: 320\n" + text.split("\n", 2)[2]
    assert parse_screen_info(tablet)["orientation"] == "landscape"  # a tablet held its natural way
