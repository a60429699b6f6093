"""run_agent_task for real in the page: the Plan-and-Resolve agent in Pyodide, asking the scripted
OpenAI-compatible model server over ``fetch`` (streamed SSE, CORS), scaling and stitching screenshots
with the canvas codec, driving the simulated phone over the server's ADB bridge.

One page is booted for the module (``phone-agent serve --model-base-url … --model scripted``, so the
model comes from the server's defaults); Channel A tests start ``phone-agent mcp`` as a separate
relay the page reaches with ``?relay=``. Results are checked by the phone's state, not by the agent's
word.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from phone_agent.browser.task_history import INTERRUPTED_ERROR
from phone_agent.sim.android.data import CATALOG_ITEMS
from phone_agent.sim.android.screens import catalog_max_scroll
from phone_agent.sim.server import SimulatedPhoneServer
from tests.agent.model_server import (
    ScriptedModelServer,
    call,
    dynamic,
    malformed,
    message_script,
    plan,
    request_images,
    silent,
    stall,
    stalling_script,
    status,
    text,
)
from tests.agent.model_server import wifi_script as model_wifi_script
from tests.browser.rigs import AgentRig as Rig
from tests.browser.rigs import AgentRigSpec
from tests.support import eventually, free_port, mcp_stdio_session, open_page, result_text, webmcp_call

pytestmark = pytest.mark.browser

RIG = AgentRigSpec()
API_KEY = RIG.api_key


def wifi_script() -> list:
    return model_wifi_script("The Settings app is on the home screen.")


async def test_the_server_hands_the_page_its_model_and_the_builtin_model_is_reported(fresh: Rig):
    page = fresh.page
    state = await page.text_content("#settings-state")
    assert state.startswith("Using scripted at " + fresh.model.base_url), state
    assert "API key set" in state and API_KEY not in state
    assert await page.get_attribute("#settings-state", "data-source") == "server"
    builtin = page.locator("#settings-builtin")

    async def checked() -> bool:
        return await builtin.get_attribute("data-availability") == "unavailable"

    await eventually(checked)
    assert "unavailable in this browser" in await builtin.text_content()
    # The key is in the page's config (the page needs it) but never shown in a field or the log.
    assert await page.input_value("#settings-api-key") == ""


async def test_turn_wifi_on_through_webmcp(fresh: Rig):
    fresh.sim.phone.set_wifi(False)
    fresh.model.add(*wifi_script())
    preflights = fresh.model.preflights
    answer = await fresh.webmcp_json("run_agent_task", {"goal": "Turn Wi-Fi on"})
    assert answer["status"] == "finished", answer
    assert answer["conclusion"] == "Wi-Fi is on"
    assert (answer["stepsCompleted"], answer["totalSteps"], answer["error"]) == (2, 2, None)
    assert fresh.sim.phone.state()["wifi"] is True
    # The model was asked with the server's key, streaming, with a screenshot the canvas scaled.
    assert fresh.model.headers[0]["authorization"] == f"Bearer {API_KEY}"
    assert all(request.get("stream") is True for request in fresh.model.requests)
    # CORS: the page was let in by a preflight, which the browser then keeps (Access-Control-Max-Age):
    # not one OPTIONS round trip per model request.
    assert fresh.model.preflights >= 1
    assert len(fresh.model.requests) == len(wifi_script()) and fresh.model.preflights - preflights <= 1

    # The chat panel showed the task live, whoever started it.
    task = fresh.page.locator(f'.chat-task[data-task-id="{answer["taskId"]}"]')
    assert await task.get_attribute("data-status") == "finished"
    lines = await task.locator(".chat-line").all_text_contents()
    assert lines[0].startswith("💭 Planning the steps.")
    assert lines[1].startswith("📋 Execution plan generated (2 steps total)")
    assert any(line.startswith("▶️ Step 1: Open Settings") for line in lines)
    assert any(line.startswith("💭 The Settings app is on the home screen.") for line in lines)
    assert any(line.startswith('🔧 Calling tap({"x":') for line in lines)
    assert any(line.startswith("✅ Step 2 completed (success") for line in lines)
    assert "WebMCP" in await task.locator(".chat-task__origin").text_content()

    fresh.finished_ids.append(answer["taskId"])
    latest = await fresh.webmcp_json("get_latest_task", {})
    assert latest["taskId"] == answer["taskId"] and latest["status"] == "finished"
    assert [step["status"] for step in latest["steps"]] == ["success", "success"]


async def test_a_finished_task_saved_as_a_flow_from_its_button_replays_with_no_model_call(fresh: Rig):
    assert fresh.finished_ids, "the Wi-Fi test ran first and finished a task"
    task = fresh.page.locator(f'.chat-task[data-task-id="{fresh.finished_ids[0]}"]')
    await task.locator(".chat-task__save-flow").click()
    await fresh.page.wait_for_selector('#flow-list li[data-flow="Turn Wi-Fi on (task)"]', timeout=10_000)
    saved = await fresh.webmcp("get_flow", {"name": "Turn Wi-Fi on (task)"})
    assert "- tapOn: Wi-Fi\n" in saved["structuredContent"]["yaml"], saved
    fresh.sim.phone.set_wifi(False)
    replay = await fresh.webmcp("run_flow", {"name": "Turn Wi-Fi on (task)"})
    assert replay["structuredContent"]["passed"] is True, replay
    assert fresh.sim.phone.state()["wifi"] is True
    assert fresh.model.requests == []  # the replay asked no model anything


async def test_the_page_own_settings_win_and_can_ask_for_whole_answers(fresh: Rig):
    page = fresh.page
    fresh.sim.phone.set_wifi(False)
    fresh.model.add(*wifi_script())
    await page.fill("#settings-base-url", fresh.model.base_url)
    await page.fill("#settings-model", "scripted-whole")
    await page.uncheck("#settings-stream")
    await page.click("#settings-save")
    try:

        async def from_page() -> bool:
            return await page.get_attribute("#settings-state", "data-source") == "page"

        await eventually(from_page)
        assert "whole answers (no streaming)" in await page.text_content("#settings-state")
        answer = await fresh.webmcp_json("run_agent_task", {"goal": "Turn Wi-Fi on"})
        assert answer["status"] == "finished", answer
        assert fresh.sim.phone.state()["wifi"] is True
        assert {request["model"] for request in fresh.model.requests} == {"scripted-whole"}
        assert not any(request.get("stream") for request in fresh.model.requests)
        assert "authorization" not in fresh.model.headers[0]  # the page's settings have no key
    finally:
        await page.click("#settings-clear")

    async def cleared() -> bool:
        return await page.get_attribute("#settings-state", "data-source") == "server"

    await eventually(cleared)
    assert await page.is_checked("#settings-stream")


async def test_send_a_message_through_the_relay_with_ordered_progress(fresh: Rig):
    fresh.model.add(*message_script("I open Messages."))
    progressed: list[tuple[float, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progressed.append((value, message))

    async def allow() -> str:
        # Sending is a sensitive action: the page asks the person first (Settings: on by default).
        await fresh.page.wait_for_selector("#confirm", state="visible", timeout=20_000)
        asked = await fresh.page.text_content("#confirm-action")
        await fresh.page.click("#confirm-yes")
        return asked

    async with fresh.relayed() as session:
        person = asyncio.ensure_future(allow())
        result = await session.call_tool(
            "run_agent_task", {"goal": 'Send "see you tomorrow" to Zhang San'}, progress_callback=on_progress
        )
    assert "Send SMS" in await person and "sending a message" in person.result()
    report = result_text(result)
    assert result.is_error is not True, report
    assert report.startswith("## ✅ Agent Task Completed"), report
    assert '**Goal**: Send "see you tomorrow" to Zhang San' in report
    assert "**Steps**: 2/2 succeeded" in report
    assert "### ✅ Step 2: Send the message" in report
    assert '`type_text({"text":"see you tomorrow"})`' in report
    assert fresh.sim.phone.state()["sent"] == [{"to": "Zhang San", "text": "see you tomorrow"}]

    values = [value for value, _ in progressed]
    assert values == sorted(values) and len(set(values)) == len(values) and values[0] == 1
    messages = [message or "" for _, message in progressed]
    assert messages[0].startswith("💭 Planning the steps.")
    assert messages[1].startswith("📋 Execution plan generated (2 steps total)\n1. Open the chat")
    assert "💭 I open Messages." in messages
    assert '🔧 Calling open_app({"packageName":"com.google.android.apps.messaging"})' in messages
    assert messages[-1].startswith("✅ Step 2 completed (success, duration")
    assert any(m.startswith("Waiting for you: allow tap Send SMS") for m in messages), messages
    # Thinking is buffered: never one notification per token.
    assert not any(message.strip() in ("💭 I", "💭 open") for message in messages)
    origin = fresh.page.locator(".chat-task").first.locator(".chat-task__origin")
    assert await origin.text_content() == "MCP client"


async def test_extract_the_first_20_catalog_titles_without_a_progress_token(fresh: Rig):
    titles = "\n".join(item.title for item in CATALOG_ITEMS[:20])
    fresh.model.add(
        plan("Extract the first 20 item titles of the Catalog"),
        call("open_app", packageName="com.phoneagent.catalog"),
        call("extract_scrolling_content", instruction="the first 20 item titles"),
        text(titles),
    )
    logged: list[str] = []

    async def on_log(params) -> None:
        logged.append(str(params.data))

    async with fresh.relayed(logging_callback=on_log) as session:
        result = await session.call_tool("run_agent_task", {"goal": "Extract the first 20 Catalog titles"})
        latest = json.loads(result_text(await session.call_tool("get_latest_task", {})))
    report = result_text(result)
    assert report.startswith("## ✅ Agent Task Completed"), report
    assert latest["conclusion"] == titles
    assert fresh.sim.phone.state()["catalog_scroll"] == catalog_max_scroll()
    stitched = 2400 + catalog_max_scroll()
    extraction = latest["steps"][0]["toolCalls"][-1]["result"]
    assert f"stitched {stitched} px (reached the end)" in extraction, extraction
    # The stitched pages the model got, made by the page's canvas: 720 px wide, all rows there.
    images = request_images(fresh.model.requests[-1])
    assert {image.width for image in images} == {720}
    assert abs(sum(image.height for image in images) - stitched * 720 / 1080) <= len(images)
    assert any(line.startswith("📋 Execution plan generated") for line in logged), logged
    assert any(line.startswith("🔧 Calling extract_scrolling_content") for line in logged)


BUSY = "Agent is already running. Please wait or call abort_task first."


async def test_a_person_runs_a_goal_in_the_panel_and_aborts_it(fresh: Rig):
    page = fresh.page
    fresh.model.add(*stalling_script())
    await page.fill("#agent-goal", "Open Settings and wait")
    await page.click("#agent-run")
    await fresh.running()
    await fresh.requests_at_least(4)  # step 2's model turn is streaming (and stalls)
    task = page.locator(".chat-task").first
    assert await task.locator(".chat-task__origin").text_content() == "this page"
    await eventually(lambda: _has_line(task, "▶️ Step 2: Wait for the model"))

    # One task at a time, on either channel.
    second = await fresh.webmcp("run_agent_task", {"goal": "Another goal"})
    assert second["isError"] is True and second["content"][0]["text"] == BUSY

    started = time.monotonic()
    await page.click("#agent-abort")
    await fresh.idle()
    elapsed = time.monotonic() - started
    assert elapsed < 1.5, f"the abort took {elapsed:.2f} s"
    latest = await fresh.webmcp_json("get_latest_task", {})
    assert latest["status"] == "aborted" and latest["error"] == "Aborted by abort_task."
    assert [step["status"] for step in latest["steps"]] == ["success", "failed"]
    assert latest["steps"][0]["toolCalls"][0]["name"] == "tap"
    assert await task.get_attribute("data-status") == "aborted"
    assert "⏹️ Task aborted: Aborted by abort_task." in await task.locator(".chat-task__end").text_content()


async def _has_line(task, prefix: str) -> bool:
    lines = await task.locator(".chat-line").all_text_contents()
    return any(line.startswith(prefix) for line in lines)


async def test_abort_task_stops_a_webmcp_task_within_a_second(fresh: Rig):
    fresh.model.add(*stalling_script())
    run = asyncio.ensure_future(fresh.webmcp("run_agent_task", {"goal": "Open Settings and wait"}))
    await fresh.requests_at_least(4)
    started = time.monotonic()
    aborted = await fresh.webmcp("abort_task", {})
    assert aborted["content"][0]["text"] == "Task aborted."
    answer = json.loads((await asyncio.wait_for(run, 10))["content"][0]["text"])
    assert time.monotonic() - started < 1.5
    assert answer["status"] == "aborted" and answer["error"] == "Aborted by abort_task."
    assert (answer["stepsCompleted"], answer["totalSteps"]) == (1, 2)
    again = await fresh.webmcp("abort_task", {})
    assert again["isError"] is True and again["content"][0]["text"] == "No task is currently running."


def count_screencaps(sim: SimulatedPhoneServer) -> tuple[list[int], object]:
    """Count the sim's ``screencap`` runs from now on; returns the counter and the original ``run``."""
    original = sim.phone.run
    count = [0]

    def run(argv, stdin, fs):
        if argv and argv[0] == "screencap":
            count[0] += 1
        return original(argv, stdin, fs)

    sim.phone.run = run
    return count, original


