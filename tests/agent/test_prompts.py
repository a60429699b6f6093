"""``agent.prompts``: what the model is told when planning, replanning, acting on a step and extracting
text: the goal, the plan with each step's state, the screen's sizes, the elements and the image."""

from __future__ import annotations

from phone_agent.agent.prompts import (
    EXTRACT_SYSTEM,
    extract_messages,
    plan_messages,
    replan_history,
    screen_message,
    step_context,
    step_system,
)
from phone_agent.agent.screen import NodeSummary, Observation, ScreenMapping
from phone_agent.tasks import AgentStep, AgentTask, StepStatus


def observation(nodes: list[NodeSummary] | None = None, nodes_error: str | None = None) -> Observation:
    return Observation(
        png=b"png",
        mapping=ScreenMapping(1080, 2400, 461, 1024),
        image=b"\xff\xd8jpeg",
        image_mime="image/jpeg",
        nodes=nodes or [],
        nodes_error=nodes_error,
    )


def task_with_steps(*states: StepStatus) -> AgentTask:
    steps = [AgentStep(f"s{n}", n, f"Step {n}", status=state) for n, state in enumerate(states, 1)]
    return AgentTask("t1", "Turn Wi-Fi on", 0, steps=steps)


def text_and_image(message: dict) -> tuple[str, str]:
    text, image = message["content"]
    assert text["type"] == "text" and image["type"] == "image_url"
    return text["text"], image["image_url"]["url"]


def test_the_plan_request_has_the_goal_the_sizes_the_elements_and_the_image() -> None:
    nodes = [NodeSummary("Settings", "button", 100, 200, ("focused",), "@e1")]
    system, user = plan_messages(AgentTask("t1", "Turn Wi-Fi on", 0), observation(nodes), max_steps=7)
    assert system["role"] == "system" and "7" in system["content"]
    text, image = text_and_image(user)
    assert text.startswith(
        "Goal: Turn Wi-Fi on\n\nCurrent screen: screenshot 461x1024 pixels (device 1080x2400)."
    )
    assert '- @e1 "Settings" button at (100, 200) [focused]' in text
    assert text.endswith("Call submit_plan with the steps.")
    assert image == "data:image/jpeg;base64,/9hqcGVn"


def test_a_replan_tells_the_plan_so_far_and_why_it_failed() -> None:
    task = task_with_steps(StepStatus.SUCCESS, StepStatus.FAILED, StepStatus.PENDING)
    task.steps[0].summary = "Settings is open"
    task.steps[1].error = "no Wi-Fi entry"
    history = replan_history(task, task.steps[1])
    assert history.splitlines() == [
        "The plan so far:",
        "1. [success] Step 1 — Settings is open",
        "2. [failed] Step 2 — failed: no Wi-Fi entry",
        "Step 2 failed: no Wi-Fi entry.",
        "Plan the remaining steps again from the current screen, avoiding what failed.",
    ]
    _, user = plan_messages(task, observation(), 5, history)
    assert text_and_image(user)[0].startswith("Goal: Turn Wi-Fi on\n\nThe plan so far:\n")


def test_a_failed_step_without_a_reason_says_so() -> None:
    task = task_with_steps(StepStatus.FAILED)
    assert "Step 1 failed: no reason given." in replan_history(task, task.steps[0])


def test_the_step_context_marks_the_current_step_and_leaves_out_skipped_ones() -> None:
    task = task_with_steps(StepStatus.SUCCESS, StepStatus.RUNNING, StepStatus.SKIPPED, StepStatus.PENDING)
    task.steps[1].description = "Tap Network & internet, then Wi-Fi."
    assert step_context(task, task.steps[1]).splitlines() == [
        "Goal: Turn Wi-Fi on",
        "",
        "Plan:",
        "1. [success] Step 1",
        "2. [current] Step 2",
        "4. [pending] Step 4",
        "",
        "Current step 2: Step 2",
        "Tap Network & internet, then Wi-Fi.",
    ]


def test_the_step_system_prompt_states_the_image_size() -> None:
    message = step_system(observation())
    assert message["role"] == "system" and "461" in message["content"] and "1024" in message["content"]


def test_the_screen_message_names_the_app_the_note_and_the_elements() -> None:
    nodes = [NodeSummary("Wi-Fi", "switch", 10, 20)]
    text, _ = text_and_image(
        screen_message(observation(nodes), "com.android.settings", "The tap did nothing.")
    )
    assert text.splitlines() == [
        "Current screen: screenshot 461x1024 pixels (device 1080x2400). "
        "Foreground app: com.android.settings.",
        "The tap did nothing.",
        "UI elements (ref, label, role, centre in image pixels):",
        '- "Wi-Fi" switch at (10, 20)',
        "",
        "Call one tool.",
    ]


def test_the_screen_message_says_when_there_are_no_elements_or_no_tree() -> None:
    text, _ = text_and_image(screen_message(observation(), None))
    assert "Foreground app" not in text and "(no labelled elements in the UI tree)" in text
    text, _ = text_and_image(screen_message(observation(nodes_error="uiautomator timed out"), None))
    assert "(the UI tree is not available: uiautomator timed out)" in text


def test_extraction_sends_every_part_of_the_long_screenshot_in_order() -> None:
    system, user = extract_messages("the prices", "Compare prices", ["data:a", "data:b"], 1080, [2400, 900])
    assert system == {"role": "system", "content": EXTRACT_SYSTEM}
    text, *images = user["content"]
    assert "Instruction: the prices" in text["text"] and "Task goal: Compare prices" in text["text"]
    assert "2 images are consecutive parts of one long screenshot" in text["text"]
    assert "1080 pixels wide (heights 2400, 900)" in text["text"]
    assert [image["image_url"]["url"] for image in images] == ["data:a", "data:b"]
    _, single = extract_messages("x", "y", ["data:a"], 1080, [2400])
    assert "The image is one long screenshot" in single["content"][0]["text"]
