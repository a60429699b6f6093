"""A phone that goes away while the agent waits on the model ends the task at once, failed, with the
reason: the page calls ``fail(reason)`` and does not wait for the model's answer or the time limit."""

from __future__ import annotations

import asyncio
import time

from phone_agent.tasks import AgentTask, StepStatus, TaskStatus
from tests.agent.model_server import call, plan, stall, tap_on
from tests.support import eventually


async def test_fail_while_the_model_thinks_ends_the_task_failed_at_once(agent, device, model_server):
    model_server.add(
        plan("Open Settings", "Wait for a sign"), tap_on("Settings"), call("finish_step", summary="open")
    )
    model_server.add(stall())
    task = AgentTask(id="task-gone", goal="Open Settings and wait", created_at=0)
    running = asyncio.ensure_future(agent.run(task, device, 60_000, None))

    async def waiting_on_the_model() -> bool:
        return len(model_server.requests) >= 4

    await eventually(waiting_on_the_model, timeout_s=10)
    started = time.monotonic()
    agent.fail("The phone was disconnected: the bridge closed.")
    ended = await asyncio.wait_for(running, 5)
    assert time.monotonic() - started < 1.5
    assert ended.status is TaskStatus.FAILED
    assert ended.error == "The phone was disconnected: the bridge closed."
    assert [s.status for s in ended.steps] == [StepStatus.SUCCESS, StepStatus.FAILED]


async def test_fail_with_no_task_running_does_nothing(agent):
    agent.fail("gone")
    agent.abort()