async def test_while_a_task_runs_the_live_view_shows_the_agent_screens_and_takes_none(fresh: Rig):
    page = fresh.page
    count, original = count_screencaps(fresh.sim)
    await page.check("#live-toggle")
    try:
        await eventually(lambda: _live_fps(page))  # the live view takes its own screenshots
        fresh.model.add(*stalling_script())
        run = asyncio.ensure_future(fresh.webmcp("run_agent_task", {"goal": "Open Settings and wait"}))
        await fresh.requests_at_least(4)  # step 2's model turn stalls
        assert await page.text_content("#fps") == "the agent's view"
        # It shows the agent's last screenshot: Settings, opened by step 1's tap.
        shown = await page.evaluate(SHOWN_SCREEN_SIZE)
        assert shown == [1080, 2400], shown
        before = count[0]
        await asyncio.sleep(1.5)  # a free-running live view takes ~20 screenshots a second here
        assert count[0] == before, "the live view took screenshots while the agent ran"
        await fresh.webmcp("abort_task", {})
        await asyncio.wait_for(run, 10)
        await eventually(lambda: _live_fps(page))  # and takes its own again once the task ended
        assert count[0] > before
    finally:
        await page.uncheck("#live-toggle")
        fresh.sim.phone.run = original


SHOWN_SCREEN_SIZE = """async () => {
  const image = document.getElementById("screen");
  await image.decode();
  return [image.naturalWidth, image.naturalHeight];
}"""


