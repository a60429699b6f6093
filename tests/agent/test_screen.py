"""The model's image and the device: sizes, exact mapping both ways, the useful UI nodes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from phone_agent.agent.screen import ScreenMapping, screen_changed, summarize_nodes
from phone_agent.device import Bounds, UiNode


def test_fit_keeps_the_aspect_and_caps_the_longer_side():
    assert ScreenMapping.fit(1080, 2400, 1024) == ScreenMapping(1080, 2400, 461, 1024)
    assert ScreenMapping.fit(2400, 1080, 1024) == ScreenMapping(2400, 1080, 1024, 461)
    assert ScreenMapping.fit(720, 1280, 1600) == ScreenMapping(720, 1280, 720, 1280)


@settings(deadline=None)  # a loaded CI machine must not fail a correct example
@given(
    st.integers(200, 3000),
    st.integers(200, 3000),
    st.integers(256, 1600),
    st.integers(0, 10_000),
    st.integers(0, 10_000),
    st.integers(1, 400),
    st.integers(1, 400),
)
def test_a_node_centre_sent_to_the_model_maps_back_inside_the_node(width, height, side, x, y, w, h):
    mapping = ScreenMapping.fit(width, height, side)
    left, top = x % width, y % height
    bounds = Bounds(left, top, min(width, left + w), min(height, top + h))
    ix, iy = mapping.to_image(*bounds.center)
    dx, dy = mapping.to_device(ix, iy)
    scale_x, scale_y = width / mapping.image_width, height / mapping.image_height
    # Back within one image pixel of the centre, and inside the node when it is at least a pixel big.
    assert abs(dx - bounds.center[0]) <= scale_x and abs(dy - bounds.center[1]) <= scale_y
    if bounds.width >= 2 * scale_x and bounds.height >= 2 * scale_y:
        assert bounds.contains(dx, dy)


def test_every_image_pixel_maps_onto_the_device():
    mapping = ScreenMapping.fit(1080, 2400, 1024)
    assert mapping.to_device(0, 0) == (1, 1)
    assert mapping.to_device(460, 1023) == (1078, 2398)


def test_useful_nodes_only_with_their_kind_and_state():
    mapping = ScreenMapping(1080, 2400, 540, 1200)
    nodes = [
        UiNode(Bounds(0, 0, 1080, 2400), class_name="android.widget.FrameLayout"),
        UiNode(
            Bounds(0, 400, 1080, 600), text="Wi-Fi", clickable=True, class_name="android.widget.LinearLayout"
        ),
        UiNode(Bounds(900, 450, 1000, 550), checkable=True, checked=True, class_name="android.widget.Switch"),
        UiNode(Bounds(0, 700, 1080, 800), class_name="android.widget.EditText", focused=True, text=""),
        UiNode(Bounds(0, 0, 0, 0), text="hidden"),
        UiNode(Bounds(0, 400, 1080, 600), text="Wi-Fi", clickable=True),
    ]
    lines = [node.line() for node in summarize_nodes(nodes, mapping)]
    assert lines == [
        '- "Wi-Fi" clickable at (270, 250)',
        '- "" switch at (475, 250) [on]',
        '- "" text field at (270, 375) [focused]',
    ]  # the layout without a label, the empty node and the duplicate are left out


def test_screen_change_ignores_the_bars_and_a_blinking_caret():
    base = bytearray(48 * 96 * 4)
    top_only = bytearray(base)
    top_only[0:40] = b"\xff" * 40
    assert not screen_changed(bytes(base), bytes(top_only))
    caret = bytearray(base)
    caret[48 * 4 * 50 : 48 * 4 * 50 + 4] = b"\xff\xff\xff\xff"
    assert not screen_changed(bytes(base), bytes(caret))
    moved = bytearray(base)
    moved[48 * 4 * 40 : 48 * 4 * 44] = b"\xff" * (48 * 4 * 4)
    assert screen_changed(bytes(base), bytes(moved))
