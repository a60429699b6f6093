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
