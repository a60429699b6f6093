"""Real tasks on the simulated phone, driven by the scripted model over HTTP: the phone's state, not
the agent's word, says whether they were done."""

from __future__ import annotations

import io
import json
import re

from PIL import Image

from phone_agent.tasks import AgentTask, StepStatus, TaskStatus
from phone_agent.tools.dispatch import Caller, ToolDispatcher
from phone_agent.tools.spec import Channel
from tests.agent.model_server import (
    call,
    dynamic,
    element_point,
    message_script,
    plan,
    request_images,
    tap_on,
    tap_ref,
    text,
    wifi_script,
)


def new_task(goal: str) -> AgentTask:
    return AgentTask(id="task-1", goal=goal, created_at=0)


async def test_turn_wifi_on(agent, device, model_server):
    device.phone.set_wifi(False)
    model_server.add(*wifi_script())
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


async def test_the_agent_taps_and_types_by_ref_through_the_catalog_entries(agent, device, model_server):
    device.phone.set_bluetooth(False)
    model_server.add(
        plan("Turn Bluetooth on"),
        tap_ref("Settings"),
        tap_ref("Connected devices"),
        tap_ref("Bluetooth"),
        call("finish_task", conclusion="Bluetooth is on"),
    )
    task = await agent.run(new_task("Turn Bluetooth on"), device, 30_000, None)

    assert task.status is TaskStatus.FINISHED, task.error
    assert device.phone.state()["bluetooth"] is True
    taps = [c for c in task.steps[0].tool_calls if c.name == "tap"]
    assert [c.args["target"][:2] for c in taps] == ["@e", "@e", "@e"]
    assert all(c.ok and c.result.startswith("tapped at (") for c in taps)
    # The model is offered the catalog's own tap, which takes a target.
    offered = {tool["function"]["name"]: tool for tool in model_server.requests[1]["tools"]}
    assert "target" in offered["tap"]["function"]["parameters"]["properties"]
    assert "device pixels" not in json.dumps(offered)


async def test_send_message_to_zhang_san(agent, device, model_server):
    model_server.add(*message_script())
    task = await agent.run(new_task('Send "see you tomorrow" to Zhang San'), device, 30_000, None)

    assert task.status is TaskStatus.FINISHED, task.error
    assert device.phone.state()["sent"] == [{"to": "Zhang San", "text": "see you tomorrow"}]
    assert task.conclusion == "Sent"  # the last step's summary
    assert task.steps_completed == 2


async def test_extract_first_20_titles_of_the_long_list(agent, device, model_server):
    from phone_agent.sim.android.data import CATALOG_ITEMS
    from phone_agent.sim.android.screens import catalog_max_scroll

    titles = "\n".join(item.title for item in CATALOG_ITEMS[:20])
    model_server.add(
        plan("Open Catalog", "Extract the first 20 item titles"),
        call("open_app", packageName="com.phoneagent.catalog"),
        call("finish_step", summary="Catalog is open"),
        call(
            "extract_scrolling_content", "The list is long: I capture it.", instruction="the first 20 titles"
        ),
        text(titles),
    )
    task = await agent.run(new_task("Extract the first 20 item titles of the Catalog"), device, 30_000, None)

    assert task.status is TaskStatus.FINISHED, task.error
    assert task.conclusion == titles  # the extraction is the conclusion (the seed's special rule)
    assert device.phone.state()["catalog_scroll"] == catalog_max_scroll()  # it scrolled to the end
    extraction = model_server.requests[-1]
    assert "tools" not in extraction
    images = request_images(extraction)
    assert {image.width for image in images} == {720}
    # One long image of the whole list: screen height plus everything scrolled, found from the pixels.
    stitched = 2400 + catalog_max_scroll()
    assert f"stitched {stitched} px (reached the end)" in task.steps[1].tool_calls[0].result
    assert abs(sum(image.height for image in images) - stitched * 720 / 1080) <= len(images)


