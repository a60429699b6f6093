"""What the phone says of its screen (``wm size``, ``wm density``, ``dumpsys display``), read as
get_screen_info answers it."""

from phone_agent.adb.screen_info import parse_screen_info


def test_screen_info_from_wm_and_the_display():
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
