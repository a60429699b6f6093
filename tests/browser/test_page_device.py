"""PageDevice, what the tools hold while the page has chosen a phone: it passes the calls to the
phone — to the ScrcpyDevice while scrcpy runs — and while the link is down answers why it dropped,
whatever scrcpy's run does as it winds down."""

from __future__ import annotations

import pytest

from phone_agent.adb.connection_kinds import ADB_SERVER, NETWORK, parse_device_spec
from phone_agent.agent.benchkit import InstantPhone
from phone_agent.browser.page_device import PageDevice, lost_message, query_param
from phone_agent.errors import DeviceError


async def test_calls_go_through_the_device_it_routes_through_until_the_link_drops():
    plain, scrcpy, back = InstantPhone(b"plain"), InstantPhone(b"scrcpy"), InstantPhone(b"back")
    link = PageDevice(plain)  # type: ignore[arg-type]
    assert await link.screenshot_png() == b"plain"
    link.route_through(scrcpy)
    assert await link.screenshot_png() == b"scrcpy"
    link.route_through(plain)  # scrcpy stopped
    assert await link.screenshot_png() == b"plain"

    lost: list[str] = []
    link.watch(lost.append)
    link.route_through(scrcpy)
    link.lose("the phone closed the connection")
    assert lost == ["the phone closed the connection"]
    link.route_through(plain)  # scrcpy's run ends after the drop: the link still says why
    with pytest.raises(DeviceError, match=r"The phone was disconnected \(the phone closed the connection\)"):
        await link.tap(1, 2)
    link.attach(back)  # reconnected
    assert await link.screenshot_png() == b"back"


def test_the_page_url_names_the_phone():
    assert parse_device_spec("tcp:127.0.0.1:5555") == (NETWORK, "127.0.0.1:5555")
    assert parse_device_spec("adb-server:emulator-5554") == (ADB_SERVER, "emulator-5554")
    with pytest.raises(ValueError, match="use tcp:HOST:PORT or adb-server:SERIAL"):
        parse_device_spec("usb:1")
    assert query_param("http://h/?device=tcp:x:1&a=2", "device") == "tcp:x:1"
    assert query_param("http://h/", "device") is None
    assert lost_message("it went away.") == "The phone was disconnected (it went away)."