async def _live_fps(page) -> bool:
    return (await page.text_content("#fps") or "").endswith("fps")


async def test_a_relay_cancel_aborts_the_task(fresh: Rig):
    fresh.model.add(*stalling_script())
    args = fresh.relay_args("--tool-timeout", "run_agent_task=2500")
    async with mcp_stdio_session(*args) as session:
        await fresh.relay_connected()
        result = await session.call_tool("run_agent_task", {"goal": "Open Settings and wait"})
        assert result.is_error is True
        assert result_text(result) == 'Tool "run_agent_task" timed out after 2500ms'
        await fresh.idle()  # the server's cancel frame reached the page and stopped the task
        latest = json.loads(result_text(await session.call_tool("get_latest_task", {})))
    assert latest["status"] == "aborted" and latest["error"] == "Cancelled by the caller."
    assert [step["status"] for step in latest["steps"]] == ["success", "failed"]


START_WITH_SIGNAL = """async (goal) => {
  const mc = document.modelContext;
  const tool = (await mc.getTools()).find((t) => t.name === "run_agent_task");
  window.__agentCall = new AbortController();
  window.__agentResult = mc.executeTool(tool, {goal}, {signal: window.__agentCall.signal}).then(
    (text) => ({text}), (error) => ({error: String(error)}));
}"""


