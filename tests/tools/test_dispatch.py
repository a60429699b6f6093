"""ToolDispatcher.dispatch: what each tool answers, on both channels, with and without a phone.

The phone and the agent are given through their interfaces (STYLE.md: fakes of the small interfaces
the pure code depends on); the real ones are exercised by the interop and browser tests.
"""

import asyncio
import base64
import json

import pytest

from phone_agent.tasks import AgentStep, AgentTask, StepStatus, TaskStatus, close_out
from phone_agent.tools.dispatch import TASKS_KEPT, ToolDispatcher
from phone_agent.tools.spec import Channel

PNG = b"\x89PNG\r\n\x1a\nfake"


class ListedDevice:
    async def info(self):
        return {"model": "Pixel 7", "brand": "google", "release": "14", "sdk": "34"}

    async def screenshot_png(self):
        return PNG


class StepwiseAgent:
    """Plans one step, reports progress, and waits to be released or aborted."""

    def __init__(self):
        self.release = asyncio.Event()
        self.aborted = False

    async def run(self, task, device, timeout_ms, progress):
        task.move_to(TaskStatus.PLANNING, 1)
        task.steps.append(AgentStep(id="s1", index=1, title="Look", status=StepStatus.RUNNING, started_at=1))
        task.move_to(TaskStatus.EXECUTING, 2)
        if progress:
            progress(f"📋 plan with 1 step (budget {timeout_ms} ms)")
        while not self.release.is_set() and not self.aborted:
            await asyncio.sleep(0.001)
        step = task.steps[0]
        step.finished_at = 10
        if self.aborted:
            step.status = StepStatus.SKIPPED
            task.move_to(TaskStatus.ABORTED, 10)
        else:
            step.status = StepStatus.SUCCESS
            task.conclusion = "done"
            task.move_to(TaskStatus.FINISHED, 10)
        return task

    def abort(self):
        self.aborted = True


def text_of(result):
    return result["content"][0]["text"]


async def test_without_a_phone_every_tool_answers_honestly():
    ctx = ToolDispatcher()
    status = await ctx.dispatch("get_device_status", {}, Channel.RELAY)
    assert json.loads(text_of(status)) == {"connected": False}
    assert "isError" not in status
    for tool, args in [("take_screenshot", {}), ("run_agent_task", {"goal": "open settings"})]:
        result = await ctx.dispatch(tool, args, Channel.WEBMCP)
        assert result["isError"] is True
        assert text_of(result) == "No phone device connected."
        assert result["structuredContent"]["code"] == "no_device"
    abort = await ctx.dispatch("abort_task", {}, Channel.RELAY)
    assert text_of(abort) == "No task is currently running." and abort["isError"]
    unknown = await ctx.dispatch("get_task_result", {"taskId": "t-404"}, Channel.RELAY)
    assert unknown["isError"] and "t-404" in text_of(unknown)
    latest = await ctx.dispatch("get_latest_task", {}, Channel.RELAY)
    assert latest["isError"] and latest["structuredContent"]["code"] == "no_tasks"


async def test_bad_arguments_are_answered_before_anything_runs():
    ctx = ToolDispatcher()
    result = await ctx.dispatch("run_agent_task", {"goal": 1}, Channel.WEBMCP)
    assert result["structuredContent"]["code"] == "invalid_argument"
    assert result["structuredContent"]["details"]["field"] == "goal"
    unknown = await ctx.dispatch("format_phone", {}, Channel.RELAY)
    assert unknown["structuredContent"]["code"] == "unknown_tool"


async def test_with_a_phone_status_and_screenshot_come_from_it():
    ctx = ToolDispatcher()
    ctx.device = ListedDevice()
    status = await ctx.dispatch("get_device_status", {}, Channel.RELAY)
    assert json.loads(text_of(status)) == {
        "connected": True,
        "model": "Pixel 7",
        "brand": "google",
        "release": "14",
        "sdk": "34",
    }
    assert status["structuredContent"]["connected"] is True
    shot = await ctx.dispatch("take_screenshot", {}, Channel.WEBMCP)
    assert shot["content"][0]["mimeType"] == "image/png"
    assert base64.b64decode(shot["content"][0]["data"]) == PNG


async def test_no_model_is_a_clear_error():
    ctx = ToolDispatcher()
    ctx.device = ListedDevice()
    result = await ctx.dispatch("run_agent_task", {"goal": "x"}, Channel.RELAY)
    assert result["structuredContent"]["code"] == "no_model"
    assert "open Settings in the page" in text_of(result)


async def test_a_task_runs_alone_reports_progress_and_can_be_aborted():
    ctx = ToolDispatcher()
    ctx.device = ListedDevice()
    agent = StepwiseAgent()
    ctx.agent = agent
    seen = []
    run = asyncio.ensure_future(
        ctx.dispatch("run_agent_task", {"goal": "look"}, Channel.RELAY, progress=seen.append)
    )
    while not seen:
        await asyncio.sleep(0.001)
    assert seen == ["📋 plan with 1 step (budget 1200000 ms)"]
    assert ctx.is_running()
    busy = await ctx.dispatch("run_agent_task", {"goal": "again"}, Channel.RELAY)
    assert text_of(busy) == "Agent is already running. Please wait or call abort_task first."
    aborted = await ctx.dispatch("abort_task", {}, Channel.RELAY)
    assert text_of(aborted) == "Task aborted." and "isError" not in aborted
    report = text_of(await run)
    assert report.startswith("## ⏹️ Agent Task Aborted")
    assert not ctx.is_running()
    latest = json.loads(text_of(await ctx.dispatch("get_latest_task", {}, Channel.WEBMCP)))
    assert latest["status"] == "aborted" and latest["steps"][0]["status"] == "skipped"


