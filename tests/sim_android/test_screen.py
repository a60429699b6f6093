"""The screenshot, the UI dump and hit-testing agree: one node tree behind all three."""

from __future__ import annotations

import io

from PIL import Image

from .conftest import Harness


def test_png_is_a_valid_1080x2400_image(h: Harness) -> None:
    png = h.png()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    image = Image.open(io.BytesIO(png))
    image.verify()
    assert Image.open(io.BytesIO(png)).size == (1080, 2400)


def test_png_is_byte_identical_while_nothing_changes(h: Harness) -> None:
    first = h.png()
    h.out("getprop")
    h.out("dumpsys", "window")
    h.out("uiautomator", "dump")
    h.out("input", "tap", "540", "900")  # empty wallpaper: no node there
    assert h.png() == first
    assert h.phone.screenshot_png() is h.phone.screenshot_png()  # cached, not re-encoded


def test_png_changes_after_a_tap_that_changes_the_screen(h: Harness) -> None:
    before = h.png()
    h.tap(h.node(text="Settings"))
    after = h.png()
    assert after != before
    assert h.phone.state()["screen"] == "settings/main"


def test_status_bar_clock_follows_the_clock(h: Harness) -> None:
    before = h.png()
    h.phone.clock = lambda: "12:01"
    assert h.png() != before
    assert h.node(resource_id="com.android.systemui:id/clock")["text"] == "12:01"


