"""An agent task saved as a flow replays with no model: the agent (a scripted OpenAI-compatible model
server) turns Wi-Fi on and sends a message on the simulated phone; save_task_as_flow keeps each task as a
flow; the model server is stopped; the phone is put back; run_flow replays them to the same state, as
Debian's adb sees it."""

from __future__ import annotations

from phone_agent.agent.openai_client import OpenAIChatModel
from phone_agent.agent.task_runner import PlanAndResolveAgent
from phone_agent.flows.flow_reader import read_flow
from phone_agent.tasks import TaskStatus
from phone_agent.tools.spec import Channel
from tests.agent.conftest import FAST
from tests.agent.http_client import AsyncioHttpClient
from tests.agent.model_server import ScriptedModelServer, message_script, wifi_script
from tests.agent.pillow_codec import PillowCodec


async def test_saved_tasks_replay_to_the_same_state_with_no_model_server(dispatcher, sim, by_adb):
    model_server = await ScriptedModelServer().start()
    settings = model_server.settings(api_key="sk-test")
    model = OpenAIChatModel(settings, AsyncioHttpClient(), page_origin="http://127.0.0.1:7788")
    dispatcher.agent = PlanAndResolveAgent(model, PillowCodec(), config=FAST)
    dispatcher.image_codec = PillowCodec()
    sim.phone.set_wifi(False)
    try:
        model_server.add(*wifi_script())
        wifi = await dispatcher.dispatch("run_agent_task", {"goal": "Turn Wi-Fi on"}, Channel.RELAY)
        model_server.add(*message_script())
        sent = await dispatcher.dispatch(
            "run_agent_task", {"goal": 'Send "see you tomorrow" to Zhang San'}, Channel.RELAY
        )
    finally:
        await model_server.stop()
    tasks = dispatcher.get_all_tasks()
    assert [task.status for task in tasks] == [TaskStatus.FINISHED, TaskStatus.FINISHED], (wifi, sent)
    assert await by_adb.wifi_on() is True
    saved = []
    for task, name in zip(tasks, ("wifi on", "say see you"), strict=True):
        answer = await dispatcher.dispatch(
            "save_task_as_flow", {"taskId": task.id, "name": name}, Channel.WEBMCP
        )
        assert not answer.get("isError"), answer
        saved.append(answer["structuredContent"]["yaml"])
    wifi_flow, message_flow = (read_flow(text) for text in saved)
    assert [(c.name, c.args) for c in wifi_flow.commands] == [
        ("tapOn", {"text": "Settings"}),
        ("tapOn", {"text": "Network & internet"}),
        ("tapOn", {"text": "Wi-Fi"}),
    ]
    assert [c.name for c in message_flow.commands] == ["launchApp", "tapOn", "tapOn", "inputText", "tapOn"]
    assert message_flow.app_id == "com.google.android.apps.messaging"
    # Back to how it began; then the replays, with the model server gone.
    sim.phone.reset()
    sim.phone.set_wifi(False)
    for name in ("wifi on", "say see you"):
        await by_adb.shell("input keyevent KEYCODE_HOME")
        report = (await dispatcher.dispatch("run_flow", {"name": name}, Channel.RELAY))["structuredContent"]
        assert report["passed"] is True, report
    assert await by_adb.wifi_on() is True
    assert sim.phone.state()["sent"] == [{"to": "Zhang San", "text": "see you tomorrow"}]
    assert "see you tomorrow" in await by_adb.screen_texts()
