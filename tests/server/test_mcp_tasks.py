"""Agent tasks as MCP tasks (the Tasks extension, ``io.modelcontextprotocol/tasks``, on 2026-07-28): a
client that declares it gets a task handle at once, ``tasks/get`` reports the seed's progress texts and
then the report, ``tasks/cancel`` aborts the agent as ``abort_task`` does; a client without it gets the
call that answers when the task ends. A scripted page plays the agent."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from phone_agent.server.mcp_apps import APPS_EXTENSION
from phone_agent.server.mcp_tasks import TASKS_EXTENSION
from tests.server.harness import ServeProcess, free_port, page_peer
from tests.server.test_mcp_revisions import MODERN, envelope, post

REPORT = {
    "content": [{"type": "text", "text": "## Task finished\n**Goal**: open Settings"}],
    "structuredContent": {
        "taskId": "t-1",
        "status": "finished",
        "conclusion": "Settings is open",
        "stepsCompleted": 1,
        "totalSteps": 1,
        "durationMs": 1200,
        "error": None,
    },
}


def with_tasks() -> dict[str, Any]:
    return envelope(**{"io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS_EXTENSION: {}}}})


def rpc(
    port: int, method: str, params: dict[str, Any], name: str | None = None
) -> tuple[int, dict[str, Any]]:
    headers = {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
    if name is not None:
        headers["Mcp-Name"] = name
    status, response_headers, body = post(
        port, {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, headers
    )
    text = body.decode()
    if response_headers.get("content-type", "").startswith("text/event-stream"):
        text = next(line[5:] for line in text.splitlines() if line.startswith("data:") and '"id"' in line)
    return status, json.loads(text)


def start(port: int, meta: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    params = {"name": "run_agent_task", "arguments": {"goal": "open Settings"}, "_meta": meta}
    return rpc(port, "tools/call", params, "run_agent_task")


def get(port: int, task_id: str, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    return rpc(port, "tasks/get", {"taskId": task_id, "_meta": meta or with_tasks()}, task_id)[1]


async def test_run_agent_task_as_a_task_reports_progress_and_the_report(served: ServeProcess) -> None:
    port = served.port
    async with page_peer(port) as peer:
        status, answer = await asyncio.to_thread(start, port, with_tasks())
        assert status == 200
        handle = answer["result"]
        assert handle["resultType"] == "task" and handle["status"] == "working"
        task_id = handle["taskId"]
        assert handle["ttlMs"] > 0 and handle["pollIntervalMs"] > 0 and handle["createdAt"].endswith("Z")
        # The page runs the agent meanwhile; its progress texts are the task's status.
        request = await peer.next_request("run_agent_task")
        assert request["args"] == {"goal": "open Settings"}
        await peer.progress(request, 1, "Planning: open Settings")
        await peer.progress(request, 2, "Step 1/1: tap Settings")

        async def progressed() -> dict[str, Any]:
            while True:
                state = (await asyncio.to_thread(get, port, task_id))["result"]
                if state.get("statusMessage") == "Step 1/1: tap Settings":
                    return state
                await asyncio.sleep(0.05)

        working = await asyncio.wait_for(progressed(), 10)
        assert working["status"] == "working" and working["resultType"] == "complete"
        assert working["_meta"]["io.github.phone-agent/progress"] == [
            "Planning: open Settings",
            "Step 1/1: tap Settings",
        ]
        await peer.answer(request, REPORT)

        async def ended() -> dict[str, Any]:
            while (state := (await asyncio.to_thread(get, port, task_id))["result"])["status"] == "working":
                await asyncio.sleep(0.05)
            return state

        done = await asyncio.wait_for(ended(), 10)
    assert done["status"] == "completed"
    assert done["result"]["content"] == REPORT["content"]
    assert done["result"]["structuredContent"]["conclusion"] == "Settings is open"


async def test_tasks_cancel_aborts_the_agent_as_abort_task_does(served: ServeProcess) -> None:
    port = served.port
    async with page_peer(port) as peer:
        handle = (await asyncio.to_thread(start, port, with_tasks()))[1]["result"]
        request = await peer.next_request("run_agent_task")
        cancel = asyncio.create_task(
            asyncio.to_thread(
                rpc,
                port,
                "tasks/cancel",
                {"taskId": handle["taskId"], "_meta": with_tasks()},
                handle["taskId"],
            )
        )
        abort = await peer.next_request("abort_task")  # the same tool abort_task is
        await peer.answer(abort, {"content": [{"type": "text", "text": "Task aborted"}]})
        status, acknowledged = await cancel
        assert status == 200 and acknowledged["result"]["resultType"] == "complete"
        aborted = {**REPORT, "structuredContent": {**REPORT["structuredContent"], "status": "aborted"}}
        aborted["content"] = [{"type": "text", "text": "## Task aborted"}]
        await peer.answer(request, aborted)

        async def ended() -> dict[str, Any]:
            while (state := (await asyncio.to_thread(get, port, handle["taskId"]))["result"])[
                "status"
            ] == "working":
                await asyncio.sleep(0.05)
            return state

        done = await asyncio.wait_for(ended(), 10)
    assert done["status"] == "cancelled" and done["statusMessage"] == "## Task aborted"


async def test_a_client_without_the_extension_gets_the_call_that_answers_when_the_task_ends(
    served: ServeProcess,
) -> None:
    port = served.port
    async with page_peer(port) as peer:
        call = asyncio.create_task(asyncio.to_thread(start, port, envelope()))
        request = await peer.next_request("run_agent_task")
        await asyncio.sleep(0.3)
        assert not call.done()  # it waits for the agent
        await peer.answer(request, REPORT)
        status, answer = await asyncio.wait_for(call, 10)
    assert status == 200
    assert answer["result"]["resultType"] == "complete" and answer["result"]["content"] == REPORT["content"]


def test_tasks_methods_need_the_extension_and_a_known_task(served: ServeProcess) -> None:
    port = served.port
    _, discovered = rpc(port, "server/discover", {"_meta": with_tasks()})
    extensions = discovered["result"]["capabilities"]["extensions"]
    assert extensions == {TASKS_EXTENSION: {}, APPS_EXTENSION: {}}  # and MCP Apps (mcp_apps)
    _, refused = rpc(port, "tasks/get", {"taskId": "nope", "_meta": envelope()}, "nope")
    assert refused["error"]["code"] == -32021
    assert refused["error"]["data"]["requiredCapabilities"]["extensions"] == {TASKS_EXTENSION: {}}
    assert get(port, "no-such-task")["error"]["code"] == -32602
    _, unknown = rpc(port, "tasks/cancel", {"taskId": "no-such-task", "_meta": with_tasks()}, "no-such-task")
    assert unknown["error"]["code"] == -32602


async def test_the_store_forgets_an_ended_task_after_its_ttl() -> None:
    from mcp.shared.exceptions import MCPError

    from phone_agent.server.mcp_tasks import TASK_TTL_MS, McpTaskStore

    now = [1000.0]
    store = McpTaskStore(clock=lambda: now[0])

    async def run(progress) -> dict[str, Any]:
        await progress(1, "halfway")
        return {"content": [{"type": "text", "text": "done"}]}

    async def cancel() -> None:
        raise AssertionError("not cancelled")

    handle = store.start("run_agent_task", run, cancel)
    assert store.get(handle["taskId"])["status"] == "working"  # durable before the handle is returned
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    state = store.get(handle["taskId"])
    assert state["status"] == "completed" and state["statusMessage"] == "done"
    assert state["_meta"]["io.github.phone-agent/progress"] == ["halfway"]
    now[0] += TASK_TTL_MS / 1000 + 1
    with pytest.raises(MCPError):
        store.get(handle["taskId"])
    assert len(store) == 0


async def test_an_sdk_client_with_the_extension_on_the_stdio_front(page_root: Path, tmp_path: Path) -> None:
    """The SDK's 2026-07-28 client, with the Tasks extension as a claim of its own, through the stdio
    front: the front hands it a task handle, and tasks/get gives the progress texts, then the report."""
    import os
    from typing import Literal

    import anyio
    import mcp.types as types
    from mcp.client.client import Client
    from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
    from mcp.client.stdio import StdioServerParameters, stdio_client
    from pydantic import TypeAdapter

    from tests.server.harness import PHONE_AGENT, stop_server

    class TaskHandle(types.Result):
        result_type: Literal["task"] = "task"
        task_id: str
        status: str

    handles: list[TaskHandle] = []
    states: list[dict[str, Any]] = []

    async def resolve(handle: TaskHandle, ctx: ClaimContext) -> types.CallToolResult:
        handles.append(handle)
        request = types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=handle.task_id))
        while True:
            state = await ctx.session.send_request(request, TypeAdapter(dict[str, Any]))
            states.append(state)
            if state["status"] != "working":
                return types.CallToolResult.model_validate(state["result"])
            await asyncio.sleep(0.05)

    class Tasks(ClientExtension):
        identifier = TASKS_EXTENSION

        def claims(self) -> list[ResultClaim[Any]]:
            return [ResultClaim(result_type="task", model=TaskHandle, resolve=resolve)]

    port = free_port()
    args = ["mcp", "--port", str(port), "--root", str(page_root), "--self-check-delay", "0"]
    params = StdioServerParameters(command=PHONE_AGENT, args=args, env=dict(os.environ))
    try:
        with (tmp_path / "stderr.txt").open("w") as errlog, anyio.fail_after(90):
            async with Client(stdio_client(params, errlog=errlog), extensions=[Tasks()]) as client:
                assert client.protocol_version == MODERN
                async with page_peer(port) as peer:
                    call = asyncio.create_task(client.call_tool("run_agent_task", {"goal": "open Settings"}))
                    request = await peer.next_request("run_agent_task")
                    await peer.progress(request, 1, "Planning: open Settings")
                    while not any(
                        state.get("statusMessage") == "Planning: open Settings" for state in states
                    ):
                        await asyncio.sleep(0.05)
                    await peer.answer(request, REPORT)
                    result = await call
    finally:
        await asyncio.to_thread(stop_server, port)
    assert len(handles) == 1 and handles[0].status == "working"
    assert states[-1]["status"] == "completed" and result.content[0].text == REPORT["content"][0]["text"]


async def test_a_task_waiting_for_the_person_is_input_required_and_tasks_update_answers(
    served: ServeProcess,
) -> None:
    """The page asks (a confirmation): the task is input_required with the question in inputRequests;
    tasks/update's inputResponses answers it (the page gets "yes"), and the task works on. A second
    question answered at the page first is withdrawn: the task works on, a late response is ignored."""
    port = served.port

    async def state_of(task_id: str, wanted: str) -> dict[str, Any]:
        while (state := (await asyncio.to_thread(get, port, task_id))["result"])["status"] != wanted:
            await asyncio.sleep(0.05)
        return state

    def update(task_id: str, responses: dict[str, Any]) -> dict[str, Any]:
        params = {"taskId": task_id, "inputResponses": responses, "_meta": with_tasks()}
        return rpc(port, "tasks/update", params, task_id)[1]

    async with page_peer(port) as peer:
        handle = (await asyncio.to_thread(start, port, with_tasks()))[1]["result"]
        task_id = handle["taskId"]
        request = await peer.next_request("run_agent_task")
        await peer.send(
            {"id": request["id"], "type": "ask", "ask": "ask-1", "kind": "confirm", "message": "Send?"}
        )
        waiting = await asyncio.wait_for(state_of(task_id, "input_required"), 10)
        ((key, question),) = waiting["inputRequests"].items()
        assert question["method"] == "elicitation/create"
        assert (
            question["params"]["message"] == "Send?"
            and "allow" in question["params"]["requestedSchema"]["properties"]
        )
        assert "Send?" in waiting["statusMessage"]
        answered = await asyncio.to_thread(
            update, task_id, {key: {"action": "accept", "content": {"allow": True}}}
        )
        assert answered["result"]["resultType"] == "complete"
        assert await peer.next_frame(30) == {"type": "answer", "id": "ask-1", "answer": "yes"}
        assert (await asyncio.wait_for(state_of(task_id, "working"), 10))["status"] == "working"
        # The person at the page answers the next question first: withdrawn, and a late response ignored.
        await peer.send(
            {"id": request["id"], "type": "ask", "ask": "ask-2", "kind": "takeover", "message": "Log in"}
        )
        second = await asyncio.wait_for(state_of(task_id, "input_required"), 10)
        await peer.send({"id": request["id"], "type": "withdraw", "ask": "ask-2"})
        await asyncio.wait_for(state_of(task_id, "working"), 10)
        late = await asyncio.to_thread(
            update, task_id, {k: {"action": "decline"} for k in second["inputRequests"]}
        )
        assert late["result"]["resultType"] == "complete"
        await peer.answer(request, REPORT)
        assert (await asyncio.wait_for(state_of(task_id, "completed"), 10))["result"]["content"] == REPORT[
            "content"
        ]
