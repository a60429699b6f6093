"""Channel A end to end: the SDK's stdio client → a real ``phone-agent mcp`` → WebSocket → a scripted page.

One ``phone-agent mcp`` subprocess serves the whole module (see ``SHARED_MCP_ARGS``); each test connects
its own scripted page and closes it, and starts from "no page connected".
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp.shared.exceptions import MCPDeprecationWarning

from phone_agent.errors import BROWSER_NOT_CONNECTED_TEXT
from phone_agent.tools.catalog import TOOL_NAMES, TOOLS_BY_NAME, listed_tools
from tests.server.harness import McpHarness, page_peer, page_token, sample_of, with_structured_content

pytestmark = pytest.mark.asyncio(loop_scope="session")

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 32).decode()


@pytest.fixture(autouse=True)
async def no_page_left(mcp_server: McpHarness) -> None:
    await mcp_server.wait_no_page()
    mcp_server.notifications.clear()


def structured(result: types.CallToolResult) -> Any:
    return result.structured_content


def text_of(result: types.CallToolResult) -> str:
    assert result.content and isinstance(result.content[0], types.TextContent), result
    return result.content[0].text


async def answered_by(page, server: McpHarness, tool: str, text: str) -> str:
    """``tool`` called through ``server`` and answered by the ``page`` with ``text``: what the caller
    read."""
    call = asyncio.create_task(server.call(tool))
    request = await page.next_request(tool)
    await page.answer(request, {"content": [{"type": "text", "text": text}]})
    return text_of(await call)


async def test_tools_list_offers_the_six_catalog_tools_with_strict_schemas(mcp_server: McpHarness) -> None:
    assert mcp_server.session is not None
    listed = await mcp_server.session.list_tools()
    tools = {tool.name: tool for tool in listed.tools}
    assert list(tools) == [spec.name for spec in listed_tools()]  # the compact list: core and tool_groups
    for tool in tools.values():
        assert tool.input_schema["type"] == "object"
        assert tool.input_schema["additionalProperties"] is False
        assert tool.description and tool.title
        assert tool.annotations is not None and tool.annotations.read_only_hint is not None
    assert tools["run_agent_task"].input_schema["required"] == ["goal"]
    assert tools["run_agent_task"].annotations.read_only_hint is False
    assert tools["run_agent_task"].annotations.destructive_hint is True
    assert tools["abort_task"].annotations.destructive_hint is False
    for name in ("take_screenshot", "get_device_status", "list_elements"):
        assert tools[name].annotations.read_only_hint is True


async def test_serverinfo_names_phone_agent(mcp_server: McpHarness) -> None:
    assert mcp_server.session is not None
    info = mcp_server.session.server_info
    assert info is not None and info.name == "phone-agent"


async def test_without_a_page_every_tool_answers_browser_not_connected_at_once(
    mcp_server: McpHarness,
) -> None:
    known_args = {"run_agent_task": {"goal": "x"}, "get_task_result": {"taskId": "t"}}
    for tool in TOOL_NAMES:
        args = known_args.get(tool, {})
        if set(TOOLS_BY_NAME[tool].input_schema.get("required", [])) - set(args):
            continue  # a call without its required arguments is refused before looking for a page
        started = time.monotonic()
        result = await mcp_server.call(tool, args)
        assert time.monotonic() - started < 2
        # Where the page is, or (no page paired yet on this server) the command that prints its link.
        text = text_of(result)
        assert result.is_error and text.startswith(BROWSER_NOT_CONNECTED_TEXT + " ")
        assert " The page: http://" in text or f"`phone-agent url --port {mcp_server.port}`" in text
        assert structured(result)["code"] == "browser_not_connected"


CASES = [
    (
        "get_device_status",
        {},
        {},
        {
            "content": [{"type": "text", "text": '{"connected":true,"model":"Pixel 7"}'}],
            "structuredContent": {"connected": True, "model": "Pixel 7"},
        },
    ),
    ("take_screenshot", {}, {}, {"content": [{"type": "image", "data": PNG, "mimeType": "image/png"}]}),
    (
        "run_agent_task",
        {"goal": "Open Settings", "timeoutMs": 60000},
        {"goal": "Open Settings", "timeoutMs": 60000},
        {"content": [{"type": "text", "text": "## ✅ Agent Task Completed\n"}]},
    ),
    ("abort_task", {}, {}, {"content": [{"type": "text", "text": "Task aborted."}]}),
    (
        "get_task_result",
        {"taskId": "task-1"},
        {"taskId": "task-1", "includeSteps": True},
        {
            "content": [{"type": "text", "text": '{"taskId":"task-1"}'}],
            "structuredContent": {
                **sample_of(TOOLS_BY_NAME["get_task_result"].output_schema),
                "taskId": "task-1",
            },
        },
    ),
    (
        "get_latest_task",
        {},
        {},
        {
            "content": [{"type": "text", "text": "No agent task has run in this page yet."}],
            "structuredContent": {"code": "no_tasks", "message": "…", "remedy": "…", "retryable": False},
            "isError": True,
        },
    ),
]


# A success of a tool with an output schema carries structured content, as the real page's does.
CASES = [
    (tool, args, forwarded, with_structured_content(tool, answer)) for tool, args, forwarded, answer in CASES
]


@pytest.mark.parametrize(("tool", "args", "forwarded", "answer"), CASES, ids=[case[0] for case in CASES])
async def test_each_tool_is_forwarded_and_the_pages_answer_returned(
    mcp_server: McpHarness, tool: str, args: dict[str, Any], forwarded: dict[str, Any], answer: dict[str, Any]
) -> None:
    async with page_peer(mcp_server.port) as peer:
        call = asyncio.create_task(mcp_server.call(tool, args))
        request = await peer.next_request(tool)
        assert request["args"] == forwarded and isinstance(request["id"], str) and request["id"]
        await peer.answer(request, answer)
        result = await call
    assert result.model_dump(by_alias=True, exclude_none=True, exclude={"result_type"}) == {
        "isError": answer.get("isError", False),
        **{k: v for k, v in answer.items() if k != "isError"},
    }


async def test_the_relay_answers_on_the_root_path_too(mcp_server: McpHarness) -> None:
    async with page_peer(mcp_server.port, path="/") as peer:
        assert await answered_by(peer, mcp_server, "get_latest_task", "root") == "root"


async def test_concurrent_calls_are_paired_by_id(mcp_server: McpHarness) -> None:
    async with page_peer(mcp_server.port) as peer:
        first = asyncio.create_task(mcp_server.call("get_task_result", {"taskId": "a"}))
        first_request = await peer.next_request("get_task_result")
        second = asyncio.create_task(mcp_server.call("get_task_result", {"taskId": "b"}))
        second_request = await peer.next_request("get_task_result")
        assert first_request["id"] != second_request["id"]
        # Answered in the opposite order.
        await peer.answer(second_request, {"content": [{"type": "text", "text": "b"}]})
        await peer.answer(first_request, {"content": [{"type": "text", "text": "a"}]})
        assert (text_of(await first), text_of(await second)) == ("a", "b")


async def test_bad_arguments_and_unknown_tools_never_reach_the_page(mcp_server: McpHarness) -> None:
    async with page_peer(mcp_server.port) as peer:
        missing = await mcp_server.call("run_agent_task", {})
        assert missing.is_error and '"goal" is required' in text_of(missing)
        assert structured(missing)["code"] == "invalid_argument"
        wrong = await mcp_server.call("get_task_result", {"taskId": 5})
        assert wrong.is_error and '"taskId" must be a string' in text_of(wrong)
        extra = await mcp_server.call("take_screenshot", {"scale": 2})
        assert extra.is_error and '"scale"' in text_of(extra)
        unknown = await mcp_server.call("reboot_phone", {})
        assert unknown.is_error and structured(unknown)["code"] == "unknown_tool"
        # The next frame the page sees is the next valid call: nothing was sent before it.
        assert await answered_by(peer, mcp_server, "get_device_status", "{}") == "{}"


async def test_a_second_page_replaces_the_first_whose_pending_call_fails_at_once(
    mcp_server: McpHarness,
) -> None:
    async with page_peer(mcp_server.port) as first:
        call = asyncio.create_task(mcp_server.call("take_screenshot"))
        await first.next_request("take_screenshot")
        started = time.monotonic()
        async with page_peer(mcp_server.port) as second:
            result = await call
            assert time.monotonic() - started < 5  # not the 30 s time limit
            assert result.is_error and structured(result)["code"] == "browser_replaced"
            assert "replaced" in text_of(result)
            assert await first.wait_closed() == 4000
            # The new page is the relay's page now.
            answer = await answered_by(second, mcp_server, "get_latest_task", "from the second page")
            assert answer == "from the second page"


async def test_a_page_that_disconnects_mid_call_fails_the_call_at_once(mcp_server: McpHarness) -> None:
    async with page_peer(mcp_server.port) as peer:
        call = asyncio.create_task(mcp_server.call("run_agent_task", {"goal": "wait forever"}))
        await peer.next_request("run_agent_task")
        started = time.monotonic()
        await peer.close()
        result = await call
    assert time.monotonic() - started < 5
    assert result.is_error and structured(result)["code"] == "browser_not_connected"
    assert text_of(result).startswith('Browser disconnected before tool "run_agent_task" answered.')


async def test_a_call_past_its_time_limit_times_out_and_the_page_is_told_to_cancel(
    mcp_server: McpHarness,
) -> None:
    async with page_peer(mcp_server.port) as peer:
        started = time.monotonic()
        call = asyncio.create_task(mcp_server.call("abort_task"))
        request = await peer.next_request("abort_task")
        result = await call
        elapsed = time.monotonic() - started
        assert result.is_error and text_of(result) == 'Tool "abort_task" timed out after 1500ms'
        assert structured(result)["code"] == "timeout"
        assert 1.4 <= elapsed < 10
        assert await peer.next_frame() == {"id": request["id"], "type": "cancel"}
        # A late answer is ignored and does not disturb the next call.
        await peer.answer(request, {"content": [{"type": "text", "text": "too late"}]})
        nxt = asyncio.create_task(mcp_server.call("get_latest_task"))
        await peer.answer(
            await peer.next_request("get_latest_task"), {"content": [{"type": "text", "text": "ok"}]}
        )
        assert text_of(await nxt) == "ok"


async def test_progress_with_a_token_becomes_ordered_progress_notifications(mcp_server: McpHarness) -> None:
    seen: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message))

    async with page_peer(mcp_server.port) as peer:
        call = asyncio.create_task(
            mcp_server.call("run_agent_task", {"goal": "g"}, progress_callback=on_progress)
        )
        request = await peer.next_request("run_agent_task")
        await peer.progress(request, 1, "📋 Plan: 2 steps")
        await peer.progress(request, 2, "▶️ Step 1: Open Settings")
        await peer.progress(request, 2, "a repeated seq is ignored")
        await peer.send({"id": "someone-else", "type": "progress", "seq": 3, "message": "unknown id"})
        await peer.send("garbage that is not JSON")
        await peer.progress(request, 3, "✅ Step 1 completed")
        await peer.answer(request, {"content": [{"type": "text", "text": "done"}]})
        result = await call
    assert text_of(result) == "done"
    assert seen == [(1.0, "📋 Plan: 2 steps"), (2.0, "▶️ Step 1: Open Settings"), (3.0, "✅ Step 1 completed")]
    assert [p.progress for p in mcp_server.progress_notifications()] == [1.0, 2.0, 3.0]
    assert mcp_server.log_messages() == []


async def test_progress_without_a_token_becomes_log_messages(mcp_server: McpHarness) -> None:
    async with page_peer(mcp_server.port) as peer:
        call = asyncio.create_task(mcp_server.call("run_agent_task", {"goal": "g"}))
        request = await peer.next_request("run_agent_task")
        await peer.progress(request, 1, "first")
        await peer.progress(request, 2, "second")
        await peer.answer(request, {"content": [{"type": "text", "text": "done"}]})
        await call
    logs = mcp_server.log_messages()
    assert [(m.level, m.logger, m.data) for m in logs] == [
        ("info", "phone-agent", "first"),
        ("info", "phone-agent", "second"),
    ]
    assert mcp_server.progress_notifications() == []


async def test_a_client_cancellation_sends_cancel_to_the_page(mcp_server: McpHarness) -> None:
    assert mcp_server.session is not None
    async with page_peer(mcp_server.port) as peer:
        with anyio.move_on_after(20):
            async with anyio.create_task_group() as group:

                async def call() -> None:
                    await mcp_server.session.call_tool("run_agent_task", {"goal": "long"})  # type: ignore[union-attr]

                group.start_soon(call)
                request = await peer.next_request("run_agent_task")
                group.cancel_scope.cancel()
        assert await peer.next_frame() == {"id": request["id"], "type": "cancel"}


async def test_frames_that_make_no_sense_are_ignored_and_a_malformed_result_is_an_error(
    mcp_server: McpHarness,
) -> None:
    async with page_peer(mcp_server.port) as peer:
        call = asyncio.create_task(mcp_server.call("get_latest_task"))
        request = await peer.next_request("get_latest_task")
        for junk in ("{", "[]", "42", json.dumps({"id": request["id"], "result": "a string"})):
            await peer.send(junk)
        await peer.send({"id": request["id"], "result": {"content": "not a list"}})
        result = await call
        assert result.is_error and structured(result)["code"] == "internal_error"
        assert "malformed result" in text_of(result)
        # The relay still works.
        again = asyncio.create_task(mcp_server.call("get_latest_task"))
        await peer.answer(
            await peer.next_request("get_latest_task"), {"content": [{"type": "text", "text": "fine"}]}
        )
        assert text_of(await again) == "fine"


async def test_logging_set_level_above_info_silences_progress_log_messages(mcp_server: McpHarness) -> None:
    assert mcp_server.session is not None
    with pytest.warns(MCPDeprecationWarning):  # logging is deprecated in the newest revision, still ours here
        await mcp_server.session.set_logging_level("warning")
    try:
        async with page_peer(mcp_server.port) as peer:
            call = asyncio.create_task(mcp_server.call("run_agent_task", {"goal": "g"}))
            request = await peer.next_request("run_agent_task")
            await peer.progress(request, 1, "not shown")
            await peer.answer(request, {"content": [{"type": "text", "text": "done"}]})
            assert text_of(await call) == "done"
        assert mcp_server.log_messages() == []
    finally:
        with pytest.warns(MCPDeprecationWarning):
            await mcp_server.session.set_logging_level("debug")


async def test_the_server_logged_its_url_and_no_traceback_to_stderr(
    mcp_server: McpHarness, phone_agent_home: Path
) -> None:
    log = mcp_server.stderr()
    # How to get the page's link (the browser that opens it is the one that pairs); the link itself, with
    # its token, only on a terminal (this stderr is a file).
    assert f"`phone-agent url --port {mcp_server.port}` prints the page's link" in log
    assert page_token() not in log
    assert "Traceback" not in log, log
    background = (phone_agent_home / "state" / f"server-{mcp_server.port}.log").read_text()
    assert f"phone-agent: MCP over streamable HTTP on http://127.0.0.1:{mcp_server.port}/mcp" in background
    assert "Traceback" not in background, background
