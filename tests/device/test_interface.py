"""The Device interface's pure parts: key names and device info."""

import pytest

from phone_agent.device.interface import DeviceInfo, key_code


def test_key_names():
    assert key_code("back") == "KEYCODE_BACK"
    assert key_code("Recents") == "KEYCODE_APP_SWITCH"
    assert key_code("keycode_enter") == "KEYCODE_ENTER"
    assert key_code("66") == "66"
    for bad in ("", "KEYCODE_", "rm -rf", "back; reboot", "KEYCODE_A B"):
        with pytest.raises(ValueError):
            key_code(bad)


def test_device_info_json_puts_the_seeds_fields_first():
    info = DeviceInfo("Pixel 7", "google", "Google", "14", "34", "SER1", 1080, 2400, "tcp")
    data = info.to_json()
    assert list(data)[:4] == ["model", "brand", "release", "sdk"]
    assert data["screenWidth"] == 1080 and data["transport"] == "tcp"


def test_screen_info_from_wm_and_the_display():
    from phone_agent.tools.device_tools import parse_screen_info

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