async def test_a_webmcp_caller_cancelling_its_signal_aborts_the_task(fresh: Rig):
    # What an in-page agent does: executeTool with an AbortSignal, then abort it.
    fresh.model.add(*stalling_script())
    await fresh.page.evaluate(START_WITH_SIGNAL, "Open Settings and wait")
    await fresh.requests_at_least(4)
    started = time.monotonic()
    await fresh.page.evaluate("window.__agentCall.abort()")
    await fresh.idle()
    assert time.monotonic() - started < 1.5
    outcome = await fresh.page.evaluate("window.__agentResult")
    assert outcome, outcome  # settled (Chrome answers the cancelled call itself)
    latest = await fresh.webmcp_json("get_latest_task", {})
    assert latest["status"] == "aborted" and latest["error"] == "Cancelled by the caller."
    assert [step["status"] for step in latest["steps"]] == ["success", "failed"]


async def test_a_small_timeout_ends_the_task_aborted(fresh: Rig):
    fresh.model.add(*stalling_script())
    started = time.monotonic()
    answer = await fresh.webmcp_json("run_agent_task", {"goal": "Open Settings and wait", "timeoutMs": 1500})
    elapsed = time.monotonic() - started
    assert answer["status"] == "aborted" and answer["error"] == "Timed out after 1500 ms."
    assert answer["stepsCompleted"] == 1
    assert 1.4 < elapsed < 3.5, elapsed