async def test_both_channels_report_the_task_with_live_progress(agent, device, model_server):
    context = ToolDispatcher()
    context.device, context.agent = device, agent
    device.phone.set_wifi(False)
    panel = []
    agent.subscribe(panel.append)
    script = [
        plan("Open Settings", "Turn Wi-Fi on"),
        call("open_app", "Settings is an app.", packageName="com.android.settings"),
        call("finish_step", summary="Settings is open"),
        tap_on("Network & internet", "The network page has Wi-Fi."),
        tap_on("Wi-Fi"),
        call("finish_step", summary="Wi-Fi is on"),
    ]
    model_server.add(*script)
    records, asked = [], []
    context.add_call_listener(records.append)

    async def allow(tool, args, caller):  # --confirm always, the person says yes
        asked.append((tool, caller))

    context.before_call = allow
    lines: list[str] = []
    result = await context.dispatch("run_agent_task", {"goal": "Turn Wi-Fi on"}, Channel.RELAY, lines.append)
    report = result["content"][0]["text"]
    # The agent's actions took the pipeline: asked about, and in the activity log under the task's call.
    task_call = records[-1]
    assert (task_call.tool, task_call.caller) == ("run_agent_task", Caller.MCP)
    assert [(r.tool, r.caller, r.parent) for r in records[:-1]] == [
        (tool, Caller.AGENT, task_call.call_id) for tool in ("open_app", "tap", "tap")
    ]
    assert asked == [("run_agent_task", Caller.MCP)] + [(t, Caller.AGENT) for t in ("open_app", "tap", "tap")]
    assert report.startswith("## ✅ Agent Task Completed\n\n**Goal**: Turn Wi-Fi on\n**Status**: finished")
    assert "**Steps**: 2/2 succeeded" in report and "**Conclusion**: Wi-Fi is on" in report
    assert '- `open_app({"packageName":"com.android.settings"})` → opened com.android.settings' in report
    assert device.phone.state()["wifi"] is True
    icons = [line.split(" ", 1)[0] for line in lines]
    # planned; step 1: a thought, two calls and their results, done; step 2 likewise with three calls
    assert icons == "💭 📋 ▶️ 💭 🔧 → 🔧 → ✅ ▶️ 💭 🔧 → 💭 🔧 → 🔧 → ✅".split()
    assert lines[-1].startswith("✅ Step 2 completed (success, duration ")
    assert any(event.kind == "done" and event.data["status"] == "finished" for event in panel)

    device.phone.set_wifi(False)
    model_server.add(*script)
    result = await context.dispatch("run_agent_task", {"goal": "Turn Wi-Fi on"}, Channel.WEBMCP)
    summary = result["structuredContent"]
    assert summary["status"] == "finished" and summary["stepsCompleted"] == 2 and summary["totalSteps"] == 2
    assert summary["conclusion"] == "Wi-Fi is on" and summary["error"] is None
    detail = await context.dispatch("get_task_result", {"taskId": summary["taskId"]}, Channel.WEBMCP)
    steps = detail["structuredContent"]["steps"]
    assert [s["status"] for s in steps] == ["success", "success"]
    assert steps[1]["toolCalls"][1]["result"].startswith("tapped at (")


async def test_a_text_only_model_drives_the_phone_in_ui_tars_and_autoglm_formats(agent, device, model_server):
    device.phone.set_wifi(False)
    # 0–1000 coordinates of the image: Settings, then Network & internet, then the Wi-Fi row.

    def normalised(label):
        def make(request):
            x, y = element_point(request, label)
            return text(
                f"Thought: I open {label}.\nAction: click(start_box='({x * 1000 // 461},{y * 1000 // 1024})')"
            )

        return dynamic(make)

    def autoglm(label):
        def make(request):
            x, y = element_point(request, label)
            return text(f'<answer>do(action="Tap", element=[{x * 1000 // 461}, {y * 1000 // 1024}])</answer>')

        return dynamic(make)

    model_server.add(
        text('{"name": "submit_plan", "arguments": {"steps": [{"title": "Turn Wi-Fi on"}]}}'),
        normalised("Settings"),
        autoglm("Network & internet"),
        normalised("Wi-Fi"),
        text("finished(content='Wi-Fi is on')"),
    )
    task = await agent.run(new_task("Turn Wi-Fi on"), device, 30_000, None)
    assert task.status is TaskStatus.FINISHED, task.error
    assert device.phone.state()["wifi"] is True
    assert task.conclusion == "Wi-Fi is on"
    # The text actions and their results went back to the model as plain messages.
    assert "Result of tap: tapped at (" in str(model_server.requests[-1]["messages"])


