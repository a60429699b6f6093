"""The Device interface's pure parts: key names and device info."""

import pytest

from phone_agent.device.interface import DeviceInfo, key_code


def test_key_names():
    assert key_code("back") == "KEYCODE_BACK"
    assert key_code("Recents") == "KEYCODE_APP_SWITCH"
    assert key_code("keycode_enter") == "KEYCODE_ENTER"
    assert key_code("66") == "66"
    assert key_code("KEYCODE_MEDIA_PLAY_PAUSE") == "KEYCODE_MEDIA_PLAY_PAUSE"
    assert key_code("KEYCODE_SCREENSHOT") == "KEYCODE_SCREENSHOT"
    for bad in ("", "KEYCODE_", "rm -rf", "back; reboot", "KEYCODE_A B", "KEYCODE_NOPE", "KEYCODE_BACKK"):
        with pytest.raises(ValueError):
            key_code(bad)


def test_device_info_json_puts_the_seeds_fields_first():
    info = DeviceInfo("Pixel 7", "google", "Google", "14", "34", "SER1", 1080, 2400, "tcp")
    data = info.to_json()
    assert list(data)[:4] == ["model", "brand", "release", "sdk"]
    assert data["screenWidth"] == 1080 and data["transport"] == "tcp"


def test_the_key_code_table_is_androids():
    from phone_agent.device.key_codes import KEY_CODE_NUMBERS

    # spot checks against android.view.KeyEvent
    expected = {"UNKNOWN": 0, "HOME": 3, "A": 29, "ENTER": 66, "DEL": 67, "ESCAPE": 111, "F12": 142,
                "NUMPAD_ENTER": 160, "APP_SWITCH": 187, "ASSIST": 219, "HELP": 259, "PASTE": 279,
                "ALL_APPS": 284, "SCREENSHOT": 318}  # fmt: skip
    assert {name: KEY_CODE_NUMBERS[name] for name in expected} == expected
    assert len(KEY_CODE_NUMBERS) == 319