async def test_the_model_answering_http_500_fails_the_task_clearly(fresh: Rig):
    body = '{"error": {"message": "the GPU caught fire"}}'
    fresh.model.add(status(500, body), status(500, body))  # one retry, then the task fails
    answer = await fresh.webmcp_json("run_agent_task", {"goal": "Turn Wi-Fi on"})
    assert answer["status"] == "failed"
    assert answer["error"].startswith("Model error: OpenAI-compatible server (")
    assert "failed (HTTP 500): the GPU caught fire." in answer["error"]
    assert len(fresh.model.requests) == 2
    # The page says the error once, in the task's end line; the status line says how it ended.
    task = fresh.page.locator(f'.chat-task[data-task-id="{answer["taskId"]}"]')
    await task.locator(".chat-task__end").wait_for(timeout=10_000)
    assert (await task.text_content() or "").count("the GPU caught fire") == 1
    assert "the GPU caught fire" in (await task.locator(".chat-task__end").text_content() or "")
    assert await fresh.page.text_content("#agent-state") == "❌ Task failed."


SET_PAGE_PARAMS = """(params) => {
  const url = new URL(location.href);
  for (const [name, value] of Object.entries(params)) {
    if (value === null) url.searchParams.delete(name); else url.searchParams.set(name, value);
  }
  history.replaceState(null, "", url);
}"""


async def test_a_model_gone_silent_fails_the_task_at_the_page_limits(fresh: Rig):
    # "Nothing for a minute", in small: the page's limits (?modelIdleMs=, ?modelTimeoutMs=, read at
    # each task's start) are set low; each silence is retried once, then the task fails and says why.
    page = fresh.page
    await page.evaluate(SET_PAGE_PARAMS, {"modelIdleMs": "1500", "modelTimeoutMs": "1500"})
    try:
        fresh.model.add(stall(), stall())  # headers and a first chunk, then nothing
        started = time.monotonic()
        answer = await fresh.webmcp_json("run_agent_task", {"goal": "Turn Wi-Fi on"})
        elapsed = time.monotonic() - started
        assert answer["status"] == "failed", answer
        assert "stopped sending its answer: nothing arrived for 1.5 s." in answer["error"]
        assert 3 < elapsed < 15, elapsed  # two limits and the retry's pause, not a minute

        fresh.model.add(silent(), silent())  # not even the headers
        answer = await fresh.webmcp_json("run_agent_task", {"goal": "Turn Wi-Fi on"})
        assert answer["status"] == "failed", answer
        assert answer["error"].endswith("did not answer within 1.5 s."), answer
    finally:
        await page.evaluate(SET_PAGE_PARAMS, {"modelIdleMs": None, "modelTimeoutMs": None})


