"""The live view controls the phone: a click taps, a drag swipes, the wheel scrolls, typing types, and
the Back / Home / Recents buttons press those keys — each a catalog call shown in the activity log.
And a newcomer with no phone starts the simulated one from the page."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from phone_agent.sim.server import SimulatedPhoneServer
from tests.browser.rigs import centre_of, page_point
from tests.support import eventually as _eventually
from tests.support import free_port, open_page, webmcp_call

pytestmark = pytest.mark.browser


async def test_clicks_drags_wheel_keys_and_buttons_reach_the_phone(browser, served, sim):
    url = f"{served.base}/?device=tcp:127.0.0.1:{sim.port}"
    async with open_page(browser, url) as (page, _watch):
        await page.set_viewport_size({"width": 1280, "height": 1600})  # the whole phone in view
        await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=30_000)
        await page.wait_for_function("document.getElementById('screen').naturalWidth === 1080")

        x, y = await page_point(page, *centre_of(sim, "Settings"))
        await page.mouse.click(x, y)
        await eventually(_is(lambda: sim.phone.current == "com.android.settings"))
        # The tap is in the activity log as a call of the live view (other rows may come after it).
        rows = page.locator("#activity .activity__row", has_text="live view")
        await rows.first.wait_for(timeout=10_000)
        assert await rows.first.locator(".activity__tool").text_content() == "tap"

        await page.click("#nav-home")
        await eventually(_is(lambda: sim.phone.current is None))

        sim.phone.launch("com.phoneagent.catalog")
        await page.wait_for_timeout(300)
        x1, y1 = await page_point(page, 540, 1900)
        x2, y2 = await page_point(page, 540, 900)
        await page.mouse.move(x1, y1)
        await page.mouse.down()
        await page.mouse.move(x2, y2, steps=8)
        await page.mouse.up()
        await eventually(_is(lambda: sim.phone.catalog_scroll > 0))
        dragged = sim.phone.catalog_scroll

        await page.mouse.move(x2, y2)
        await page.mouse.wheel(0, 300)
        await eventually(_is(lambda: sim.phone.catalog_scroll > dragged))
        # one big wheel move low on the list scrolls it (the stroke keeps off the navigation bar)
        wheeled = sim.phone.catalog_scroll
        await page.mouse.move(*await page_point(page, 540, 2250))
        await page.mouse.wheel(0, 600)
        await eventually(_is(lambda: sim.phone.catalog_scroll > wheeled))

        await page.click("#nav-back")
        await eventually(_is(lambda: sim.phone.current != "com.phoneagent.catalog"))
        sim.phone.launch("com.google.android.apps.messaging")
        await page.wait_for_timeout(300)
        x, y = await page_point(page, *centre_of(sim, "Zhang San"))
        await page.mouse.click(x, y)
        await eventually(_is(lambda: "Zhang San" in json.dumps(sim.phone.state())))
        await page.wait_for_timeout(500)
        field = centre_of_input(sim)
        x, y = await page_point(page, *field)
        await page.mouse.click(x, y)
        await eventually(_is(lambda: field_focused(sim)))  # the tap reached the phone first
        await page.keyboard.type("on my way")
        await eventually(_is(lambda: "on my way" in field_texts(sim)))
        # text that arrives as input events, not keys (Chromium inserts é and 你好 as text, as an IME
        # or a dead key would), and a composition and a paste-like insertion, reach the phone whole
        await page.keyboard.type(" Hi café 你好")
        await eventually(_is(lambda: "on my way Hi café 你好" in field_texts(sim)))
        await page.keyboard.insert_text(" Привет 👋")
        await eventually(_is(lambda: "on my way Hi café 你好 Привет 👋" in field_texts(sim)))
        rows = page.locator("#activity .activity__row", has_text="type_text")
        assert await rows.count() >= 1


def centre_of_input(sim: SimulatedPhoneServer) -> tuple[int, int]:
    from phone_agent.adb.ui_dump import parse_ui_dump
    from phone_agent.sim.android.ui import dump_xml

    for node in parse_ui_dump(dump_xml(sim.phone.windows())):
        if node.class_name.endswith("EditText"):
            return node.bounds.center
    raise AssertionError("no text field on the sim's screen")


def field_focused(sim: SimulatedPhoneServer) -> bool:
    from phone_agent.adb.ui_dump import parse_ui_dump
    from phone_agent.sim.android.ui import dump_xml

    nodes = parse_ui_dump(dump_xml(sim.phone.windows()))
    return any(node.focused for node in nodes if node.class_name.endswith("EditText"))


def field_texts(sim: SimulatedPhoneServer) -> str:
    from phone_agent.adb.ui_dump import parse_ui_dump
    from phone_agent.sim.android.ui import dump_xml

    nodes = parse_ui_dump(dump_xml(sim.phone.windows()))
    return " | ".join(node.text for node in nodes if node.class_name.endswith("EditText"))


def _is(check):
    async def run():
        return check()

    return run


async def eventually(check, timeout_s: float = 30.0):  # a loaded machine may take its time
    return await _eventually(check, timeout_s)


async def test_a_newcomer_starts_the_simulated_phone_from_the_page(browser, served):
    async with open_page(browser, served.base + "/") as (page, _watch):
        await page.wait_for_selector("#sim-offer:not([hidden])", timeout=10_000)
        await page.click("#start-sim")
        await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=30_000)
        assert not await page.is_visible("#sim-offer")
        status = await webmcp_call(page, "get_device_status", {})
        assert json.loads(status["content"][0]["text"])["connected"] is True
        # the phone `serve --sim` starts: scrcpy runs on it, and the Settings card says so
        await page.wait_for_selector("canvas#screen[data-source=scrcpy]", state="attached", timeout=30_000)
        await page.wait_for_function(
            "document.getElementById('settings-screen-state').textContent.startsWith('Live view: scrcpy')"
        )
        answers = []

        async def live_frame() -> bool:  # the first decoded frame may take a moment on a loaded machine
            answers.append(await webmcp_call(page, "take_screenshot", {"source": "live"}))
            return not answers[-1].get("isError")

        await eventually(live_frame)
        assert not answers[-1].get("isError"), answers[-1]


async def test_the_simulated_phone_comes_back_where_the_restarted_server_runs_it(browser):
    from tests.support import ServedPhoneAgent

    first = ServedPhoneAgent()
    second = None
    try:
        # While the server is down its relay, bridge and /api/sim are refused.
        server_down = (r"WebSocket connection to .* failed", r"Failed to load resource")
        async with open_page(browser, first.base + "/", allowed_console=server_down) as (page, _watch):
            await page.wait_for_selector("#sim-offer:not([hidden])", timeout=10_000)
            await page.click("#start-sim")
            await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=30_000)
            await page.uncheck("#live-toggle")
            before = await page.text_content(".card--phone") or ""
            first.stop()  # its simulated phone goes with it
            await page.wait_for_selector("html[data-phone=none]", state="attached", timeout=15_000)
            second = ServedPhoneAgent(port=first.port)  # runs no simulated phone until asked
            await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=40_000)
            status = json.loads((await webmcp_call(page, "get_device_status", {}))["content"][0]["text"])
            assert status["connected"] is True
            after = await page.text_content(".card--phone") or ""
            assert "127.0.0.1:" in after and after != before, (before, after)
    finally:
        if first.process.poll() is None:
            first.stop()
        log = second.stop() if second is not None else ""
    assert "asked for by the page" in log, log  # the page asked the new server for its phone


async def test_with_serve_sim_the_button_connects_to_its_phone_and_starts_no_other(browser):
    from tests.support import ServedPhoneAgent

    sim_port = free_port()
    server = ServedPhoneAgent("--sim", "--sim-port", str(sim_port))
    try:
        async with open_page(browser, server.base + "/") as (page, _watch):
            await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=30_000)
            await page.click("#disconnect")
            await page.wait_for_selector("#sim-offer:not([hidden])", timeout=10_000)
            await page.click("#start-sim")
            await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=30_000)
            assert f"127.0.0.1:{sim_port}" in (await page.text_content(".card--phone") or "")
    finally:
        log = server.stop()
    assert log.count("simulated phone") == 1, log  # the one `--sim` announced, no other started
    assert "asked for by the page" not in log, log


def test_only_a_same_origin_page_may_start_the_simulated_phone(served):
    for headers in (
        {},
        {"Origin": "http://evil.example"},
        {"Origin": served.base, "Sec-Fetch-Site": "cross-site"},
    ):
        request = urllib.request.Request(served.base + "/api/sim", method="POST", headers=headers)
        with pytest.raises(urllib.error.HTTPError) as info:
            urllib.request.urlopen(request, timeout=10)
        assert info.value.code == 403
