"""The farm end to end: three simulated phones, three tabs of one Chromium joined to a real nats-server
over its WebSocket listener (the page's own NATS client, vendored), two ``phone-agent mcp --farm``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import pytest

from tests.agent.model_server import ScriptedModelServer, stall
from tests.farm.support import PAGE_USERS, FarmBroker, farm_mcp, routed_calls, structured
from tests.server.harness import free_port, http_session, serve_process, token
from tests.support import BOOT_TIMEOUT_MS, PageWatch, ServedPhoneAgent, eventually, page_link, result_text

pytestmark = pytest.mark.browser

SERIALS = ("sim-farm-1", "sim-farm-2", "sim-farm-3")
ROUTED_CALLS = 300  # routed at random; bench/bench_farm.py runs the load at scale
ALLOWED_CONSOLE = (r"WebSocket connection to .* failed",)


@asynccontextmanager
async def served_with_model() -> AsyncIterator[tuple[ServedPhoneAgent, ScriptedModelServer]]:
    model = await ScriptedModelServer().start()
    served = await asyncio.to_thread(
        ServedPhoneAgent, "--model-base-url", model.base_url, "--model", "scripted"
    )
    model.allow_origin = served.base
    try:
        yield served, model
    finally:
        await asyncio.to_thread(served.stop)
        await model.stop()


async def open_tab(context, url: str) -> tuple[object, PageWatch]:
    page = await context.new_page()
    watch = PageWatch(page, ALLOWED_CONSOLE)
    await page.goto(page_link(url))
    await page.wait_for_selector("html[data-state=ready]", timeout=BOOT_TIMEOUT_MS, state="attached")
    return page, watch


async def serials_listed(session) -> list[str]:
    return [device["serial"] for device in structured(await session.call_tool("list_devices", {}))["devices"]]


async def test_three_tabs_serve_their_phones_to_two_servers(browser, broker: FarmBroker, make_sim):
    sims = [await make_sim(serial=serial) for serial in SERIALS]
    async with served_with_model() as (served, model), AsyncExitStack() as stack:
        context = await browser.new_context()
        stack.push_async_callback(context.close)
        tabs = []
        for user, sim in zip(PAGE_USERS, sims, strict=True):
            url = (
                f"{served.base}/?device=tcp:127.0.0.1:{sim.port}&farm={broker.ws_url(user)}"
                "&farmHeartbeatMs=1000&relayRetryMs=600000"
            )
            tabs.append(await open_tab(context, url))
        for page, _watch in tabs:
            await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=30_000)
            await page.wait_for_selector("html[data-farm=joined]", state="attached", timeout=15_000)
            await page.uncheck("#live-toggle")  # the farm's calls alone use the phones
        servers = [await stack.enter_async_context(farm_mcp(broker)) for _ in range(2)]
        for session in servers:

            async def three(session=session):
                listed = await serials_listed(session)
                return listed if len(listed) == 3 else None

            assert await eventually(three, timeout_s=15) == list(SERIALS)

        # Every tool routed by device answers from the phone it named.
        for serial in SERIALS:
            shot = await servers[1].call_tool("take_screenshot", {"device": serial})
            assert not shot.is_error and shot.content[0].type == "image", result_text(shot)
        # the pages' activity logs say where the calls came from: the farm, not the relay
        # (the relay's own self-check, get_device_status, may land in the log at any moment)
        first_row = tabs[0][0].locator("#activity .activity__row", has_text="take_screenshot").first
        await first_row.wait_for(timeout=10_000)
        assert "A · farm" in (await first_row.text_content() or "")
        elapsed, wrong = await routed_calls(servers, SERIALS, ROUTED_CALLS, wave=60)
        assert wrong == []
        print(f"{ROUTED_CALLS} calls over 3 pages in {elapsed:.1f}s")

        # A page closed mid-task: its caller gets no_device within the presence TTL; the others serve on.
        model.add(stall())
        closing_page, closing_watch = tabs[1]
        arguments = {"goal": "Wait", "device": SERIALS[1]}
        run = asyncio.ensure_future(servers[0].call_tool("run_agent_task", arguments))
        await eventually(lambda: _true(len(model.requests) >= 1), timeout_s=15)
        closing_watch.assert_clean()
        closed_at = time.monotonic()
        await closing_page.close()
        answer = await asyncio.wait_for(run, 15)
        assert answer.is_error and answer.structured_content["code"] == "no_device", result_text(answer)
        assert time.monotonic() - closed_at < 5.0
        assert await eventually(lambda: _listed_without(servers[1], SERIALS[1]), timeout_s=5)
        for serial in (SERIALS[0], SERIALS[2]):
            status = await servers[1].call_tool("get_device_status", {"device": serial})
            assert structured(status)["serial"] == serial

        # A page with wrong credentials is refused and never listed.
        wrong_url = (
            f"{served.base}/?device=tcp:127.0.0.1:{sims[1].port}"
            f"&farm={broker.ws_url('phone2', 'not-the-password')}&relayRetryMs=600000"
        )
        refused_page, refused_watch = await open_tab(context, wrong_url)
        await refused_page.wait_for_selector("html[data-farm=refused]", state="attached", timeout=15_000)
        assert SERIALS[1] not in await serials_listed(servers[0])
        assert all("not-the-password" not in text for _, text in refused_watch.console)
        for _page, watch in (tabs[0], tabs[2], (refused_page, refused_watch)):
            watch.assert_clean()


async def _true(value):
    return value


async def _listed_without(session, serial):
    listed = await serials_listed(session)
    return len(listed) == 2 and serial not in listed


async def test_the_settings_farm_field_joins_and_leaves_without_reload(
    browser, broker: FarmBroker, make_sim, tmp_path
):
    """The Farm field of the Settings card: set, the phone is listed by a ``serve --farm`` router over
    HTTP and answers its calls; kept across a reload; cleared, the phone leaves. The password is never
    shown back nor logged."""
    serial = "sim-farm-settings"
    sim = await make_sim(serial=serial)
    router_port = free_port()
    router_args = ["--port", str(router_port), "--farm", "env"]
    router_env = {"PHONE_AGENT_FARM": broker.nats_url()}
    served = await asyncio.to_thread(ServedPhoneAgent)
    async with AsyncExitStack() as stack:
        stack.push_async_callback(asyncio.to_thread, served.stop)
        stack.enter_context(serve_process(router_args, tmp_path / "router.txt", env=router_env))
        session = await stack.enter_async_context(http_session(router_port, token()))
        context = await browser.new_context()
        stack.push_async_callback(context.close)
        url = f"{served.base}/?device=tcp:127.0.0.1:{sim.port}&farmHeartbeatMs=1000&relayRetryMs=600000"
        page, watch = await open_tab(context, url)
        await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=30_000)
        assert await page.get_attribute("html", "data-farm") is None
        assert await page.get_attribute("#farm-state", "data-farm-state") == "off"

        password = broker.passwords["phone1"]
        await page.fill("#settings-farm", broker.ws_url("phone1"))
        await page.click("#farm-join")
        await page.wait_for_selector("html[data-farm=joined]", state="attached", timeout=15_000)
        masked = f"ws://phone1:***@127.0.0.1:{broker.ws_port}"
        assert await page.input_value("#settings-farm") == masked
        assert await page.get_attribute("#farm-state", "data-farm-state") == "joined"
        assert await eventually(lambda: _listed_exactly(session, [serial]), timeout_s=10)
        status = await session.call_tool("get_device_status", {"device": serial})
        assert structured(status)["serial"] == serial, result_text(status)

        # Kept in IndexedDB: a reload joins again; the masked URL submitted as shown changes nothing.
        await page.reload()
        await page.wait_for_selector("html[data-state=ready]", timeout=BOOT_TIMEOUT_MS, state="attached")
        await page.wait_for_selector("html[data-farm=joined]", state="attached", timeout=30_000)
        assert await page.input_value("#settings-farm") == masked
        await page.click("#farm-join")
        assert await page.get_attribute("html", "data-farm") == "joined"

        # Cleared: the page says goodbye and leaves the farm at once, without a reload.
        await page.click("#farm-leave")
        await page.wait_for_selector("html:not([data-farm])", state="attached", timeout=10_000)
        assert await page.input_value("#settings-farm") == ""
        assert await eventually(lambda: _listed_exactly(session, []), timeout_s=3)
        gone = await session.call_tool("get_device_status", {"device": serial})
        assert gone.is_error and gone.structured_content["code"] == "no_device"

        assert password not in await page.content()
        assert all(password not in text for _, text in watch.console)
        watch.assert_clean()


async def _listed_exactly(session, serials):
    return await serials_listed(session) == serials