async def test_channel_b_answers_json_and_uses_its_own_default_budget():
    ctx = ToolDispatcher()
    ctx.device = ListedDevice()
    agent = StepwiseAgent()
    agent.release.set()
    ctx.agent = agent
    seen = []
    result = await ctx.dispatch("run_agent_task", {"goal": "look"}, Channel.WEBMCP, progress=seen.append)
    summary = json.loads(text_of(result))
    assert summary["status"] == "finished" and summary["stepsCompleted"] == 1
    assert summary == result["structuredContent"]
    assert "budget 120000 ms" in seen[0]
    by_id = await ctx.dispatch(
        "get_task_result", {"taskId": summary["taskId"], "includeSteps": False}, Channel.RELAY
    )
    assert "steps" not in json.loads(text_of(by_id))


async def test_listeners_see_every_call_and_cannot_break_one(capsys):
    ctx = ToolDispatcher()
    records = []
    ctx.add_call_listener(records.append)
    ctx.add_call_listener(lambda record: 1 / 0)
    result = await ctx.dispatch("get_device_status", {}, Channel.WEBMCP)
    assert json.loads(text_of(result)) == {"connected": False}
    assert [(r.channel, r.tool) for r in records] == [(Channel.WEBMCP, "get_device_status")]
    assert "ZeroDivisionError" in capsys.readouterr().err


async def test_a_bug_in_a_tool_is_an_internal_error_result():
    class BrokenDevice(ListedDevice):
        async def screenshot_png(self):
            raise RuntimeError("wire fell out")

    ctx = ToolDispatcher()
    ctx.device = BrokenDevice()
    result = await ctx.dispatch("take_screenshot", {}, Channel.RELAY)
    assert result["isError"] and result["structuredContent"]["code"] == "internal_error"
    assert "wire fell out" in text_of(result)


def test_remembered_tasks_are_listed_in_order():
    ctx = ToolDispatcher()
    for n in range(3):
        ctx.remember_task(AgentTask(id=f"t{n}", goal="g", created_at=n))
    assert [t.id for t in ctx.get_all_tasks()] == ["t0", "t1", "t2"]
    assert ctx.get_task("t1").goal == "g"


def test_a_page_keeps_at_most_tasks_kept_the_oldest_finished_forgotten():
    ctx = ToolDispatcher()
    unfinished = AgentTask(id="still-running", goal="g", created_at=0)
    ctx.remember_task(unfinished)
    for n in range(TASKS_KEPT + 5):
        task = AgentTask(id=f"t{n}", goal="g", created_at=n + 1)
        close_out(task, TaskStatus.ABORTED, n + 1)
        ctx.remember_task(task)
    kept = [t.id for t in ctx.get_all_tasks()]
    assert len(kept) == TASKS_KEPT and "still-running" in kept
    assert kept[1:3] == ["t6", "t7"] and kept[-1] == f"t{TASKS_KEPT + 4}"


@pytest.mark.parametrize("channel", list(Channel))
async def test_cancellation_propagates_to_the_channel(channel):
    ctx = ToolDispatcher()
    ctx.device = ListedDevice()
    ctx.agent = StepwiseAgent()
    call = asyncio.ensure_future(ctx.dispatch("run_agent_task", {"goal": "x"}, channel))
    await asyncio.sleep(0.01)
    call.cancel()
    with pytest.raises(asyncio.CancelledError):
        await call
    assert not ctx.is_running()


async def test_a_phone_unplugged_mid_call_answers_no_phone():
    ctx = ToolDispatcher()
    started = asyncio.Event()

    class UnpluggedDevice(ListedDevice):
        async def screenshot_png(self):
            started.set()
            await asyncio.sleep(0.05)
            raise ConnectionError("USB transfer failed")

        async def info(self):
            started.set()
            await asyncio.sleep(0.05)
            raise ConnectionError("USB transfer failed")

    ctx.device = UnpluggedDevice()
    shot = asyncio.ensure_future(ctx.dispatch("take_screenshot", {}, Channel.RELAY))
    await started.wait()
    ctx.device = None  # what the page does when the phone goes away
    result = await shot
    assert text_of(result) == "No phone device connected."
    ctx.device = UnpluggedDevice()
    started.clear()
    status = asyncio.ensure_future(ctx.dispatch("get_device_status", {}, Channel.RELAY))
    await started.wait()
    ctx.device = None
    assert json.loads(text_of(await status)) == {"connected": False}


async def test_a_task_refused_before_it_starts_is_not_kept():
    class Unconfigured:
        async def run(self, task, device, timeout_ms, progress):
            from phone_agent.errors import ErrorCode, ToolError

            raise ToolError(
                ErrorCode.NO_MODEL,
                "No model configured: open Settings in the page and choose a model provider.",
            )

        def abort(self):
            pass

    ctx = ToolDispatcher()
    ctx.device = ListedDevice()
    ctx.agent = Unconfigured()
    result = await ctx.dispatch("run_agent_task", {"goal": "x"}, Channel.RELAY)
    assert result["structuredContent"]["code"] == "no_model"
    assert ctx.get_all_tasks() == [] and not ctx.is_running()
