"""Every way a task can go wrong ends it with a clear status and error, within its bounds, never a hang."""

from __future__ import annotations

import asyncio
import time

import pytest

from phone_agent.agent.config import AgentConfig
from phone_agent.agent.extract import ExtractConfig
from phone_agent.agent.openai_client import OpenAIChatModel
from phone_agent.agent.settings import ModelSettings
from phone_agent.agent.task_runner import PlanAndResolveAgent
from phone_agent.errors import ErrorCode, ToolError
from phone_agent.tasks import AgentTask, StepStatus, TaskStatus
from phone_agent.tools.dispatch import ToolDispatcher
from phone_agent.tools.spec import Channel
from tests.agent.model_server import (
    bad_args,
    call,
    dynamic,
    malformed,
    plan,
    stall,
    status,
    tap_on,
)
from tests.support import eventually

FAST = AgentConfig(settle_ms=0, retry_delay_ms=10, extract=ExtractConfig(settle_ms=0))


def new_task(goal: str = "Do something") -> AgentTask:
    return AgentTask(id="task-f", goal=goal, created_at=0)


async def requests_reach(server, count: int) -> None:
    async def check():
        return len(server.requests) >= count

    await eventually(check, timeout_s=10)


async def test_abort_mid_task_keeps_finished_steps_and_ends_within_a_second(agent, device, model_server):
    model_server.add(
        plan("Open Settings", "Wait for a sign"), tap_on("Settings"), call("finish_step", summary="open")
    )
    model_server.add(stall())
    running = asyncio.ensure_future(agent.run(new_task(), device, 60_000, None))
    await requests_reach(model_server, 4)
    started = time.monotonic()
    agent.abort()
    task = await asyncio.wait_for(running, 5)
    assert time.monotonic() - started < 1.5  # within a second, with room for a loaded machine
    assert task.status is TaskStatus.ABORTED
    assert task.error == "Aborted by abort_task."
    assert [s.status for s in task.steps] == [StepStatus.SUCCESS, StepStatus.FAILED]
    assert task.steps[0].summary == "open"


async def test_abort_through_the_context_answers_task_aborted_and_an_aborted_report(
    agent, device, model_server
):
    context = ToolDispatcher()
    context.device, context.agent = device, agent
    model_server.add(plan("Wait"), stall())
    lines: list[str] = []
    run = asyncio.ensure_future(
        context.dispatch("run_agent_task", {"goal": "Wait forever"}, Channel.RELAY, lines.append)
    )
    await requests_reach(model_server, 2)
    busy = await context.dispatch("run_agent_task", {"goal": "Another"}, Channel.WEBMCP)
    assert (
        busy["isError"]
        and busy["content"][0]["text"] == "Agent is already running. Please wait or call abort_task first."
    )
    aborted = await context.dispatch("abort_task", {}, Channel.RELAY)
    assert aborted["content"][0]["text"] == "Task aborted."
    result = await asyncio.wait_for(run, 5)
    report = result["content"][0]["text"]
    assert report.startswith("## ⏹️ Agent Task Aborted")
    assert "**Status**: aborted" in report
    assert lines[0] == "💭 Planning the steps."  # the planner's thinking, flushed before the plan
    assert lines[1] == "📋 Execution plan generated (1 steps total)\n1. Wait"
    assert lines[-1] == "❌ Agent execution error: Task aborted: Aborted by abort_task."
    latest = await context.dispatch("get_latest_task", {}, Channel.WEBMCP)
    assert latest["structuredContent"]["status"] == "aborted"


async def test_timeout_aborts_the_task(agent, device, model_server):
    model_server.add(plan("Wait"), stall())
    started = time.monotonic()
    task = await asyncio.wait_for(agent.run(new_task(), device, 1_500, None), 5)
    assert 1.4 < time.monotonic() - started < 4.0  # the limit, plus the unwinding (bounded to 1 s)
    assert task.status is TaskStatus.ABORTED
    assert task.error == "Timed out after 1500 ms."


async def test_cancelling_run_marks_the_task_aborted(agent, device, model_server):
    model_server.add(plan("Wait"), stall())
    task = new_task()
    running = asyncio.ensure_future(agent.run(task, device, 60_000, None))
    await requests_reach(model_server, 2)
    running.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(running, 2)
    assert task.status is TaskStatus.ABORTED
    assert task.error == "Cancelled by the caller."


async def test_http_500_fails_the_task_naming_the_providers_answer(agent, device, model_server):
    body = '{"error": {"message": "upstream overloaded"}}'
    model_server.add(status(500, body), status(500, body))  # one retry, then the failure
    task = await agent.run(new_task(), device, 30_000, None)
    assert task.status is TaskStatus.FAILED
    assert "HTTP 500" in task.error and "upstream overloaded" in task.error
    assert len(model_server.requests) == 2


async def test_http_401_is_not_retried_and_says_to_check_the_key(agent, device, model_server):
    model_server.add(status(401, '{"error": {"message": "Incorrect API key provided"}}'))
    task = await agent.run(new_task(), device, 30_000, None)
    assert task.status is TaskStatus.FAILED
    assert "refused the API key (HTTP 401): Incorrect API key provided" in task.error
    assert "sk-test-SECRET-123" not in task.error
    assert len(model_server.requests) == 1


