"""Tool groups: the compact default list (no bigger than mobile-mcp's), every tool two calls away at most
through ``tool_groups`` (which sends ``notifications/tools/list_changed`` when the list changes), an
unknown group an ``invalid_argument`` naming the groups, and the instructions written from the groups.
Through the real MCP server (``build_mcp_server`` on a relay with no page) and the SDK's client."""

from __future__ import annotations

import json
from typing import Any

import mcp.types as types
from mcp.client.client import Client

from phone_agent.server.mcp_bridge import build_mcp_server, mcp_tool, server_instructions
from phone_agent.server.relay import Relay
from phone_agent.tools.catalog import TOOL_NAMES, ToolProfile, listed_tools, tools_for_profile
from phone_agent.tools.groups import GROUP_NAMES, GROUP_OF, GROUPS, GROUPS_TOOL_NAME

# mobile-mcp 1.0.4's tools/list, measured beside ours (bench/bench_vs_mobile_mcp.py): 28,813 characters.
MOBILE_MCP_LIST_CHARS = 28_000


def list_chars(profile: ToolProfile, enabled: frozenset[str] = frozenset()) -> int:
    listed = types.ListToolsResult(tools=[mcp_tool(spec) for spec in listed_tools(profile, enabled)])
    return len(json.dumps(listed.model_dump(by_alias=True, mode="json", exclude_none=True)))


def test_every_tool_is_in_exactly_one_group():
    named = [tool for group in GROUPS for tool in group.tools]
    assert sorted(named) == sorted(TOOL_NAMES)
    assert len(named) == len(set(named))


def test_the_default_list_is_compact_and_all_lists_every_tool():
    assert list_chars(ToolProfile.COMPACT) <= MOBILE_MCP_LIST_CHARS
    assert [tool.name for tool in listed_tools(ToolProfile.ALL)] == list(TOOL_NAMES)
    everything = listed_tools(ToolProfile.COMPACT, frozenset(GROUP_NAMES))
    assert {tool.name for tool in everything} == {*TOOL_NAMES, GROUPS_TOOL_NAME}
    assert [tool.name for tool in tools_for_profile()] == [*TOOL_NAMES, GROUPS_TOOL_NAME]


def test_the_instructions_are_written_from_the_groups():
    text = server_instructions(ToolProfile.COMPACT)
    assert len(text) <= 1_500
    for words in ("list_elements", "ref", "locator", "stale", "remedy", "type_secret", "run_flow"):
        assert words in text
    for group in GROUP_NAMES[1:]:
        assert group in text
    assert f"type_secret (group {GROUP_OF['type_secret']})" in text
    assert GROUPS_TOOL_NAME not in server_instructions(ToolProfile.ALL)


class Notes:
    """The client's message handler: the notifications it was sent."""

    def __init__(self) -> None:
        self.methods: list[str] = []

    async def __call__(self, message: Any) -> None:
        root = getattr(message, "root", message)
        method = getattr(root, "method", None)
        if method is not None:
            self.methods.append(method)


async def test_every_tool_is_reachable_within_two_calls_and_enabling_changes_the_list():
    notes = Notes()
    server = build_mcp_server(Relay(page_wait_s=0.0))
    async with Client(server, mode="legacy", message_handler=notes) as client:
        assert client.server_capabilities.tools.list_changed is True
        first = [tool.name for tool in (await client.list_tools()).tools]
        assert first == [tool.name for tool in listed_tools()]
        missing = [name for name in TOOL_NAMES if name not in first]
        assert missing
        # One call of tool_groups names every group and its tools ...
        answer = await client.call_tool(GROUPS_TOOL_NAME, {})
        assert not answer.is_error
        by_group = {group["name"]: group for group in answer.structured_content["groups"]}
        assert {name for group in by_group.values() for name in group["tools"]} == set(TOOL_NAMES)
        # ... and a second enables the groups of the rest: the list changes and says so.
        wanted = sorted({GROUP_OF[name] for name in missing})
        enabled = await client.call_tool(GROUPS_TOOL_NAME, {"enable": wanted})
        assert not enabled.is_error
        assert all(group["enabled"] for group in enabled.structured_content["groups"])
        assert "notifications/tools/list_changed" in notes.methods
        second = {tool.name for tool in (await client.list_tools()).tools}
        assert second == {*TOOL_NAMES, GROUPS_TOOL_NAME}
        # Enabling them again changes nothing, and says nothing.
        count = notes.methods.count("notifications/tools/list_changed")
        await client.call_tool(GROUPS_TOOL_NAME, {"enable": wanted[:1]})
        assert notes.methods.count("notifications/tools/list_changed") == count
        # A tool of a group not enabled is callable all the same (here: no page, not "unknown tool").
        unlisted = await client.call_tool("get_clipboard", {})
        assert unlisted.structured_content["code"] != "unknown_tool"


async def test_an_unknown_group_is_an_invalid_argument_naming_the_groups():
    server = build_mcp_server(Relay(page_wait_s=0.0))
    async with Client(server, mode="legacy") as client:
        for enable in (["gestures", "nonsense"], "gestures", [3]):
            answer = await client.call_tool(GROUPS_TOOL_NAME, {"enable": enable})
            assert answer.is_error
            assert answer.structured_content["code"] == "invalid_argument"
        named = await client.call_tool(GROUPS_TOOL_NAME, {"enable": ["nonsense"]})
        assert all(group in named.structured_content["remedy"] for group in GROUP_NAMES)
        assert "nonsense" in named.content[0].text
        assert [tool.name for tool in (await client.list_tools()).tools] == [t.name for t in listed_tools()]


async def test_a_stateless_client_is_told_every_tool_is_callable_and_nothing_is_said_on():
    server = build_mcp_server(Relay(page_wait_s=0.0))
    async with Client(server, mode="auto") as client:
        assert client.protocol_version == "2026-07-28"
        answer = await client.call_tool(GROUPS_TOOL_NAME, {"enable": ["files"]})
        assert not answer.is_error and "every tool is callable by name" in answer.content[0].text
        on = {group["name"] for group in answer.structured_content["groups"] if group["enabled"]}
        assert on == {"core"}
        assert [tool.name for tool in (await client.list_tools()).tools] == [t.name for t in listed_tools()]