def test_dump_bounds_match_drawn_pixels(h: Harness) -> None:
    # Home: the Messages icon's circle is Messages blue, inside the node's bounds.
    icon = h.node(text="Messages")
    x1, y1, x2, _ = icon.bounds
    image = h.image()
    assert image.getpixel(((x1 + x2) // 2, y1 + 95)) == (26, 115, 232)
    assert image.getpixel((x1 - 5, y1 + 95)) != (26, 115, 232)
    # Messages thread: the Send button is a circle filling its bounds.
    h.tap(icon)
    h.tap(h.node(text="Zhang San"))
    h.tap(h.node(resource_id="com.google.android.apps.messaging:id/compose_message_text"))
    h.out("input", "text", "hi")
    send = h.node(content_desc="Send SMS")
    image = h.image()
    sx1, sy1, _, sy2 = send.bounds
    assert image.getpixel((sx1 + 20, (sy1 + sy2) // 2)) == (26, 115, 232)  # left of the white glyph
    assert image.getpixel((sx1 - 3, (sy1 + sy2) // 2)) != (26, 115, 232)
    # The last bubble is drawn inside its bounds in the sent colour.
    bubble = [
        n for n in h.nodes() if n["resource-id"] == "com.google.android.apps.messaging:id/message_text"
    ][-1]
    bx1, by1, _bx2, by2 = bubble.bounds
    assert image.getpixel((bx1 + 10, (by1 + by2) // 2)) == (232, 234, 237)  # "them" bubble grey
    assert image.getpixel((bx1 - 10, (by1 + by2) // 2)) == (250, 250, 252)  # background outside


def test_switch_pixels_follow_checked(h: Harness) -> None:
    h.out("am", "start", "-a", "android.settings.WIFI_SETTINGS")
    switch = h.node(**{"class": "android.widget.Switch"})
    assert switch["checked"] == "true" and switch["checkable"] == "true"
    x1, _, _, _ = switch.bounds
    _cx, cy = switch.center
    assert h.image().getpixel((x1 + 30, cy)) == (26, 115, 232)
    h.tap(switch)
    switch = h.node(**{"class": "android.widget.Switch"})
    assert switch["checked"] == "false"
    assert h.image().getpixel((x1 + 30, cy)) != (26, 115, 232)


def test_tapping_the_centre_of_each_home_icon_launches_that_app(h: Harness) -> None:
    expected = {
        "Settings": "com.android.settings",
        "Messages": "com.google.android.apps.messaging",
        "Catalog": "com.phoneagent.catalog",
        "Chrome": "com.android.chrome",
        "Clock": "com.google.android.deskclock",
        "Camera": "com.google.android.GoogleCamera",
    }
    for label, package in expected.items():
        h.out("input", "keyevent", "KEYCODE_HOME")
        icon = h.node(text=label, clickable="true")
        h.tap(icon)
        state = h.phone.state()
        assert state["package"] == package, label
        assert h.nodes()[0]["package"] == package


def test_every_clickable_node_in_the_dump_is_hit_by_its_centre(h: Harness) -> None:
    """For each screen, the node that a tap at a clickable node's centre reaches is that node."""
    from phone_agent.sim.android.ui import hit_test

    for command in (
        ["input", "keyevent", "HOME"],
        ["am", "start", "-n", "com.android.settings/.Settings"],
        ["am", "start", "-n", "com.google.android.apps.messaging/.ui.ConversationListActivity"],
        ["am", "start", "-n", "com.phoneagent.catalog/.MainActivity"],
    ):
        h.out(*command)
        windows = h.phone.windows()
        dumped = [n for n in h.nodes() if n["clickable"] == "true"]
        assert dumped
        for node in dumped:
            hit = hit_test(windows, *node.center)
            assert hit is not None
            x1, y1, x2, y2 = hit.bounds
            assert f"[{x1},{y1}][{x2},{y2}]" == node["bounds"]


def test_status_bar_icons_follow_wifi_and_bluetooth(h: Harness) -> None:
    descs = {n["content-desc"] for n in h.nodes()}
    assert "Wifi signal full." in descs and "Bluetooth on." not in descs
    h.out("svc", "wifi", "disable")
    h.out("svc", "bluetooth", "enable")
    descs = {n["content-desc"] for n in h.nodes()}
    assert "Wifi signal full." not in descs and "Bluetooth on." in descs


def test_navigation_bar_buttons_are_in_the_dump_and_work(h: Harness) -> None:
    h.out("am", "start", "-n", "com.android.settings/.Settings")
    h.tap(h.node(content_desc="Home"))
    assert h.phone.state()["screen"] == "home"
    h.tap(h.node(content_desc="Overview"))
    assert h.phone.state()["screen"] == "recents"
    h.tap(h.node(content_desc="Back"))
    assert h.phone.state()["screen"] == "home"


def test_the_layered_renderer_draws_what_render_draws(h: Harness) -> None:
    """The scrcpy encoder's renderer (windows kept below the first that changed) gives the screen's
    own pixels through clock ticks, screen changes, a keyboard, recents and an unchanged screen."""
    from PIL import ImageChops

    from phone_agent.sim.android import render

    layered = render.LayeredRenderer()
    minutes = iter(range(10, 60))

    def tick() -> None:
        shown = f"12:{next(minutes)}"
        h.phone.clock = lambda: shown

    steps = [
        lambda: None,
        tick,
        tick,
        lambda: h.tap(h.node(text="Messages")),
        tick,
        lambda: h.tap(h.node(text="Zhang San")),
        lambda: h.tap(h.node(resource_id="com.google.android.apps.messaging:id/compose_message_text")),
        lambda: h.out("input", "text", "hi"),
        lambda: h.out("input", "keyevent", "APP_SWITCH"),
        lambda: h.out("input", "keyevent", "HOME"),
        lambda: None,
    ]
    previous = None
    for step in steps:
        step()
        windows = h.phone.windows()
        frame = layered.render(windows)
        assert ImageChops.difference(frame, render.render(windows)).getbbox() is None
        assert frame.tobytes() == h.phone.screenshot().tobytes()
        if previous is not None and windows == previous:
            assert layered.render(h.phone.windows()) is frame  # unchanged: not drawn again
        previous = windows
    # fewer windows, then more again: still the screen's pixels
    windows = h.phone.windows()
    assert layered.render(windows[:1]).tobytes() == render.render(windows[:1]).tobytes()
    assert layered.render(windows).tobytes() == render.render(windows).tobytes()
    assert layered.render([]).getbbox() is None  # nothing on screen: black
