"""MCP Apps in a real host: a page built with ext-apps' ``AppBridge`` (tests/browser/mcp_apps_host.mjs,
bundled by esbuild here) renders the phone view from the ``ui://phone-agent/phone`` resource a real MCP
client session of ``phone-agent mcp`` read, and relays the view's tool calls to that session. A click in
the view taps the simulated phone (Settings opens), and the page's activity log shows the calls as the
app's. The task view shows the agent's confirmation, and its Allow lets the action through. A call
marked as the app's with bad arguments gets the same error data as any caller's.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path
from typing import Any

import pytest

from phone_agent.server.mcp_apps import APP_MIME_TYPE, APPS_EXTENSION
from tests.browser.rigs import AgentRig as Rig
from tests.browser.rigs import AgentRigSpec, centre_of
from tests.browser.test_call_tree import rows
from tests.browser.test_people import send_script
from tests.support import ROOT, eventually

pytestmark = pytest.mark.browser

RIG = AgentRigSpec()
APP = {"phone-agent/caller": "app"}
DECLARED = {APPS_EXTENSION: {"mimeTypes": [APP_MIME_TYPE]}}


@pytest.fixture(scope="module")
def host_bundle(tmp_path_factory: pytest.TempPathFactory) -> str:
    out = tmp_path_factory.mktemp("apps_host") / "host.mjs"
    esbuild = ROOT / "node_modules" / ".bin" / "esbuild"
    entry = Path(__file__).with_name("mcp_apps_host.mjs")
    command = [str(esbuild), str(entry), "--bundle", "--format=esm", "--platform=browser", f"--outfile={out}"]
    subprocess.run(command, check=True, capture_output=True, timeout=120)
    return out.read_text(encoding="utf-8")


async def host_page(fresh: Rig, bundle: str, session: Any, html: str, seen: list | None = None) -> Any:
    """A host page showing ``html`` as a view, its tool calls relayed to ``session`` (and listed in
    ``seen``: when each was made, and which tool)."""
    page = await fresh.page.context.new_page()

    async def relay(params: dict[str, Any]) -> dict[str, Any]:
        if seen is not None:
            seen.append((asyncio.get_running_loop().time(), params["name"]))
        result = await session.call_tool(
            params["name"], params.get("arguments") or {}, meta=params.get("_meta")
        )
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)

    await page.expose_function("relayCall", relay)
    await page.set_content("<!doctype html><html><body></body></html>")
    await page.add_script_tag(content=bundle, type="module")
    await page.wait_for_function("typeof window.openView === 'function'", timeout=10_000)
    await page.evaluate("(html) => window.openView(html)", html)
    return page


async def test_a_click_in_the_phone_view_taps_the_phone_as_the_app(fresh: Rig, host_bundle: str) -> None:
    async with fresh.relayed(extensions=DECLARED) as session:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        assert listed["take_screenshot"].meta["ui"]["resourceUri"] == "ui://phone-agent/phone"
        html = (await session.read_resource("ui://phone-agent/phone")).contents[0].text
        seen: list[tuple[float, str]] = []
        page = await host_page(fresh, host_bundle, session, html, seen)
        try:
            screen = page.frame_locator("#view").locator("#screen")

            async def framed() -> bool:
                return await screen.evaluate("(img) => img.naturalWidth > 0")

            await eventually(framed, timeout_s=20)
            await asyncio.sleep(3)
            now = asyncio.get_running_loop().time()
            frames = [at for at, name in seen if name == "take_screenshot" and at > now - 2]
            assert len(frames) >= 4, f"{len(frames)} frames in 2 s"  # >= 2 frames a second
            x, y = centre_of(fresh.sim, "Settings")
            box = await screen.bounding_box()
            await page.mouse.click(box["x"] + box["width"] * x / 1080, box["y"] + box["height"] * y / 2400)

            async def settings_open() -> bool:
                return fresh.sim.phone.state()["screen"].startswith("settings")

            await eventually(settings_open, timeout_s=15)

            async def logged() -> bool:
                listed_rows = await rows(fresh.page)
                return any(r["tool"] == "tap" and r["caller"] == "app" for r in listed_rows) and any(
                    r["tool"] == "take_screenshot" and r["caller"] == "app" for r in listed_rows
                )

            await eventually(logged, timeout_s=10)
        finally:
            await page.close()


async def test_allow_in_the_task_view_lets_a_confirmation_through(fresh: Rig, host_bundle: str) -> None:
    fresh.model.add(*send_script())
    async with fresh.relayed(extensions=DECLARED) as session:
        html = (await session.read_resource("ui://phone-agent/task")).contents[0].text
        page = await host_page(fresh, host_bundle, session, html)
        try:
            task = asyncio.ensure_future(session.call_tool("run_agent_task", {"goal": "Send it"}))
            view = page.frame_locator("#view")
            await view.locator("#question-text").wait_for(state="visible", timeout=30_000)
            assert "sending a message" in await view.locator("#question-text").text_content()
            await view.locator('#answers button[data-answer="yes"]').click(timeout=5_000)
            await asyncio.wait_for(task, 60)
        finally:
            await page.close()
    assert [sent["text"] for sent in fresh.sim.phone.state()["sent"]] == ["see you tomorrow"]
    assert await fresh.page.is_hidden("#confirm")


async def test_an_apps_call_with_bad_arguments_gets_the_same_error_data(fresh: Rig) -> None:
    async with fresh.relayed(extensions=DECLARED) as session:
        as_app = await session.call_tool("press_key", {"key": "no_such_key"}, meta=APP)
        as_mcp = await session.call_tool("press_key", {"key": "no_such_key"})
    assert as_app.is_error and as_mcp.is_error
    assert as_app.structured_content == as_mcp.structured_content
    assert as_app.structured_content["code"] == "invalid_argument"
