"""scrcpy and the agent, and scrcpy's Settings, in the page against the simulated phone speaking 2.5:
with scrcpy running the agent takes its looks from the live view's latest decoded frame (no
``screencap`` at all) and its report says so; with the setting off it takes screenshots and says
that; max size, frame rate and scrcpy itself are Settings that restart the stream and survive a
reload (the page's URL parameters still win)."""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import AsyncIterator

import pytest

from phone_agent.sim.server import SimulatedPhoneServer
from tests.agent.model_server import (
    ScriptedModelServer,
    call,
    plan,
    request_images,
    stall,
    tap_on,
    wifi_script,
)
from tests.support import ServedPhoneAgent, eventually, open_page, webmcp_call

pytestmark = pytest.mark.browser
GONE = (r"WebSocket connection to .* failed",)  # the page reconnecting to a phone that has gone


SIM_OPTIONS = {"scrcpy": True}


@pytest.fixture
async def model() -> AsyncIterator[ScriptedModelServer]:
    server = await ScriptedModelServer().start()
    yield server
    await server.stop()


def count_screencaps(sim: SimulatedPhoneServer) -> list[int]:
    count = [0]
    original = sim.phone.run

    def run(argv, stdin, fs):
        if argv and argv[0] == "screencap":
            count[0] += 1
        return original(argv, stdin, fs)

    sim.phone.run = run
    return count


async def test_the_agent_looks_at_scrcpy_frames_and_its_report_says_which_source(browser, sim, model):
    served = await asyncio.to_thread(
        ServedPhoneAgent, "--model-base-url", model.base_url, "--model", "scripted"
    )
    model.allow_origin = served.base
    url = f"{served.base}/?device=tcp:127.0.0.1:{sim.port}&agentSettleMs=300"
    try:
        async with open_page(browser, url, allowed_console=GONE) as (page, _watch):
            await page.wait_for_selector(
                "canvas#screen[data-source=scrcpy]", state="attached", timeout=30_000
            )
            await eventually(lambda: _fps_above(page, 0.5))
            assert await page.is_checked("#settings-live-looks")  # on by default
            screencaps = count_screencaps(sim)

            sim.phone.set_wifi(False)
            model.add(*wifi_script())
            answer = await _run(page, "Turn Wi-Fi on")
            assert answer["status"] == "finished", answer
            assert sim.phone.state()["wifi"] is True
            # every look from the stream; a look may fall back to screencap only if the stream
            # stalled (a loaded machine), and then the report says so and counts it
            looks = looks_by_source(answer["screenSource"])
            assert looks.get("scrcpy frame", 0) >= 3, answer
            assert set(looks) <= {"scrcpy frame", "screencap"}, answer
            assert screencaps[0] == looks.get("screencap", 0), (screencaps, answer)
            if "screencap" in looks:
                assert "the scrcpy stream stalled" in answer["screenSource"], answer
            # the model saw the size a screenshot gives (461×1024 for 1080×2400), not the stream's
            images = [image for request in model.requests for image in request_images(request)]
            assert images and {image.size for image in images} == {(461, 1024)}
            shown = page.locator(f'.chat-task[data-task-id="{answer["taskId"]}"] .chat-task__screen')
            assert (await shown.text_content()).startswith("📷 Screen: scrcpy frame")

            # the setting off (Settings, Save): screenshots, and the report says why
            await page.uncheck("#settings-live-looks")
            await page.click("#settings-save")
            await eventually(lambda: _screen_state_has(page, "the agent looks at screenshots"))
            sim.phone.reset()
            sim.phone.set_wifi(False)
            model.requests.clear()
            model.add(*wifi_script())
            answer = await _run(page, "Turn Wi-Fi on")
            assert answer["status"] == "finished", answer
            assert (
                answer["screenSource"].startswith("screencap (")
                and "turned off in Settings" in answer["screenSource"]
            ), answer
            assert screencaps[0] >= 3
            assert await page.get_attribute("#screen", "data-source") == "scrcpy"  # the live view stays

            # the phone going away while scrcpy runs and the model thinks: the task fails at once
            # with the phone's reason (the tools' device is still the page's PageDevice)
            model.add(
                plan("Open Settings", "Wait for the model"),
                tap_on("Settings"),
                call("finish_step", summary="Settings is open"),
                stall(),
            )
            model.requests.clear()
            sim.phone.reset()
            running = asyncio.ensure_future(_run(page, "Open Settings and wait"))
            await eventually(lambda: _requests_at_least(model, 4), timeout_s=20)
            assert sim.scrcpy.running(), "scrcpy should run while the task does"
            await sim.close()
            started = time.monotonic()
            answer = await asyncio.wait_for(running, 20)
            assert time.monotonic() - started < 10, "the task waited for the model instead of failing"
            assert answer["status"] == "failed", answer
            assert answer["error"].startswith("The phone stopped answering: The phone was disconnected"), (
                answer
            )
    finally:
        await asyncio.to_thread(served.stop)