async def test_open_app_by_name_and_a_refused_package(agent, device, model_server):
    model_server.add(
        plan("Open the Catalog"),
        call("open_app", packageName="com.example.missing"),
        call("open_app", packageName="google"),
        call("open_app", packageName="catalog"),
        call("finish_step", summary="open"),
    )
    task = await agent.run(new_task("Open the Catalog"), device, 30_000, None)
    assert task.status is TaskStatus.FINISHED, task.error
    missing, ambiguous, found = task.steps[0].tool_calls[:3]
    assert not missing.ok and missing.result.startswith(
        "Error: No app 'com.example.missing' is installed on the phone. Call list_apps"
    )
    assert not ambiguous.ok and "matches several installed packages" in ambiguous.result
    assert found.ok and found.result == "opened com.phoneagent.catalog"
    assert device.phone.state()["package"] == "com.phoneagent.catalog"


async def test_a_step_starts_from_the_screen_the_previous_step_left():
    """Nothing acts on the phone between two steps: the next step reuses the last screenshot."""
    from phone_agent.agent.benchkit import InstantHttp, InstantPhone, NullCodec, script, sse_reply
    from phone_agent.agent.config import AgentConfig
    from phone_agent.agent.openai_client import OpenAIChatModel
    from phone_agent.agent.settings import ModelSettings
    from phone_agent.agent.task_runner import PlanAndResolveAgent
    from phone_agent.tasks import AgentTask, TaskStatus

    class CountingPhone(InstantPhone):
        shots = 0

        async def screenshot_png(self):
            self.shots += 1
            return await super().screenshot_png()

    steps, taps = 3, 2
    http = InstantHttp([sse_reply(name, args) for name, args in script(steps, taps)])
    settings = ModelSettings(base_url="http://model.invalid/v1", model="m", api_key="k")
    agent = PlanAndResolveAgent(OpenAIChatModel(settings, http), NullCodec(), config=AgentConfig(settle_ms=0))
    screen = io.BytesIO()
    Image.new("RGB", (1080, 2400), "white").save(screen, "PNG")
    phone = CountingPhone(screen.getvalue())
    task = AgentTask("t", "tap around", 0)
    await agent.run(task, phone, 60_000, None)
    assert task.status is TaskStatus.FINISHED, task.error
    # One for the plan, then one after each tap; none at a step's start.
    assert phone.shots == 1 + steps * taps


async def test_after_a_failed_extraction_the_model_sees_where_the_scrolling_left_the_screen(
    agent, device, model_server
):
    from phone_agent.sim.android.data import CATALOG_ITEMS

    model_server.add(
        plan("Open Catalog", "Extract the titles"),
        call("open_app", packageName="com.phoneagent.catalog"),
        call("finish_step", summary="Catalog is open"),
        call("extract_scrolling_content", instruction="all titles"),
        text(""),  # the extraction answers nothing
        call("fail_step", reason="nothing extracted"),
        plan("Give up"),
        call("finish_step", summary="gave up"),
    )
    task = await agent.run(new_task("Extract the Catalog's titles"), device, 30_000, None)

    assert task.status is TaskStatus.FINISHED, task.error
    failed = task.steps[1].tool_calls[0]
    assert not failed.ok and "extracted nothing" in failed.result
    # The turn after the failed extraction describes the scrolled-down list, not the first screen.
    after = json.dumps(model_server.requests[5])
    assert CATALOG_ITEMS[-1].title in after and CATALOG_ITEMS[0].title not in after
