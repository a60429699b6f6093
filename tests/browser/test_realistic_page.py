"""The page's tools (WebMCP, the code every channel runs in the page) on the realistic phone: the
soft keyboard's off_screen and press_key back, a secure screen's screenshot saying so, the permission
dialog read and answered. ``--realistic``'s behaviours without its costs (``scale=0``) keep it quick."""

from __future__ import annotations

import pytest

from phone_agent.sim.realistic import RealisticProfile
from tests.support import boot_page, webmcp_call

pytestmark = pytest.mark.browser


async def test_keyboard_secure_screen_and_dialog_through_the_page(browser, served, make_sim):
    sim = await make_sim(realistic=RealisticProfile(5, scale=0.0))
    url = f"{served.base}/?device=tcp:127.0.0.1:{sim.port}&relayRetryMs=300"
    context, page, watch = await boot_page(browser, url)
    try:
        await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=30_000)
        await page.uncheck("#live-toggle")

        async def call(tool: str, **args) -> dict:
            return await webmcp_call(page, tool, args)

        assert not (await call("open_app", packageName="com.android.settings")).get("isError")
        assert not (await call("tap", target="text=Security & privacy")).get("isError")
        assert not (await call("tap", target="text=Screen lock")).get("isError")
        assert not (await call("tap", target="id=password_entry")).get("isError")
        covered = await call("tap", target="text=Next")
        assert covered["isError"] and covered["structuredContent"]["code"] == "off_screen"
        assert "press_key" in covered["structuredContent"]["remedy"]
        shot = await call("take_screenshot")
        assert shot["structuredContent"]["secure"] is True
        assert any("FLAG_SECURE" in part.get("text", "") for part in shot["content"])
        assert not (await call("press_key", key="back")).get("isError")
        assert sim.phone.state()["keyboard"] is False
        assert not (await call("tap", target="text=Next")).get("isError")

        assert not (await call("open_app", packageName="com.google.android.GoogleCamera")).get("isError")
        listed = (await call("list_elements"))["structuredContent"]
        assert listed["app"]["packageName"] == "com.google.android.permissioncontroller"
        assert not (await call("tap", target="text=Only this time")).get("isError")
        assert sim.phone.state()["permissions"] == {"com.google.android.GoogleCamera": "once"}
        watch.assert_clean()
    finally:
        await context.close()
