"""MCP Apps (``mcp_apps``): the views' resources and the tools' ``_meta.ui`` reach only the clients that
declare the extension; every other client's tools/list is the same as before, byte for byte."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.client import Client
from mcp.client.extension import ClientExtension
from mcp.shared.exceptions import MCPError

from phone_agent.server.mcp_apps import ANSWER_TOOL_NAME, APP_MIME_TYPE, APPS_EXTENSION, TOOL_VIEWS
from phone_agent.server.mcp_bridge import build_mcp_server
from phone_agent.server.relay import Relay
from phone_agent.tools.catalog import ToolProfile


class Apps(ClientExtension):
    identifier = APPS_EXTENSION

    def settings(self) -> dict[str, Any]:
        return {"mimeTypes": [APP_MIME_TYPE]}


def dumped(listed: Any) -> str:
    return listed.model_dump_json(by_alias=True, exclude_none=True)


@pytest.mark.parametrize("profile", [ToolProfile.ALL, ToolProfile.COMPACT])
async def test_views_and_links_only_for_clients_declaring_the_extension(profile: ToolProfile) -> None:
    server = build_mcp_server(Relay(self_check_delay_s=0), profile)
    async with Client(server) as plain:
        before = await plain.list_tools()
        assert all(tool.meta is None or "ui" not in tool.meta for tool in before.tools)
        assert (await plain.list_resources()).resources == []
        with pytest.raises(MCPError):
            await plain.read_resource("ui://phone-agent/phone")
    async with Client(server, extensions=[Apps()]) as app_host:
        listed = await app_host.list_tools()
        linked = {tool.name: tool.meta["ui"]["resourceUri"] for tool in listed.tools if tool.meta}
        answer_tool = linked.pop(ANSWER_TOOL_NAME)  # the views' own tool, for them only
        assert answer_tool == "ui://phone-agent/task"
        assert listed.tools[-1].meta["ui"]["visibility"] == ["app"]
        assert ANSWER_TOOL_NAME not in {tool.name for tool in before.tools}
        none_open = await app_host.call_tool(ANSWER_TOOL_NAME, {})
        assert none_open.structured_content == {"questions": []}
        stale = await app_host.call_tool(ANSWER_TOOL_NAME, {"askId": "ask-9", "answer": "yes"})
        assert stale.is_error and stale.structured_content["code"] == "invalid_argument"
        assert linked == {name: view.uri for name, view in TOOL_VIEWS.items() if name in linked}
        assert {"take_screenshot", "run_agent_task"} <= set(linked)
        assert linked["run_agent_task"] == "ui://phone-agent/task"
        resources = (await app_host.list_resources()).resources
        assert {str(r.uri): r.mime_type for r in resources} == {
            "ui://phone-agent/phone": APP_MIME_TYPE,
            "ui://phone-agent/task": APP_MIME_TYPE,
        }
        for resource in resources:
            read = await app_host.read_resource(str(resource.uri))
            html = read.contents[0].text
            assert read.contents[0].mime_type == APP_MIME_TYPE
            assert "<html" in html and " src=" not in html  # its scripts are inline
            assert "phone-agent/caller" in html  # the view's calls say they are the app's
        with pytest.raises(MCPError):
            await app_host.read_resource("ui://phone-agent/none")
    async with Client(server) as plain_again:
        assert dumped(await plain_again.list_tools()) == dumped(before)


async def test_read_only_has_no_answer_question() -> None:
    server = build_mcp_server(Relay(self_check_delay_s=0), ToolProfile.READ_ONLY)
    async with Client(server, extensions=[Apps()]) as app_host:
        names = {tool.name for tool in (await app_host.list_tools()).tools}
        assert "take_screenshot" in names and ANSWER_TOOL_NAME not in names
        refused = await app_host.call_tool(ANSWER_TOOL_NAME, {})
        assert refused.is_error and refused.structured_content["code"] == "unknown_tool"
