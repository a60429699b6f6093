"""scrcpy in the page, against the simulated phone speaking scrcpy 2.5: the live view is a canvas fed
by WebCodecs, follows the phone's screen, and its clicks and the MCP tools' taps reach the phone as
control messages; a phone without scrcpy makes the page fall back to screencap and say why."""

from __future__ import annotations

import asyncio
import base64
import io

import pytest
from PIL import Image, ImageChops, ImageStat

from phone_agent.sim.server import SimulatedPhoneServer
from tests.support import eventually, open_page, webmcp_call

pytestmark = pytest.mark.browser


SIM_OPTIONS = {"scrcpy": True}


def input_commands(sim: SimulatedPhoneServer) -> list[list[str]]:
    """Record the `input` commands the phone runs (the scrcpy path must run none)."""
    seen: list[list[str]] = []
    original = sim.phone.run

    def run(argv, stdin, fs):
        if argv and argv[0] == "input":
            seen.append(list(argv))
        return original(argv, stdin, fs)

    sim.phone.run = run
    return seen


CANVAS_PNG = """() => {
  const canvas = document.getElementById("screen");
  return canvas.toDataURL("image/png").split(",")[1];
}"""


async def shown(page) -> Image.Image:
    return Image.open(io.BytesIO(base64.b64decode(await page.evaluate(CANVAS_PNG)))).convert("RGB")


def difference(a: Image.Image, b: Image.Image) -> float:
    diff = ImageChops.difference(a, b.convert("RGB").resize(a.size, Image.BILINEAR))
    return sum(ImageStat.Stat(diff).mean) / 3


def center_of(sim, text: str) -> tuple[int, int]:
    for window in sim.phone.windows():
        for node in window.walk():
            if node.text == text:
                x1, y1, x2, y2 = node.bounds
                return (x1 + x2) // 2, (y1 + y2) // 2
    raise AssertionError(f"no {text!r} on screen")


async def test_the_live_view_runs_on_scrcpy_follows_the_phone_and_sends_input_as_control(
    browser, served, sim
):
    inputs = input_commands(sim)
    url = f"{served.base}/?device=tcp:127.0.0.1:{sim.port}&scrcpyMaxSize=1024&scrcpyMaxFps=30"
    async with open_page(browser, url) as (page, _watch):
        await page.wait_for_selector(
            "canvas#screen[data-source=scrcpy]", state="attached", timeout=30_000
        )
        assert "scrcpy" in (await page.text_content("#live-source") or "")
        await eventually(lambda: _fps_above(page, 0.5))
        (process,) = sim.scrcpy.running()
        assert (process.video_width, process.video_height) == (464, 1024)
        # the phone's own screen, within a tolerance (H.264 is lossy)
        await eventually(lambda: _matches(page, sim), timeout_s=10)

        # the screen changes on the phone (Settings opened through adb): the canvas follows
        await asyncio.get_running_loop().run_in_executor(
            None, sim.phone.run, ["am", "start", "-n", "com.android.settings/.Settings"], b"", None
        )
        assert sim.phone.state()["screen"] == "settings/main"
        await eventually(lambda: _matches(page, sim), timeout_s=10)

        # a click on the live view reaches the phone as touch events (no `input`)
        before = process.control_messages
        await sim_home(sim)
        await eventually(lambda: _matches(page, sim), timeout_s=10)
        x, y = center_of(sim, "Settings")
        box = await page.locator("#screen").bounding_box()
        position = {"x": x * box["width"] / 1080, "y": y * box["height"] / 2400}
        await page.locator("#screen").click(position=position)  # scrolls it into view first
        await eventually(lambda: _screen_is(sim, "settings/main"))
        assert process.control_messages >= before + 2

        # the tools' tap goes through the control socket too
        await sim_home(sim)
        before = process.control_messages
        result = await webmcp_call(page, "tap", {"x": x, "y": y})
        assert not result.get("isError"), result
        await eventually(lambda: _screen_is(sim, "settings/main"))
        assert process.control_messages >= before + 2
        assert inputs == [], inputs


async def test_a_phone_without_scrcpy_falls_back_to_screencap_and_says_why(browser, served, make_sim):
    sim = await make_sim()  # no scrcpy: no app_process
    url = f"{served.base}/?device=tcp:127.0.0.1:{sim.port}"
    async with open_page(browser, url) as (page, _watch):
        await page.wait_for_selector(
            "img#screen[data-source=screencap]", state="attached", timeout=30_000
        )
        reason = await page.get_attribute("#screen", "data-fallback-reason")
        assert "app_process: inaccessible or not found" in reason
        assert reason in (await page.text_content("#live-source") or "")
        # the Settings card says what runs, not only what the settings ask for
        card = await page.text_content("#settings-screen-state") or ""
        assert card.startswith("Live view: screencap (scrcpy unavailable: "), card
        assert reason in card
        await page.wait_for_function("document.getElementById('screen').naturalWidth === 1080")
        await eventually(lambda: _fps_above(page, 0.5))


async def sim_home(sim) -> None:
    await asyncio.get_running_loop().run_in_executor(
        None, sim.phone.run, ["input", "keyevent", "HOME"], b"", None
    )
    # (that `input` ran in the test, not the page: the recorder sees it; forget it)
    if isinstance(getattr(sim.phone.run, "__closure__", None), tuple):
        for cell in sim.phone.run.__closure__:
            if isinstance(cell.cell_contents, list):
                cell.cell_contents.clear()