async def test_scrcpy_max_size_fps_and_on_off_are_settings_that_restart_the_stream(browser, served, sim):
    url = f"{served.base}/?device=tcp:127.0.0.1:{sim.port}"
    async with open_page(browser, url) as (page, _watch):
        await page.wait_for_selector("canvas#screen[data-source=scrcpy]", state="attached", timeout=30_000)
        (first,) = sim.scrcpy.running()
        assert (first.video_width, first.video_height, first.options.max_fps) == (464, 1024, 30)

        await page.fill("#settings-scrcpy-max-size", "480")
        await page.fill("#settings-scrcpy-max-fps", "12")
        await page.click("#settings-save")
        await eventually(lambda: _new_server(sim, first), timeout_s=15)
        (second,) = sim.scrcpy.running()
        assert (second.video_width, second.video_height, second.options.max_fps) == (216, 480, 12)
        assert first.ended.is_set()  # the old server went away
        await eventually(lambda: _source_has(page, "216×480"), timeout_s=15)
        assert await page.get_attribute("#settings-screen-state", "data-max-size") == "480"

        # scrcpy off in Settings: screenshots, saying why; on again: the stream is back
        await page.uncheck("#settings-scrcpy")
        await page.click("#settings-save")
        await page.wait_for_selector("img#screen[data-source=screencap]", state="attached", timeout=15_000)
        assert await page.get_attribute("#screen", "data-fallback-reason") == "turned off in Settings"
        await eventually(lambda: _no_server(sim), timeout_s=10)
        await page.check("#settings-scrcpy")
        await page.click("#settings-save")
        await page.wait_for_selector("canvas#screen[data-source=scrcpy]", state="attached", timeout=30_000)

        # kept in this browser: after a reload the stream starts at the stored size
        await page.reload()
        await page.wait_for_selector("html[data-state=ready]", state="attached", timeout=60_000)
        await page.wait_for_selector("canvas#screen[data-source=scrcpy]", state="attached", timeout=30_000)
        assert await page.input_value("#settings-scrcpy-max-size") == "480"
        await eventually(lambda: _running_size(sim, (216, 480)), timeout_s=15)

    # the page's URL still wins over the stored settings (a new browser context: nothing stored)
    async with open_page(browser, url + "&scrcpyMaxSize=320") as (page, _watch):
        await page.wait_for_selector("canvas#screen[data-source=scrcpy]", state="attached", timeout=30_000)
        await page.fill("#settings-scrcpy-max-size", "800")
        await page.click("#settings-save")
        assert "?scrcpyMaxSize" in (await page.text_content("#settings-screen-state") or "")
        await eventually(lambda: _running_size(sim, (144, 320)), timeout_s=15)

    # ?scrcpy=0: screenshots, saying why, whatever the Settings say
    async with open_page(browser, url + "&scrcpy=0") as (page, _watch):
        await page.wait_for_selector("img#screen[data-source=screencap]", state="attached", timeout=30_000)
        assert await page.get_attribute("#screen", "data-fallback-reason") == "turned off by ?scrcpy=0"
        assert await page.is_checked("#settings-scrcpy")  # the setting itself is on: the URL wins
        assert "scrcpy off" in (await page.text_content("#settings-screen-state") or "")
        await eventually(lambda: _fps_above(page, 0.5))
        await eventually(lambda: _no_server(sim), timeout_s=10)


