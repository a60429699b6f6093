"""The page's activity log shows every call under the call that made it, whichever way it came: a flow's
steps under their run_flow and the agent's actions under their run_agent_task, through MCP (the official
``mcp`` client, relayed to the page) and through WebMCP; an MCP App view's call (``_meta``
``phone-agent/caller: app``) is shown as the app's.

The rows are read from the page as a person's browser has them (``data-caller``, ``data-call-id``,
``data-parent``, and the indent). One page with the scripted model serves the module.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.agent.model_server import wifi_script
from tests.browser.rigs import AgentRig as Rig
from tests.browser.rigs import AgentRigSpec
from tests.support import eventually, result_text

pytestmark = pytest.mark.browser

RIG = AgentRigSpec()
FLOW = "appId: com.android.settings\n---\n- launchApp\n- tapOn: Network & internet\n- back\n"
CALLER = {"mcp": "mcp", "webmcp": "webmcp"}

ROWS_JS = """() => [...document.querySelectorAll('#activity .activity__row')].map((row) => ({
  tool: row.querySelector('.activity__tool')?.textContent ?? '',
  caller: row.dataset.caller, id: row.dataset.callId, parent: row.dataset.parent,
  depth: Number(row.dataset.depth), indent: getComputedStyle(row).paddingLeft,
  label: row.querySelector('.activity__channel')?.textContent ?? '',
}))"""


async def rows(page: Any) -> list[dict[str, Any]]:
    return await page.evaluate(ROWS_JS)


async def tree_of(page: Any, tool: str, caller: str, children: int) -> tuple[dict, list[dict]]:
    """The newest row of ``tool`` made by ``caller`` once ``children`` calls show under it, and those."""
    found: dict[str, Any] = {}

    async def shown() -> bool:
        listed = await rows(page)
        parents = [row for row in listed if row["tool"] == tool and row["caller"] == caller]
        if not parents:
            return False
        found["rows"], found["parent"] = listed, parents[0]
        found["children"] = [row for row in listed if row["parent"] == parents[0]["id"]]
        return len(found["children"]) >= children

    await eventually(shown, timeout_s=15)
    return found["parent"], found["children"], found["rows"]  # type: ignore[return-value]


async def call_on(fresh: Rig, channel: str, tool: str, args: dict[str, Any]) -> str:
    if channel == "webmcp":
        result = await fresh.webmcp(tool, args)
        return result["content"][0]["text"]
    async with fresh.relayed() as session:
        return result_text(await session.call_tool(tool, args))


@pytest.mark.parametrize("channel", ["mcp", "webmcp"])
async def test_a_flows_steps_show_under_their_run_flow(fresh: Rig, channel: str):
    said = await call_on(fresh, channel, "run_flow", {"yaml": FLOW})
    assert said.startswith("Flow passed: 3/3 steps passed"), said
    parent, children, listed = await tree_of(fresh.page, "run_flow", CALLER[channel], 3)
    assert parent["parent"] == "" and parent["depth"] == 0 and parent["indent"] == "0px"
    assert [row["tool"] for row in children][:3] == ["press_key", "tap", "open_app"]  # newest first
    assert {(row["caller"], row["depth"], row["label"]) for row in children} == {("flow", 1, "↳ flow")}
    assert all(row["indent"] != "0px" for row in children)
    # Right under their parent: the parent ends last, so its row stands above its steps'.
    start = listed.index(parent)
    assert listed[start + 1 : start + 1 + len(children)] == children


@pytest.mark.parametrize("channel", ["mcp", "webmcp"])
async def test_the_agents_actions_show_under_their_run_agent_task(fresh: Rig, channel: str):
    fresh.sim.phone.set_wifi(False)
    fresh.model.add(*wifi_script())
    said = await call_on(fresh, channel, "run_agent_task", {"goal": "Turn Wi-Fi on"})
    assert "finished" in said, said
    assert fresh.sim.phone.state()["wifi"] is True
    parent, children, listed = await tree_of(fresh.page, "run_agent_task", CALLER[channel], 3)
    assert [row["tool"] for row in children] == ["tap", "tap", "tap"]
    assert {(row["caller"], row["depth"], row["label"]) for row in children} == {("agent", 1, "↳ agent")}
    start = listed.index(parent)
    assert listed[start + 1 : start + 4] == children
    if channel == "webmcp":
        fresh.finished_ids.append(json.loads(said)["taskId"])


async def test_an_mcp_app_views_call_is_the_apps(fresh: Rig):
    async with fresh.relayed() as session:
        result = await session.call_tool("get_device_status", {}, meta={"phone-agent/caller": "app"})
        assert result.is_error is not True, result_text(result)
        other = await session.call_tool("get_device_status", {}, meta={"phone-agent/caller": "root"})
        assert other.is_error is not True

    async def both() -> bool:
        status = [row for row in await rows(fresh.page) if row["tool"] == "get_device_status"]
        return len(status) >= 2 and [row["caller"] for row in status[:2]] == ["mcp", "app"]

    await eventually(both, timeout_s=10)
