"""Real tasks on the simulated phone, driven by the scripted model over HTTP: the phone's state, not
the agent's word, says whether they were done."""

from __future__ import annotations

import asyncio
import json
import re

from phone_agent.agent import PlanAndResolveAgent
from phone_agent.context import McpServiceContext
from phone_agent.tasks import AgentTask, StepStatus, TaskStatus
from phone_agent.tools import Channel
from tests.agent.model_server import (
    call,
    plan,
    request_images,
    tap_on,
)


def new_task(goal: str) -> AgentTask:
    return AgentTask(id="task-1", goal=goal, created_at=0)


async def test_turn_wifi_on(agent, device, model_server):
    device.phone.set_wifi(False)
    model_server.add(
        plan("Open Settings", "Turn Wi-Fi on"),
        tap_on("Settings"),
        call("finish_step", summary="Settings is open"),
        tap_on("Network & internet"),
        tap_on("Wi-Fi"),
        call("finish_task", conclusion="Wi-Fi is on"),
    )
    task = await agent.run(new_task("Turn Wi-Fi on"), device, 30_000, None)

    assert task.status is TaskStatus.FINISHED, task.error
    assert device.phone.state()["wifi"] is True
    assert task.conclusion == "Wi-Fi is on"
    assert [s.status for s in task.steps] == [StepStatus.SUCCESS, StepStatus.SUCCESS]
    assert [c.name for c in task.steps[1].tool_calls] == ["tap", "tap", "finish_task"]
    assert task.steps[0].tool_calls[0].result.startswith("tapped at (")
    # The prompt states the image's size and the image sent has exactly that size.
    request = model_server.requests[1]
    size = re.search(r"screenshot (\d+)x(\d+) pixels", json.dumps(request)).groups()
    (image,) = request_images(request)
    assert image.size == (int(size[0]), int(size[1])) == (461, 1024)
    assert task.steps[0].before_screenshot.startswith("data:image/jpeg;base64,")
    assert all(r["tools"] for r in model_server.requests)


async def test_send_message_to_zhang_san(agent, device, model_server):
    model_server.add(
        plan("Open Messages", "Open the chat with Zhang San", "Send the message"),
        call("open_app", packageName="com.google.android.apps.messaging"),
        call("finish_step", summary="Messages is open"),
        tap_on("Zhang San"),
        call("finish_step", summary="The chat is open"),
        tap_on("Text message"),
        call("type_text", text="see you tomorrow"),
        tap_on("Send SMS"),
        call("finish_step", summary="Sent 'see you tomorrow' to Zhang San"),
    )
    task = await agent.run(new_task('Send "see you tomorrow" to Zhang San'), device, 30_000, None)

    assert task.status is TaskStatus.FINISHED, task.error
    assert device.phone.state()["sent"] == [{"to": "Zhang San", "text": "see you tomorrow"}]
    assert task.conclusion == "Sent 'see you tomorrow' to Zhang San"
    assert task.steps_completed == 3
