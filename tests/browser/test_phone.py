"""The page's phone over the server's ADB bridge, against the simulated phone: Pyodide speaks ADB.

The page is opened with ?device=tcp:127.0.0.1:PORT; both channels then report the phone's status and
return its screen, byte for byte what Debian's adb gets from the same phone.
"""

from __future__ import annotations

import base64
import json

import pytest

from phone_agent.sim.server import SimulatedPhoneServer
from tests.browser.rigs import started_sim
from tests.support import (
    eventually,
    free_port,
    mcp_stdio_session,
    open_page,
    page_link,
    result_text,
    webmcp_call,
)

pytestmark = pytest.mark.browser
PNG = b"\x89PNG\r\n\x1a\n"


async def connected(page) -> None:
    await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=30_000)


async def test_the_page_connects_to_the_phone_and_both_channels_see_it(browser, sim, debian_adb, adb_serial):
    port = free_port()
    url = f"http://127.0.0.1:{port}/?device=tcp:127.0.0.1:{sim.port}&relayRetryMs=300"
    async with mcp_stdio_session("--port", str(port), "--self-check-delay", "0") as session:
        async with open_page(browser, url) as (page, _watch):
            await connected(page)
            assert "Connected: Pixel 7" in await page.text_content("#device-state")

            status = await webmcp_call(page, "get_device_status", {})
            info = json.loads(status["content"][0]["text"])
            assert info["connected"] is True
            seed_fields = (info["model"], info["brand"], info["release"], info["sdk"])
            assert seed_fields == ("Pixel 7", "google", "14", "34")
            assert info["serial"] == sim.serial
            assert (info["screenWidth"], info["screenHeight"]) == (1080, 2400)
            assert info["transport"] == "tcp"

            relayed = await session.call_tool("get_device_status", {})
            assert json.loads(result_text(relayed)) == info

            shot_b = await webmcp_call(page, "take_screenshot", {})
            assert shot_b["content"][0]["mimeType"] == "image/png"
            png_b = base64.b64decode(shot_b["content"][0]["data"])
            shot_a = await session.call_tool("take_screenshot", {})
            assert shot_a.content[0].mime_type == "image/png"
            png_a = base64.b64decode(shot_a.content[0].data)
            assert png_a.startswith(PNG) and png_a == png_b

            reference = await debian_adb.output("-s", adb_serial, "exec-out", "screencap", "-p")
            assert reference == png_a

            # The live view shows the screen and how fast it refreshes.
            await page.wait_for_function("document.getElementById('screen').naturalWidth === 1080")
            await eventually(lambda: _fps_shown(page))

            # What the phone shows next, the next screenshot shows.
            sim.phone.launch("com.google.android.apps.messaging")
            after = await webmcp_call(page, "take_screenshot", {})
            assert base64.b64decode(after["content"][0]["data"]) != png_b


def _async(check):
    async def run():
        return check()

    return run


async def _fps_shown(page) -> bool:
    return (await page.text_content("#fps") or "").endswith("fps")


async def test_a_phone_that_goes_away_is_reported_and_comes_back_by_itself(browser, served):
    phone = await started_sim()
    port = phone.port
    async with open_page(browser, f"{served.base}/?device=tcp:127.0.0.1:{port}") as (page, _watch):
        await connected(page)
        await phone.close()
        await page.wait_for_selector("html[data-phone=none]", state="attached", timeout=15_000)
        # It says why the link dropped, and keeps trying to reconnect by itself.
        state = await page.text_content("#device-state")
        # Which end noticed first depends on timing: the phone closing, or a send on the closed bridge.
        assert state.startswith("The phone was disconnected (") and "closed" in state, state
        assert "Reconnecting" in state
        status = await webmcp_call(page, "get_device_status", {})
        assert json.loads(status["content"][0]["text"]) == {"connected": False}
        shot = await webmcp_call(page, "take_screenshot", {})
        assert shot["isError"] and shot["structuredContent"]["code"] == "device_error"
        assert shot["content"][0]["text"].startswith("The phone was disconnected (")
        assert "reconnecting by itself" in shot["content"][0]["text"]

        # The phone returns on the same address: the page takes it back with no click.
        again = SimulatedPhoneServer("127.0.0.1", port, auth="accept")
        await again.start()
        try:
            await connected(page)
            status = await webmcp_call(page, "get_device_status", {})
            assert json.loads(status["content"][0]["text"])["serial"] == again.serial
        finally:
            await again.close()


async def test_an_unreachable_device_is_a_clear_message_and_the_page_stays_usable(browser, served):
    dead = free_port()
    async with open_page(browser, f"{served.base}/?device=tcp:127.0.0.1:{dead}") as (page, _watch):
        await page.wait_for_function(
            "document.getElementById('device-state').textContent.startsWith('Could not connect')",
            timeout=20_000,
        )
        text = await page.text_content("#device-state")
        assert f"127.0.0.1:{dead}" in text
        status = await webmcp_call(page, "get_device_status", {})
        assert json.loads(status["content"][0]["text"]) == {"connected": False}


async def test_the_phone_asks_once_and_remembers_the_browsers_key(browser, served):
    phone = await started_sim(auth="prompt")
    context = await browser.new_context()  # one browser profile: one IndexedDB, one key
    try:
        page = await context.new_page()
        await page.goto(page_link(f"{served.base}/?device=tcp:127.0.0.1:{phone.port}"))
        await page.wait_for_function(
            "document.getElementById('device-state').textContent"
            ".startsWith('Accept the prompt on your phone')",
            timeout=30_000,
        )
        # The page shows the prompt once it has sent its public key; the phone may still be reading it.
        await eventually(_async(lambda: len(phone.pending_keys()) == 1))
        phone.approve()
        await connected(page)

        await page.reload()
        await connected(page)  # the key was kept: no new prompt
        assert phone.pending_keys() == []
    finally:
        await context.close()
        await phone.close()


async def test_a_phone_held_by_the_hosts_adb_server_is_used_through_it_and_comes_back_after_a_drop(
    browser, sim, served, debian_adb, adb_serial
):
    serial = adb_serial
    url = f"{served.base}/?device=adb-server:{serial}&adbServer=127.0.0.1:{debian_adb.port}"
    async with open_page(browser, url) as (page, _watch):
        await connected(page)
        await page.uncheck("#live-toggle")
        assert "(adb server)" in await page.text_content("#device-state")
        status = json.loads((await webmcp_call(page, "get_device_status", {}))["content"][0]["text"])
        assert status["connected"] and status["transport"] == "adb-server"
        assert status["serial"] == sim.serial
        shot = await webmcp_call(page, "take_screenshot", {})
        assert not shot.get("isError"), shot
        png = base64.b64decode(shot["content"][0]["data"])
        assert png == await debian_adb.output("-s", serial, "exec-out", "screencap", "-p")

        await debian_adb.output("disconnect", serial)  # the adb server lets go of the phone
        await page.wait_for_selector("html[data-phone=none]", state="attached", timeout=15_000)
        state = await page.text_content("#device-state")
        assert state.startswith("The phone was disconnected (the adb server"), state
        assert "Reconnecting" in state, state
        status = await webmcp_call(page, "get_device_status", {})
        assert json.loads(status["content"][0]["text"]) == {"connected": False}

        await debian_adb.output("connect", serial)  # back: the page takes it again with no click
        await connected(page)
        status = json.loads((await webmcp_call(page, "get_device_status", {}))["content"][0]["text"])
        assert status["connected"] and status["transport"] == "adb-server" and status["serial"] == sim.serial
        assert "(adb server)" in await page.text_content("#device-state")