async def test_malformed_json_fails_the_task(agent, device, model_server):
    model_server.add(malformed(), malformed())
    task = await agent.run(new_task(), device, 30_000, None)
    assert task.status is TaskStatus.FAILED
    assert "malformed JSON" in task.error


async def test_a_model_silent_for_the_idle_limit_fails_the_task(settings, http, codec, device, model_server):
    quick = ModelSettings(**{**settings.__dict__, "idle_timeout_ms": 700})
    agent = PlanAndResolveAgent(OpenAIChatModel(quick, http), codec, config=FAST)
    model_server.add(stall(), stall())
    started = time.monotonic()
    task = await asyncio.wait_for(agent.run(new_task(), device, 30_000, None), 10)
    assert time.monotonic() - started < 6  # two idle limits (one retry), far below the test's bound
    assert task.status is TaskStatus.FAILED
    assert "stopped sending its answer: nothing arrived for 0.7 s" in task.error


async def test_unknown_tool_goes_back_to_the_model_which_recovers(agent, device, model_server):
    model_server.add(
        plan("Look"), call("launch_rocket", target="moon"), call("finish_task", conclusion="nothing to do")
    )
    task = await agent.run(new_task(), device, 30_000, None)
    assert task.status is TaskStatus.FINISHED
    first = task.steps[0].tool_calls[0]
    assert (first.name, first.ok) == ("launch_rocket", False)
    assert "unknown tool 'launch_rocket'" in first.result
    tool_messages = [m for m in model_server.requests[-1]["messages"] if m["role"] == "tool"]
    assert "unknown tool 'launch_rocket'" in tool_messages[0]["content"]


async def test_coordinates_off_the_screen_are_refused_and_nothing_is_tapped(agent, device, model_server):
    model_server.add(
        plan("Tap"),
        call("tap", x=5000, y=10),
        bad_args("tap", '{"x": 1, '),
        call("finish_task", conclusion="ok"),
    )
    before = device.phone.state()["version"]
    task = await agent.run(new_task(), device, 30_000, None)
    assert task.status is TaskStatus.FINISHED
    off, broken = task.steps[0].tool_calls[:2]
    assert not off.ok and "off the screen (x=5000 is outside 0–460)" in off.result
    assert "461x1024 screenshot" in off.result
    assert not broken.ok and "not valid JSON" in broken.result
    assert "tap" not in device.calls
    assert device.phone.state()["version"] == before


async def test_the_phone_disconnecting_fails_the_task_clearly(agent, device, model_server):
    def unplug(request):
        device.disconnect()
        return call("tap", x=100, y=100)

    model_server.add(plan("Tap"), dynamic(unplug))
    task = await agent.run(new_task(), device, 30_000, None)
    assert task.status is TaskStatus.FAILED
    assert task.error == "The phone stopped answering: device offline: the phone was disconnected"
    assert task.steps[0].status is StepStatus.FAILED


async def test_repeating_an_action_without_effect_fails_the_step_and_replans(agent, device, model_server):
    model_server.add(plan("Tap the wallpaper"))
    model_server.add(*[call("tap", x=230, y=300) for _ in range(3)])
    model_server.add(
        plan("Open Settings instead"), tap_on("Settings"), call("finish_task", conclusion="Settings open")
    )
    task = await agent.run(new_task(), device, 30_000, None)
    assert task.status is TaskStatus.FINISHED, task.error
    assert [s.status for s in task.steps] == [StepStatus.FAILED, StepStatus.SUCCESS]
    assert "repeated 3 times without changing the screen" in task.steps[0].error
    assert all("(the screen did not change)" in c.result for c in task.steps[0].tool_calls)
    replan = model_server.requests[4]
    assert replan["tools"][0]["function"]["name"] == "submit_plan"
    assert "Step 1 failed" in str(replan["messages"])
    assert device.phone.state()["package"] == "com.android.settings"


async def test_step_budget_and_replans_are_bounded(settings, http, codec, device, model_server):
    config = AgentConfig(settle_ms=0, max_actions_per_step=2, max_replans=1, retry_delay_ms=10)
    agent = PlanAndResolveAgent(OpenAIChatModel(settings, http), codec, config=config)
    model_server.add(plan("A"), call("nope"), call("nope"), plan("B"), call("nope"), call("nope"))
    task = await agent.run(new_task(), device, 30_000, None)
    assert task.status is TaskStatus.FAILED
    assert task.error == "Step 2 (B) failed: the step did not finish within 2 actions"
    assert len(model_server.requests) == 6


async def test_no_plan_fails_after_bounded_tries(agent, device, model_server):
    model_server.add(call("tap", x=1, y=1), call("submit_plan", steps=[]), call("submit_plan", steps="x"))
    task = await agent.run(new_task(), device, 30_000, None)
    assert task.status is TaskStatus.FAILED
    assert task.error.startswith("The model gave no usable plan after 3 tries")


async def test_no_model_answers_the_no_model_error(codec, device):
    for source in (None, lambda: None):
        agent = PlanAndResolveAgent(source, codec)
        with pytest.raises(ToolError) as raised:
            await agent.run(new_task(), device, 1_000, None)
        assert raised.value.code is ErrorCode.NO_MODEL
        assert (
            str(raised.value) == "No model configured: open Settings in the page and choose a model provider."
        )
