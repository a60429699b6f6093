"""Channel B in the real page: Pyodide in Chromium registers the six tools on document.modelContext.

One booted page serves the whole module (booting Pyodide takes seconds); each test checks that the page
stayed clean (no page error, no console error, no request outside 127.0.0.1).
"""

from __future__ import annotations

import json

import pytest
from playwright.async_api import expect

from phone_agent.tools.catalog import TOOL_NAMES, TOOLS_BY_NAME, listed_tools
from phone_agent.tools.groups import GROUP_NAMES, GROUP_OF, GROUPS_TOOL, GROUPS_TOOL_NAME
from tests.support import KeptPage, ServedPhoneAgent, page_link, webmcp_call

pytestmark = pytest.mark.browser
# What the page registers by default (the compact profile: the core group and tool_groups).
LISTED = [spec.name for spec in listed_tools()]
SPECS = {**TOOLS_BY_NAME, GROUPS_TOOL_NAME: GROUPS_TOOL}


@pytest.fixture(scope="module")
async def kept(browser):
    """The module's page, on a server of its own: a server hands each page that pairs the task records
    its pages stored (issue 20), and these tests need one where no task has run."""
    served = ServedPhoneAgent()
    kept = KeptPage(browser, f"{served.base}/?relayRetryMs=500")
    yield kept
    await kept.close()
    served.stop()


@pytest.fixture
async def shared(kept):
    """The module's page and its watch (booted again if the last test's page crashed); checked after."""
    page, watch = await kept.get()
    yield page, watch
    watch.assert_clean()


@pytest.fixture
async def page(shared):
    page, _watch = shared
    return page


def text(result: dict) -> str:
    return result["content"][0]["text"]


async def test_the_page_boots_python_and_logs_the_registration(shared):
    page, watch = shared
    assert await page.get_attribute("html", "data-state") == "ready"
    assert watch.logged("log", f"[WebMCP] {len(LISTED)} tools registered: {', '.join(LISTED)}")
    assert not await page.is_visible("#boot")
    assert (
        await page.text_content("#webmcp-state") == f"WebMCP: {len(LISTED)} tools registered (compact tools)"
    )


async def test_the_six_tools_are_listed_with_schemas_and_annotations(page):
    tools = {tool["name"]: tool for tool in await page.webmcp.tools()}
    assert sorted(tools) == sorted(LISTED)
    for name, tool in tools.items():
        spec = SPECS[name]
        assert tool["description"] == spec.description
        assert tool["inputSchema"] == spec.input_schema
        annotations = tool.get("annotations", {})
        assert annotations.get("readOnly", False) is spec.read_only
        assert annotations.get("consequential", False) is spec.consequential
    assert tools["run_agent_task"]["annotations"]["consequential"] is True
    assert tools["run_agent_task"]["inputSchema"]["required"] == ["goal"]


async def test_get_device_status_without_a_phone(page):
    result = await page.webmcp.call_tool("get_device_status", {})
    assert json.loads(text(result)) == {"connected": False}
    assert not result.get("isError")


@pytest.mark.parametrize(
    ("tool", "args", "message"),
    [
        ("take_screenshot", {}, "No phone device connected."),
        ("run_agent_task", {"goal": "Open Settings"}, "No phone device connected."),
        ("abort_task", {}, "No task is currently running."),
        ("get_task_result", {"taskId": "t-unknown"}, 'No task with taskId "t-unknown" in this page.'),
        ("get_latest_task", {}, "No agent task has run in this page yet."),
    ],
)
async def test_tools_answer_honest_errors_without_a_phone(page, tool, args, message):
    result = await webmcp_call(page, tool, args)
    assert result["isError"] is True
    assert text(result) == message
    structured = result["structuredContent"]
    assert structured["message"] == message
    assert structured["code"] and structured["remedy"] and isinstance(structured["retryable"], bool)


@pytest.mark.parametrize(
    ("tool", "args", "field"),
    [
        ("run_agent_task", {}, "goal"),
        ("run_agent_task", {"goal": 42}, "goal"),
        ("run_agent_task", {"goal": "x", "timeoutMs": "soon"}, "timeoutMs"),
        ("run_agent_task", {"goal": "x", "timeoutMs": -1}, "timeoutMs"),
        ("run_agent_task", {"goal": "x", "colour": "red"}, "colour"),
        ("get_task_result", {}, "taskId"),
        ("get_task_result", {"taskId": "t", "includeSteps": "yes"}, "includeSteps"),
        ("take_screenshot", {"scale": 2}, "scale"),
        ("get_device_status", {"verbose": True}, "verbose"),
    ],
)
async def test_bad_arguments_are_an_error_result_naming_the_field(page, tool, args, field):
    result = await webmcp_call(page, tool, args)
    assert result["isError"] is True
    assert f'"{field}"' in text(result)
    assert result["structuredContent"]["code"] == "invalid_argument"
    assert result["structuredContent"]["details"]["field"] == field


async def test_calls_show_up_in_the_activity_log(page):
    await page.webmcp.call_tool("get_device_status", {})
    row = page.locator("#activity .activity__row").first
    # Rows are drawn in batches off the call's path: the row follows the answer within a moment.
    await expect(row).to_contain_text("get_device_status")
    assert "B · WebMCP" in await row.text_content()


