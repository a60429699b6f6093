"""A phone that goes away while the agent waits on the model ends the task at once, failed, with the
reason: the page calls ``fail(reason)`` and does not wait for the model's answer or the time limit.

"At once" is shown by what happened, not by a stopwatch: the task ends with the page's reason while
the model's reply is still stalled (no idle time-out, no retry, no later request), so the machine's
load cannot make it pass or fail."""

from __future__ import annotations

import asyncio

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
    asked = len(model_server.requests)
    agent.fail("The phone was disconnected: the bridge closed.")
    ended = await asyncio.wait_for(running, 10)  # a bound against a hang, not the measure
    # Ended by fail() itself: the stalled reply's idle limit (2 s, then one retry) would have said
    # otherwise and asked the model again.
    assert len(model_server.requests) == asked
    assert ended.status is TaskStatus.FAILED
    assert ended.error == "The phone was disconnected: the bridge closed."
    assert [s.status for s in ended.steps] == [StepStatus.SUCCESS, StepStatus.FAILED]


async def test_fail_with_no_task_running_does_nothing(agent, device, model_server):
    """fail() and abort() with no task leave nothing behind: the next task runs as if neither was
    called (neither its status nor its error carries the stale reason) and records no abort."""
    agent.fail("gone")
    agent.abort()
    model_server.add(plan("Open Settings"), tap_on("Settings"), call("finish_task", conclusion="open"))
    task = await asyncio.wait_for(
        agent.run(AgentTask(id="task-after", goal="Open Settings", created_at=0), device, 30_000, None), 30
    )
    assert task.status is TaskStatus.FINISHED, task.error
    assert task.error is None
    assert task.conclusion == "open"
    assert [s.status for s in task.steps] == [StepStatus.SUCCESS]
