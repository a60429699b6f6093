"""The page's WebUSB adapter against a fake navigator.usb whose endpoints reach the simulated phone.

The fake (fakes/fake_usb.js) stands in only for the browser's USB stack: the transfers it receives go,
byte for byte, through phone-agent's ADB bridge to the simulated adbd. What the adapter must get right
is checked on the recorded transfers: the ADB interface found across configurations and alternates,
each header its own 24-byte transfer, a zero-length packet after a payload of whole packets, a clear
message when another program holds the phone, and the disconnect event.
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from tests.support import PageWatch, page_link, webmcp_call

pytestmark = pytest.mark.browser
FAKE_USB = (Path(__file__).parent / "fakes" / "fake_usb.js").read_text()
ADB_COMMANDS = {0x4E584E43, 0x48545541, 0x4E45504F, 0x59414B4F, 0x45545257, 0x45534C43}


async def usb_page(browser, served, sim, *, allowed: bool, claim_fails: bool = False):
    context = await browser.new_context()
    bridge = f"ws://127.0.0.1:{served.port}/adb?target=127.0.0.1:{sim.port}"
    script = (
        FAKE_USB.replace("__BRIDGE_URL__", bridge)
        .replace("__ALLOWED__", "true" if allowed else "false")
        .replace("__CLAIM_FAILS__", "true" if claim_fails else "false")
    )
    await context.add_init_script(script)
    page = await context.new_page()
    watch = PageWatch(page)
    await page.goto(page_link(f"{served.base}/"))
    await page.wait_for_selector("html[data-state=ready]", state="attached", timeout=60_000)
    return context, page, watch


async def transfers(page) -> list[dict]:
    return await page.evaluate("window.__fakeUsb.outTransfers")


def check_framing(out: list[dict], packet_size: int = 64) -> int:
    """Every header is a transfer of its own, its payload the next one, then a ZLP when whole packets.
    Answers how many zero-length packets were sent."""
    zlps = 0
    i = 0
    while i < len(out):
        head = bytes(out[i]["head"])
        assert out[i]["length"] == 24, f"transfer {i} is not a lone header: {out[i]['length']} bytes"
        command, _a0, _a1, length, _check, magic = struct.unpack("<6I", head)
        assert command in ADB_COMMANDS and magic == command ^ 0xFFFFFFFF
        i += 1
        if length:
            if i == len(out):
                break  # the last packet is still being sent (the live view keeps the link busy)
            assert out[i]["length"] == length, "the payload must follow its header as one transfer"
            i += 1
            if length % packet_size == 0:
                if i == len(out):
                    break
                assert out[i]["length"] == 0, "a payload of whole packets must be ended by a ZLP"
                zlps += 1
                i += 1
    return zlps


async def test_a_chosen_usb_phone_connects_with_correct_framing(browser, served, sim):
    context, page, watch = await usb_page(browser, served, sim, allowed=False)
    try:
        assert await page.get_attribute("html", "data-phone") is None
        await page.click("#connect-usb")
        await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=30_000)
        calls = await page.evaluate("window.__fakeUsb.calls")
        assert calls[:5] == [
            "requestDevice",
            "open",
            "selectConfiguration(2)",
            "claimInterface(1)",
            "selectAlternateInterface(1,1)",
        ]
        status = await webmcp_call(page, "get_device_status", {})
        info = json.loads(status["content"][0]["text"])
        assert info["connected"] and info["transport"] == "usb" and info["model"] == "Pixel 7"
        shot = await webmcp_call(page, "take_screenshot", {})
        assert shot["content"][0]["mimeType"] == "image/png"
        out = await transfers(page)
        # A new key: TOKEN, a 256-byte SIGNATURE (four 64-byte packets: a ZLP), then the public key.
        assert check_framing(out) >= 1
        requested = await page.evaluate("window.__fakeUsb.inRequests")
        assert 24 in requested and all(n > 0 for n in requested)
        watch.assert_clean()
    finally:
        await context.close()


async def test_an_allowed_phone_reconnects_at_load_and_after_a_replug_without_a_prompt(browser, served, sim):
    context, page, watch = await usb_page(browser, served, sim, allowed=True)
    try:
        await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=30_000)
        assert "requestDevice" not in await page.evaluate("window.__fakeUsb.calls")
        check_framing(await transfers(page))

        await page.evaluate("window.__fakeUsb.unplug()")
        await page.wait_for_selector("html[data-phone=none]", state="attached", timeout=15_000)
        await page.wait_for_function(
            "document.getElementById('device-state').textContent.endsWith("
            "'Plug it in again: the page reconnects by itself.')",
            timeout=15_000,
        )
        state = await page.text_content("#device-state")
        assert state.startswith("The phone was "), state
        shot = await webmcp_call(page, "take_screenshot", {})
        assert shot["isError"] and shot["structuredContent"]["code"] == "device_error"
        assert shot["content"][0]["text"].startswith("The phone was ")

        # Plugged in again: the `connect` event brings it back with no click.
        await page.evaluate("window.__fakeUsb.replug()")
        await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=30_000)
        status = json.loads((await webmcp_call(page, "get_device_status", {}))["content"][0]["text"])
        assert status["connected"] is True and status["transport"] == "usb"
        watch.assert_clean()
    finally:
        await context.close()


async def test_a_phone_held_by_another_program_says_to_run_adb_kill_server(browser, served, sim):
    context, page, watch = await usb_page(browser, served, sim, allowed=False, claim_fails=True)
    try:
        await page.click("#connect-usb")
        await page.wait_for_function(
            "document.getElementById('device-state').textContent.includes('adb kill-server')", timeout=15_000
        )
        text = await page.text_content("#device-state")
        assert "The phone is in use by another program (an adb server or Android Studio)." in text
        assert "close" in await page.evaluate("window.__fakeUsb.calls")
        status = await webmcp_call(page, "get_device_status", {})
        assert json.loads(status["content"][0]["text"]) == {"connected": False}
        watch.assert_clean()
    finally:
        await context.close()