async def _fps_above(page, wanted: float) -> bool:
    value = await page.get_attribute("#screen", "data-fps")
    return value is not None and float(value) > wanted


async def _matches(page, sim) -> bool:
    return difference(await shown(page), sim.phone.screenshot()) < 8


async def _screen_is(sim, name: str) -> bool:
    return sim.phone.state()["screen"] == name


SET_VISIBILITY = """(state) => Object.defineProperty(document, "visibilityState", {
  configurable: true, get: () => state })"""


async def test_a_stream_that_ends_restarts_and_a_hidden_page_pauses_scrcpy(browser, served, sim):
    url = f"{served.base}/?device=tcp:127.0.0.1:{sim.port}&scrcpyMaxSize=480&scrcpyMaxFps=10"
    async with open_page(browser, url) as (page, _watch):
        await page.wait_for_selector(
            "canvas#screen[data-source=scrcpy]", state="attached", timeout=30_000
        )
        (first,) = sim.scrcpy.running()
        first.stop()  # the server dies: its sockets close
        await eventually(lambda: _new_server(sim, first), timeout_s=15)
        await page.wait_for_selector(
            "canvas#screen[data-source=scrcpy]", state="attached", timeout=15_000
        )

        # hidden: scrcpy stops (no server on the phone), the image is back; shown: it runs again
        await page.evaluate(SET_VISIBILITY, "hidden")
        await page.wait_for_selector("img#screen", state="attached", timeout=10_000)
        await eventually(lambda: _no_server(sim), timeout_s=10)
        assert "paused" in (await page.text_content("#live-source") or "")
        await page.evaluate(SET_VISIBILITY, "visible")
        await page.wait_for_selector(
            "canvas#screen[data-source=scrcpy]", state="attached", timeout=15_000
        )
        await eventually(lambda: _fps_above(page, 0.5))


async def _new_server(sim, old) -> bool:
    running = sim.scrcpy.running()
    return bool(running) and running[0] is not old


async def _no_server(sim) -> bool:
    return not sim.scrcpy.running()


# The page's real VideoDecoders, made observable (every one the page creates is kept, to read its
# state), and every line the live view's reason line showed.
WATCH_DECODERS = """(() => {
  const Real = window.VideoDecoder;
  window.__decoders = [];
  window.VideoDecoder = class extends Real {
    constructor(init) { super(init); window.__decoders.push(this); }
  };
  window.__sources = [];
  new MutationObserver(() => {
    const node = document.getElementById("live-source");
    const seen = window.__sources;
    if (node && seen[seen.length - 1] !== node.textContent) seen.push(node.textContent);
  }).observe(document, { subtree: true, childList: true, characterData: true });
})();"""


async def test_a_corrupt_frame_and_a_truncated_stream_restart_scrcpy_and_close_the_old_decoder(
    browser, served, sim
):
    import random

    garbage = b"\x00\x00\x00\x01\x65" + random.Random(12).randbytes(3000)  # a key frame's NAL, then noise
    url = f"{served.base}/?device=tcp:127.0.0.1:{sim.port}&scrcpyMaxSize=480&scrcpyMaxFps=10"
    async with open_page(browser, url, init_script=WATCH_DECODERS) as (page, _watch):
        await page.wait_for_selector(
            "canvas#screen[data-source=scrcpy]", state="attached", timeout=30_000
        )
        await eventually(lambda: _fps_above(page, 0.5))
        (first,) = sim.scrcpy.running()

        # a corrupt frame: Chromium's decoder fails on it; the page says so and starts scrcpy again
        first.inject(garbage)
        await eventually(lambda: _source_seen(page, "the video decoder failed"), timeout_s=10)
        assert any("restarting" in line for line in await page.evaluate("window.__sources"))
        await eventually(lambda: _new_server(sim, first), timeout_s=15)
        assert first.ended.is_set()  # the old server was hung up on
        await eventually(lambda: _fps_above(page, 0.5), timeout_s=15)
        await eventually(lambda: _old_decoders_closed(page, 2), timeout_s=5)

        # a stream cut inside a packet: said, and restarted the same way
        (second,) = sim.scrcpy.running()
        second.inject(garbage, cut_after=12 + 100)
        await eventually(
            lambda: _source_seen(page, "in the middle of a packet (100 of its"), timeout_s=10
        )
        await eventually(lambda: _new_server(sim, second), timeout_s=15)
        await page.wait_for_selector(
            "canvas#screen[data-source=scrcpy]", state="attached", timeout=15_000
        )
        await eventually(lambda: _old_decoders_closed(page, 3), timeout_s=15)
        assert await page.get_attribute("#screen", "data-fallback-reason") is None


async def _source_seen(page, text: str) -> bool:
    return any(text in line for line in await page.evaluate("window.__sources"))


async def _old_decoders_closed(page, count: int) -> bool:
    """``count`` decoders made so far: every one but the newest closed, the newest decoding."""
    states = await page.evaluate("window.__decoders.map(decoder => decoder.state)")
    return len(states) == count and states[:-1] == ["closed"] * (count - 1) and states[-1] == "configured"