async def test_take_screenshot_answers_the_live_frame_when_asked_and_why_not_when_scrcpy_is_off(
    browser, served, sim
):
    import base64
    import io

    from PIL import Image, ImageChops, ImageStat

    url = f"{served.base}/?device=tcp:127.0.0.1:{sim.port}"
    async with open_page(browser, url) as (page, _watch):
        await page.wait_for_selector("canvas#screen[data-source=scrcpy]", state="attached", timeout=30_000)
        await eventually(lambda: _fps_above(page, 0.5))
        screencaps = count_screencaps(sim)

        live = await webmcp_call(page, "take_screenshot", {"source": "live"})
        assert not live.get("isError"), live
        image, note = live["content"]
        picture = Image.open(io.BytesIO(base64.b64decode(image["data"]))).convert("RGB")
        data = live["structuredContent"]
        # the stream's own size (max size 1024), mapped to the phone's 1080×2400
        assert image["mimeType"] == "image/png" and picture.size == (464, 1024) == (
            data["width"],
            data["height"],
        )
        assert (data["source"], data["deviceWidth"], data["deviceHeight"]) == ("live", 1080, 2400)
        assert (data["scaleX"], data["scaleY"]) == (round(1080 / 464, 6), round(2400 / 1024, 6))
        assert "464x1024 pixels of a 1080x2400 screen" in note["text"], note
        assert screencaps[0] == 0  # the phone was not asked for a screenshot
        phone = sim.phone.screenshot().convert("RGB").resize(picture.size, Image.BILINEAR)
        assert sum(ImageStat.Stat(ImageChops.difference(picture, phone)).mean) / 3 < 8

        small = await webmcp_call(page,
            "take_screenshot", {"source": "live", "maxSide": 512, "format": "jpeg"}
        )
        assert small["content"][0]["mimeType"] == "image/jpeg", small
        assert Image.open(io.BytesIO(base64.b64decode(small["content"][0]["data"]))).size == (232, 512)
        assert small["structuredContent"]["deviceWidth"] == 1080

        # the default is still the phone's own screenshot
        own = await webmcp_call(page, "take_screenshot", {})
        assert own["structuredContent"]["source"] == "phone" and own["structuredContent"]["width"] == 1080
        assert screencaps[0] == 1

        # scrcpy off in Settings: source "live" answers why not, and how to get a screenshot
        await page.uncheck("#settings-scrcpy")
        await page.click("#settings-save")
        await page.wait_for_selector("img#screen[data-source=screencap]", state="attached", timeout=15_000)
        refused = await webmcp_call(page, "take_screenshot", {"source": "live"})
        assert refused.get("isError"), refused
        error = refused["structuredContent"]
        assert (error["code"], error["retryable"]) == ("invalid_argument", False)
        assert (
            refused["content"][0]["text"]
            == 'take_screenshot cannot answer source "live": scrcpy is not running.'
        )
        assert 'source "phone"' in error["remedy"] and "Live view through scrcpy" in error["remedy"]


def looks_by_source(summary: str) -> dict[str, int]:
    """ "scrcpy frame (5 looks), screencap (1 look: …)" → {"scrcpy frame": 5, "screencap": 1}"""
    return {
        match.group(1): int(match.group(2))
        for match in re.finditer(r"(scrcpy frame|screencap) \((\d+) looks?", summary)
    }


async def _run(page, goal: str) -> dict:
    import json

    result = await webmcp_call(page, "run_agent_task", {"goal": goal})
    assert not result.get("isError"), result
    return json.loads(result["content"][0]["text"])


async def _requests_at_least(model: ScriptedModelServer, count: int) -> bool:
    return len(model.requests) >= count


async def _fps_above(page, wanted: float) -> bool:
    value = await page.get_attribute("#screen", "data-fps")
    return value is not None and float(value) > wanted


async def _screen_state_has(page, text: str) -> bool:
    return text in (await page.text_content("#settings-screen-state") or "")


async def _source_has(page, text: str) -> bool:
    return text in (await page.text_content("#live-source") or "")


async def _new_server(sim, old) -> bool:
    running = sim.scrcpy.running()
    return bool(running) and running[0] is not old


async def _no_server(sim) -> bool:
    return not sim.scrcpy.running()


async def _running_size(sim, size: tuple[int, int]) -> bool:
    running = sim.scrcpy.running()
    return len(running) == 1 and (running[0].video_width, running[0].video_height) == size
