"""ScreenshotTap: every call passes through; each screenshot also goes to the listener, whose failure
never fails the call."""

from __future__ import annotations

from phone_agent.agent.benchkit import InstantPhone
from phone_agent.device.wrapper import ScreenshotTap


async def test_screenshots_reach_the_listener_and_calls_pass_through():
    phone = InstantPhone([b"first", b"second"])
    frames: list[bytes] = []
    tapped = ScreenshotTap(phone, frames.append)
    assert await tapped.screenshot_png() == b"first"
    await tapped.tap(1, 2)  # the phone's screen changes on an action
    assert await tapped.screenshot_png() == b"second"
    assert frames == [b"first", b"second"]
    assert await tapped.current_app() == "com.example/.Main"
    assert len(await tapped.ui_nodes()) == len(phone.nodes)


async def test_a_failing_listener_does_not_fail_the_screenshot():
    def broken(_png: bytes) -> None:
        raise RuntimeError("the display went away")

    tapped = ScreenshotTap(InstantPhone(b"png"), broken)
    assert await tapped.screenshot_png() == b"png"
