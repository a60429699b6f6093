"""The agent on Chrome's built-in model (the Prompt API) in the page, end to end on the simulated
phone: settings, availability, the tools described in the system prompt, screenshots as image
inputs, streamed JSON answers parsed as actions, and the phone's state at the end.

Headless Chromium has no on-device model, so ``fakes/fake_language_model.js`` stands in for
``LanguageModel``: it answers from a script and holds the page to the API's rules (image input
declared, a system prompt, images as Blobs that decode). Everything else is real: the page's Python
adapter, the agent, the canvas codec, the ADB bridge and the simulated phone.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import eventually, open_page, webmcp_call

pytestmark = pytest.mark.browser

FAKE = (Path(__file__).parent / "fakes" / "fake_language_model.js").read_text()


def wifi_script() -> list[dict]:
    steps = [{"title": "Open Settings", "description": ""}, {"title": "Turn Wi-Fi on", "description": ""}]
    plan = {"steps": steps}
    return [
        {"name": "submit_plan", "arguments": plan},
        {"tapOn": "Settings"},
        {"name": "finish_step", "arguments": {"summary": "Settings is open"}},
        {"tapOn": "Network & internet"},
        {"tapOn": "Wi-Fi"},
        {"name": "finish_task", "arguments": {"conclusion": "Wi-Fi is on"}},
    ]


async def test_a_task_on_chrome_builtin_model_turns_wifi_on(browser, served, make_sim):
    sim = await make_sim()
    sim.phone.set_wifi(False)
    url = f"{served.base}/?device=tcp:127.0.0.1:{sim.port}&agentSettleMs=0"
    async with open_page(browser, url, init_script=FAKE) as (page, watch):
        await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=30_000)
        await page.uncheck("#live-toggle")
        builtin = page.locator("#settings-builtin")

        async def available() -> bool:
            return await builtin.get_attribute("data-availability") == "available"

        await eventually(available)
        await page.select_option("#settings-provider", "chrome")
        await page.click("#settings-save")

        async def from_page() -> bool:
            return await page.get_attribute("#settings-state", "data-source") == "page"

        await eventually(from_page)
        await page.evaluate("(script) => { window.__promptScript = script; }", wifi_script())
        try:
            result = await webmcp_call(page, "run_agent_task", {"goal": "Turn Wi-Fi on"})
            answer = json.loads(result["content"][0]["text"])
            assert answer["status"] == "finished", answer
            assert answer["conclusion"] == "Wi-Fi is on"
            assert sim.phone.state()["wifi"] is True  # the phone's word, not the agent's

            log = await page.evaluate("window.__promptLog")
            assert len(log) == len(wifi_script())
            # No function calling in the Prompt API: the tools are in the system prompt.
            assert "Answer with exactly one JSON object" in log[0]["system"]
            assert "submit_plan" in log[0]["system"] and "tap" in log[1]["system"]
            # Each turn saw the screen as a JPEG image input the canvas scaled (the longer side 1024).
            for entry in log:
                assert entry["images"] == [{"type": "image/jpeg", "width": 461, "height": 1024}], entry
            # Turns after the first in a step carry the exchange so far.
            assert "assistant" in log[4]["roles"]
            # The page names the output language, as Chrome asks.
            assert not watch.logged("warning", "No output language")
        finally:
            await page.click("#settings-clear")
