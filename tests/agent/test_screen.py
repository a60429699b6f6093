"""The model's image and the device: sizes, exact mapping both ways, the useful UI nodes, and one look
at the phone (screenshot, tree and app asked for at once)."""

from __future__ import annotations

import asyncio
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from phone_agent.agent.benchkit import InstantPhone, NullCodec, TimedCodec
from phone_agent.agent.screen import ScreenMapping, observe, screen_changed, summarize_nodes
from phone_agent.device.interface import Bounds, UiNode
from phone_agent.errors import DeviceError


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
        '- @e1 "Wi-Fi" button at (270, 250)',
        '- @e3 "" switch at (475, 250) [on]',
        '- @e4 "" input at (270, 375) [focused]',
    ]  # the layout without a label and the empty node are left out; the duplicate keeps its ref only


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


class _GatedPhone(InstantPhone):
    """The screenshot answers only once the UI dump and the app query have both started."""

    def __init__(self, png: bytes) -> None:
        super().__init__(png)
        self.started: set[str] = set()
        self.both_started = asyncio.Event()
        self.cancelled: list[str] = []
        self.fail_screenshot = False

    def _start(self, name: str) -> None:
        self.started.add(name)
        if {"nodes", "app"} <= self.started:
            self.both_started.set()

    async def screenshot_png(self) -> bytes:
        await asyncio.wait_for(self.both_started.wait(), 5)
        if self.fail_screenshot:
            raise DeviceError("screencap failed")
        return self.png

    async def _slow(self, name: str, value):
        self._start(name)
        try:
            await asyncio.sleep(0.05)
        except asyncio.CancelledError:
            self.cancelled.append(name)
            raise
        return value

    async def ui_nodes(self):
        return await self._slow("nodes", self.nodes)

    async def current_app(self):
        return await self._slow("app", "com.example/.Main")


def _png(colour: str = "white") -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (1080, 2400), colour).save(out, "PNG")
    return out.getvalue()


async def test_observe_asks_the_phone_for_screen_tree_and_app_at_once():
    phone = _GatedPhone(_png())
    codec = TimedCodec(NullCodec())
    seen = await observe(phone, codec, max_side=1024, with_nodes=True, with_app=True)
    assert seen.current_app == "com.example/.Main"
    assert seen.nodes and seen.nodes_error is None
    assert (seen.mapping.image_width, seen.mapping.image_height) == (461, 1024)


async def test_a_failed_screenshot_cancels_the_tree_and_app_queries():
    phone = _GatedPhone(_png())
    phone.fail_screenshot = True
    with pytest.raises(DeviceError, match="screencap failed"):
        await observe(phone, NullCodec(), max_side=1024, with_nodes=True, with_app=True)
    await asyncio.sleep(0)
    assert sorted(phone.cancelled) == ["app", "nodes"]


async def test_a_failed_tree_or_app_query_loses_only_that():
    class Flaky(InstantPhone):
        async def ui_nodes(self):
            raise DeviceError("could not get idle state")

        async def current_app(self):
            raise DeviceError("dumpsys failed")

    seen = await observe(Flaky(_png()), NullCodec(), max_side=1024, with_nodes=True, with_app=True)
    assert seen.nodes == [] and seen.nodes_error == "could not get idle state"
    assert seen.current_app is None and seen.image


async def test_an_unchanged_screenshot_is_not_scaled_again():
    codec = TimedCodec(NullCodec())
    calls: list[bytes] = []
    original = codec.scale

    async def counting_scale(png, *args):
        calls.append(png)
        return await original(png, *args)

    codec.scale = counting_scale  # type: ignore[method-assign]
    first = await observe(InstantPhone(_png()), codec, max_side=1024, with_nodes=False)
    again = await observe(InstantPhone(_png()), codec, max_side=1024, with_nodes=False, previous=first)
    assert len(calls) == 1 and again.image is first.image and again.thumb is first.thumb
    other = await observe(InstantPhone(_png("black")), codec, max_side=1024, with_nodes=False, previous=first)
    assert len(calls) == 2 and other.png != first.png