async def test_bad_answers_go_back_to_the_model_and_malformed_json_fails_the_task(fresh: Rig):
    fresh.model.add(
        plan("Tap"),
        call("fly", to="the moon"),
        call("tap", x=5000, y=5000),
        call("finish_task", conclusion="recovered"),
    )
    answer = await fresh.webmcp_json("run_agent_task", {"goal": "Tap"})
    assert answer["status"] == "finished" and answer["conclusion"] == "recovered"
    calls = (await fresh.webmcp_json("get_task_result", {"taskId": answer["taskId"]}))["steps"][0][
        "toolCalls"
    ]
    assert [(c["name"], c["ok"]) for c in calls] == [("fly", False), ("tap", False), ("finish_task", True)]
    assert calls[0]["result"].startswith("Error: unknown tool 'fly'")
    assert "off the screen" in calls[1]["result"]

    fresh.model.add(malformed(), malformed())  # retried once, then the task fails
    answer = await fresh.webmcp_json("run_agent_task", {"goal": "Tap"})
    assert answer["status"] == "failed" and "malformed JSON" in answer["error"], answer


async def test_a_provider_without_cors_fails_with_advice(fresh: Rig):
    page = fresh.page
    no_cors = await ScriptedModelServer().start()  # sends no Access-Control-Allow-Origin at all
    try:
        await page.select_option("#settings-provider", "custom")
        await page.fill("#settings-base-url", no_cors.base_url)
        await page.fill("#settings-model", "no-cors-model")
        await page.click("#settings-save")

        async def from_page() -> bool:
            return await page.get_attribute("#settings-state", "data-source") == "page"

        await eventually(from_page)
        assert "no-cors-model at " + no_cors.base_url in await page.text_content("#settings-state")
        answer = await fresh.webmcp_json("run_agent_task", {"goal": "Turn Wi-Fi on"})
        assert answer["status"] == "failed"
        error = answer["error"]
        assert (
            f"Could not reach the OpenAI-compatible server model no-cors-model at {no_cors.base_url}" in error
        )
        assert "Failed to fetch" in error
        assert f"does not allow requests from {fresh.served.base} (CORS)" in error
        assert f"OLLAMA_ORIGINS={fresh.served.base}" in error
        assert no_cors.requests == []  # the browser stopped at the preflight
    finally:
        await page.click("#settings-clear")
        await no_cors.stop()

    async def from_server() -> bool:
        return await page.get_attribute("#settings-state", "data-source") == "server"

    await eventually(from_server)


async def test_chrome_builtin_model_where_it_cannot_run_says_so(fresh: Rig):
    page = fresh.page
    await page.select_option("#settings-provider", "chrome")
    assert await page.is_disabled("#settings-base-url")
    await page.click("#settings-save")
    try:

        async def from_page() -> bool:
            return await page.get_attribute("#settings-state", "data-source") == "page"

        await eventually(from_page)
        assert (
            await page.text_content("#settings-state") == "Using Chrome built-in model — from these settings."
        )
        answer = await fresh.webmcp_json("run_agent_task", {"goal": "Turn Wi-Fi on"})
        assert answer["status"] == "failed"
        assert answer["error"].startswith(
            "Model error: Chrome's built-in model is unavailable in this browser"
        )
        assert "Choose an OpenAI-compatible provider in Settings instead." in answer["error"]
        assert fresh.model.requests == []
    finally:
        await page.click("#settings-clear")

    async def from_server() -> bool:
        return await page.get_attribute("#settings-state", "data-source") == "server"

    await eventually(from_server)
    assert not await page.is_disabled("#settings-base-url")


