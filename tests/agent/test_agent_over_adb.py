"""End to end over ADB: the agent drives the simulated phone through the project's own ADB client
(AdbDevice over TCP to the simulated adbd), and the phone's state says what happened."""

from __future__ import annotations

from phone_agent.sim.android.data import CATALOG_ITEMS
from phone_agent.sim.android.screens import catalog_max_scroll
from phone_agent.tasks import AgentTask, TaskStatus
from tests.agent.model_server import (
    call,
    dynamic,
    message_script,
    plan,
    request_images,
    text,
    wifi_script,
)


async def test_three_tasks_over_adb(agent, adb_device, sim, model_server):
    phone = sim.phone
    phone.set_wifi(False)
    model_server.add(*wifi_script())
    task = await agent.run(AgentTask("t1", "Turn Wi-Fi on", 0), adb_device, 60_000, None)
    assert task.status is TaskStatus.FINISHED, task.error
    assert phone.state()["wifi"] is True

    model_server.add(*message_script())
    task = await agent.run(
        AgentTask("t2", 'Send "see you tomorrow" to Zhang San', 0), adb_device, 60_000, None
    )
    assert task.status is TaskStatus.FINISHED, task.error
    assert phone.state()["sent"] == [{"to": "Zhang San", "text": "see you tomorrow"}]

    titles = "\n".join(item.title for item in CATALOG_ITEMS[:20])
    model_server.add(
        plan("Extract the first 20 item titles of the Catalog"),
        call("open_app", packageName="com.phoneagent.catalog"),
        call("extract_scrolling_content", instruction="the first 20 item titles"),
        text(titles),
    )
    task = await agent.run(
        AgentTask("t3", "Extract the first 20 Catalog titles", 0), adb_device, 60_000, None
    )
    assert task.status is TaskStatus.FINISHED, task.error
    assert task.conclusion == titles
    assert phone.state()["catalog_scroll"] == catalog_max_scroll()
    stitched = 2400 + catalog_max_scroll()
    assert f"stitched {stitched} px (reached the end)" in task.steps[0].tool_calls[-1].result
    images = request_images(model_server.requests[-1])
    assert abs(sum(image.height for image in images) - stitched * 720 / 1080) <= len(images)


async def test_the_phone_going_away_mid_task_fails_it_clearly(agent, adb_device, sim, model_server):
    import asyncio
    import time

    closing: list[asyncio.Future] = []

    def unplug(request):
        closing.append(asyncio.ensure_future(sim.close()))  # the phone goes away as the model answers
        return call("tap", x=100, y=100)

    model_server.add(plan("Tap"), dynamic(unplug))
    started = time.monotonic()
    task = await asyncio.wait_for(agent.run(AgentTask("t4", "Tap", 0), adb_device, 60_000, None), 30)
    await asyncio.wait(closing, timeout=5)
    assert task.status is TaskStatus.FAILED
    assert task.error.startswith("The phone stopped answering: "), task.error
    assert time.monotonic() - started < 20