async def test_the_activity_log_keeps_the_latest_50_calls(page):
    # Not more: the browser repaints the whole list for every new row (ui.ACTIVITY_LIMIT).
    for _ in range(53):
        await page.webmcp.call_tool("get_device_status", {})
    rows = page.locator("#activity .activity__row")
    await expect(rows).to_have_count(50)  # drawn in a batch a moment after the calls
    await page.wait_for_timeout(300)
    assert await rows.count() == 50


async def test_unregistering_aborts_the_signal_and_registering_again_restores_the_tools(page):
    await page.evaluate("window.phoneAgent.unregisterWebMcp()")
    assert await page.webmcp.tools() == []
    await page.evaluate("window.phoneAgent.registerWebMcp()")
    # The compact list again, with the groups earlier calls enabled (tasks: get_task_result's).
    assert sorted(tool["name"] for tool in await page.webmcp.tools()) == sorted(
        spec.name for spec in listed_tools(enabled=frozenset({"tasks"}))
    )


async def test_without_webmcp_the_page_warns_how_to_enable_it(browser, served):
    # Hide the API before any script runs: this is how the page looks in a browser without the flag.
    context = await browser.new_context()
    try:
        await context.add_init_script(
            "Object.defineProperty(Document.prototype, 'modelContext', "
            "{get() { return undefined; }, configurable: true});"
        )
        page = await context.new_page()
        warnings: list[str] = []
        page.on("console", lambda m: warnings.append(m.text) if m.type == "warning" else None)
        await page.goto(page_link(f"{served.base}/"))
        await page.wait_for_selector("html[data-state=ready]", state="attached", timeout=60_000)
        assert any("chrome://flags/#enable-webmcp-testing" in w for w in warnings)
        assert await page.text_content("#webmcp-state") == "WebMCP unavailable"
        assert await page.webmcp.tools() == []
    finally:
        await context.close()


def test_every_catalog_name_is_a_webmcp_tool_name() -> None:
    from phone_agent.tools.spec import webmcp_name_ok

    assert all(webmcp_name_ok(name) for name in TOOL_NAMES)
    for bad in ("", "has space", "slash/name", "x" * 129, "ünï"):
        assert not webmcp_name_ok(bad)
    assert webmcp_name_ok("a.b-c_D9") and webmcp_name_ok("x" * 128)


REGISTER_OTHER = """async (name) => {
  window.__otherTool = new AbortController();
  await document.modelContext.registerTool({
    name, description: "A tool of another script of this page.",
    inputSchema: {type: "object", properties: {}},
    execute: async () => "from the other script",
  }, {signal: window.__otherTool.signal});
}"""


async def test_tools_other_scripts_add_or_withdraw_show_as_cards_and_in_the_log(page):
    name = "other.script-tool_1"
    await page.evaluate(REGISTER_OTHER, name)
    card = page.locator(f'#tool-list li.tool--other[data-tool="{name}"]')
    await expect(card).to_have_count(1, timeout=10_000)
    await expect(card).to_contain_text("A tool of another script of this page.")
    activity = page.locator("#activity")
    await expect(activity).to_contain_text(f"another script of this page registered the tool {name}")
    listed = {tool["name"] for tool in await page.webmcp.tools()}
    assert name in listed and set(LISTED) <= listed
    # Ours stay ours: none of the catalog's tools is shown as another script's.
    assert await page.locator("#tool-list li.tool--other").count() == 1

    await page.evaluate("() => window.__otherTool.abort()")  # withdrawn the draft's way: by the signal
    await expect(card).to_have_count(0, timeout=10_000)
    await expect(activity).to_contain_text(f"another script of this page withdrew the tool {name}")
    assert name not in {tool["name"] for tool in await page.webmcp.tools()}
    assert set(LISTED) <= {tool["name"] for tool in await page.webmcp.tools()}


async def test_the_page_uses_nothing_of_the_removed_webmcp_api() -> None:
    from pathlib import Path

    source = "\n".join(
        path.read_text()
        for path in (Path(__file__).parents[2] / "py" / "phone_agent" / "browser").glob("*.py")
    )
    code_lines = [line for line in source.splitlines() if not line.strip().startswith(("#", '"', "``"))]
    for removed in ("provideContext(", "unregisterTool(", "requestUserInteraction("):
        assert not any(removed in line for line in code_lines), removed


async def test_tool_groups_registers_the_groups_it_enables_and_names_the_groups_when_one_is_unknown(page):
    # Last in the module: the groups stay enabled in the page.
    before = sorted(tool["name"] for tool in await page.webmcp.tools())
    assert GROUP_OF["pinch"] != "core" and "pinch" not in before
    wrong = await page.webmcp.call_tool(GROUPS_TOOL_NAME, {"enable": ["nonsense"]})
    assert wrong["isError"] and wrong["structuredContent"]["code"] == "invalid_argument"
    assert all(group in wrong["structuredContent"]["remedy"] for group in GROUP_NAMES)
    assert sorted(tool["name"] for tool in await page.webmcp.tools()) == before
    enabled = await page.webmcp.call_tool(GROUPS_TOOL_NAME, {"enable": list(GROUP_NAMES)})
    assert not enabled.get("isError")
    assert all(group["enabled"] for group in enabled["structuredContent"]["groups"])
    names = {tool["name"] for tool in await page.webmcp.tools()}
    assert names == {*TOOL_NAMES, GROUPS_TOOL_NAME}