async def test_the_phone_going_away_mid_task_fails_it_clearly(fresh: Rig):
    page = fresh.page
    other = SimulatedPhoneServer("127.0.0.1", free_port(), auth="accept")
    await other.start()
    closing: list[asyncio.Future] = []
    try:
        await page.fill("#tcp-target", f"127.0.0.1:{other.port}")
        await page.click("#connect-tcp-button")

        async def on_other() -> bool:
            status = await fresh.webmcp_json("get_device_status", {})
            return status.get("serial") == other.serial

        await eventually(on_other, timeout_s=20)

        def unplug(request):
            closing.append(asyncio.ensure_future(other.close()))  # gone as the model answers
            return call("tap", x=100, y=100)

        fresh.model.add(plan("Tap"), dynamic(unplug))
        started = time.monotonic()
        answer = await fresh.webmcp_json("run_agent_task", {"goal": "Tap the screen"})
        assert time.monotonic() - started < 20
        assert answer["status"] == "failed"
        assert answer["error"].startswith("The phone stopped answering: "), answer["error"]
        status_now = await fresh.webmcp_json("get_device_status", {})
        assert status_now == {"connected": False}
    finally:
        await asyncio.wait(closing, timeout=5) if closing else None
        await other.close()
        await page.fill("#tcp-target", f"127.0.0.1:{fresh.sim.port}")
        await page.click("#connect-tcp-button")
        await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=30_000)


async def test_no_model_configured_is_a_clear_error(browser, served, rig: Rig):
    # The session's plain `phone-agent serve` hands no model; this page has no Settings of its own.
    url = f"{served.base}/?device=tcp:127.0.0.1:{rig.sim.port}"
    async with open_page(browser, url) as (page, _watch):
        await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=30_000)
        await page.uncheck("#live-toggle")
        assert await page.get_attribute("#settings-state", "data-source") == "none"
        result = await webmcp_call(page, "run_agent_task", {"goal": "Turn Wi-Fi on"})
        assert result["isError"] is True
        text_ = result["content"][0]["text"]
        assert text_ == "No model configured: open Settings in the page and choose a model provider."
        latest = await webmcp_call(page, "get_latest_task", {})
        assert latest["isError"] is True  # the refused call left no task behind
        await page.fill("#agent-goal", "Turn Wi-Fi on")
        await page.click("#agent-run")
        # said once, where the task would be, in the page's words, with the remedy
        refused = page.locator('.chat-task[data-status="refused"]')
        await refused.wait_for(timeout=10_000)
        end = await refused.locator(".chat-task__end").text_content() or ""
        assert end.startswith("❌ Not started: No model configured: choose a model provider"), end
        assert "Settings (on this page)" in end and "open Settings in the page" not in end
        assert await page.locator("#agent-empty").count() == 0  # no "No task yet" after it
        await eventually(lambda: _state_is(page, "❌ Not started (see the task list)."))


async def _state_is(page, wanted: str) -> bool:
    return await page.text_content("#agent-state") == wanted


async def test_tasks_survive_a_reload_and_a_running_task_comes_back_aborted(fresh: Rig):
    page = fresh.page
    assert fresh.finished_ids, "the Wi-Fi test ran first and finished a task"
    fresh.model.add(*stalling_script())
    run = asyncio.ensure_future(fresh.webmcp("run_agent_task", {"goal": "Open Settings and wait"}))
    await fresh.requests_at_least(4)
    running = await fresh.webmcp_json("get_latest_task", {})
    assert running["status"] == "executing"
    await page.reload()
    await page.wait_for_selector("html[data-state=ready]", state="attached", timeout=60_000)
    await asyncio.wait({run}, timeout=10)
    assert run.done()
    run.exception() if not run.cancelled() else None  # the call died with the page: either way is fine

    latest = await fresh.webmcp_json("get_latest_task", {})
    assert latest["taskId"] == running["taskId"]
    assert latest["status"] == "aborted" and latest["error"] == INTERRUPTED_ERROR
    assert [step["status"] for step in latest["steps"]] == ["success", "failed"]
    earlier = await fresh.webmcp_json("get_task_result", {"taskId": fresh.finished_ids[0]})
    assert earlier["status"] == "finished" and earlier["conclusion"] == "Wi-Fi is on"
    assert earlier["steps"][0]["toolCalls"][0]["name"] == "tap"
    brief = await fresh.webmcp_json(
        "get_task_result", {"taskId": fresh.finished_ids[0], "includeSteps": False}
    )
    assert "steps" not in brief
    # The panel lists them too, as earlier tasks.
    past = page.locator(f'.chat-task--past[data-task-id="{running["taskId"]}"]')
    assert await past.get_attribute("data-status") == "aborted"
    assert INTERRUPTED_ERROR in await past.locator(".chat-task__end").text_content()
    await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=30_000)
