"""The agent on the realistic phone (``--realistic``'s behaviours, without its costs: ``scale=0``): a
permission dialog on the Camera's first launch is recognised in the prompt and answered; a message is
typed and sent with the soft keyboard up (Messages' compose bar rides above it)."""

from __future__ import annotations

from phone_agent.agent.prompts import PERMISSION_NOTE
from phone_agent.sim.realistic import RealisticProfile
from phone_agent.tasks import AgentTask, TaskStatus
from tests.agent.model_server import call, dynamic, element_ref, last_user_text, message_script, plan

SIM_OPTIONS = {"realistic": RealisticProfile(3, scale=0.0)}


async def test_the_agent_answers_the_permission_dialog(agent, adb_device, sim, model_server):
    seen: list[str] = []

    def allow(request):
        prompt = last_user_text(request)
        seen.append(prompt)
        return call(
            "tap",
            "Camera asks for its permission: allow it.",
            target=element_ref(request, "While using the app"),
        )

    model_server.add(
        plan("Open the Camera"),
        call("open_app", packageName="com.google.android.GoogleCamera"),
        dynamic(allow),
        call("finish_task", conclusion="The Camera is open"),
    )
    task = await agent.run(AgentTask("p1", "Open the Camera", 0), adb_device, 60_000, None)
    assert task.status is TaskStatus.FINISHED, task.error
    assert PERMISSION_NOTE in seen[0]
    assert "com.google.android.permissioncontroller" in seen[0]
    state = sim.phone.state()
    assert state["permissions"] == {"com.google.android.GoogleCamera": "granted"}
    assert state["package"] == "com.google.android.GoogleCamera" and state["permission_dialog"] is None


async def test_the_agent_sends_a_message_with_the_keyboard_up(agent, adb_device, sim, model_server):
    model_server.add(*message_script())
    task = await agent.run(
        AgentTask("k1", 'Send "see you tomorrow" to Zhang San', 0), adb_device, 60_000, None
    )
    assert task.status is TaskStatus.FINISHED, task.error
    state = sim.phone.state()
    assert state["sent"] == [{"to": "Zhang San", "text": "see you tomorrow"}]
    assert state["keyboard"] is True  # the field kept its focus and the keyboard stayed up
    send = next(n for w in sim.phone.windows() for n in w.walk() if n.content_desc == "Send SMS")
    assert send.bounds[3] <= 2274 - 850  # above the keyboard
