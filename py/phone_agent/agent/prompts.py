"""The agent's prompts: planning, one step's turn, and extraction, as OpenAI chat messages."""

from __future__ import annotations

from typing import Any

from ..tasks import AgentStep, AgentTask, StepStatus
from .model import Message
from .screen import Observation

PLANNER_SYSTEM = """You plan tasks on an Android phone that is operated through screenshots and touch.
Given the user's goal and the current screen, call submit_plan with the steps to reach the goal, in
order (at most {max_steps}). Each step has a short title and a description saying what to do and how
to see on screen that it is done. Prefer few steps; one step is fine for a simple goal.
If the goal asks to collect or extract content from a list or long page (scroll capture), the last
step should be "Extract …": it will scroll and capture the whole list at once."""

STEP_SYSTEM = """You operate an Android phone to reach the user's goal, one action per answer.
You get the goal, the plan with the current step, the actions you already took in this step and
their results, and the current screenshot with a list of UI elements.
Coordinates are pixels of the screenshot image you are sent ({width}x{height}, origin top-left).
The UI element list gives each element's ref (@e3), label, role and centre in the same pixels.
Prefer addressing an element by its ref: tap, long_press and type_text take target="@e3" (or a
locator such as target="text=Send"), which lands on the element itself instead of a guessed pixel.
Always answer by calling exactly one tool:
- tap, long_press, swipe, type_text (with target, it taps the field first), press_key, open_app,
  open_url, wait;
- finish_step when the current step is done (check the screen); fail_step when it cannot be done;
- finish_task when the whole goal is reached or answered, with the conclusion for the user;
- extract_scrolling_content to read a whole list or long page (it scrolls and captures by itself
  and ends the task with what it extracted).
If an action did not change the screen, do not repeat it: try something else.
A system dialog over the app (a permission request: "While using the app", "Only this time", "Don't
allow") must be answered before anything else: allow when the goal needs what it asks for, else deny.
When the soft keyboard covers an element you need, press_key back hides it (the text stays)."""

# The permission controller's packages (Pixel's and AOSP's): its dialog is in front when one is.
PERMISSION_CONTROLLERS = ("com.google.android.permissioncontroller", "com.android.permissioncontroller")
PERMISSION_NOTE = (
    "A system permission dialog is in front of the app: answer it first (tap its button: allow when "
    "the goal needs what it asks for, else \"Don't allow\"); the app cannot be used until it is answered."
)

EXTRACT_SYSTEM = """You read screenshots of a phone and extract exactly what is asked, as plain text.
Do not invent anything that is not visible; keep the order in which things appear."""


def plan_messages(
    task: AgentTask, observation: Observation, max_steps: int, history: str = ""
) -> list[Message]:
    mapping = observation.mapping
    text = f"Goal: {task.goal}\n"
    if history:
        text += f"\n{history}\n"
    text += (
        f"\nCurrent screen: screenshot {mapping.image_width}x{mapping.image_height} pixels "
        f"(device {mapping.device_width}x{mapping.device_height}).\n"
        f"UI elements (ref, label, role, centre in image pixels):\n{observation.nodes_text()}\n\n"
        "Call submit_plan with the steps."
    )
    return [
        {"role": "system", "content": PLANNER_SYSTEM.format(max_steps=max_steps)},
        {"role": "user", "content": _with_image(text, observation)},
    ]


def replan_history(task: AgentTask, failed: AgentStep) -> str:
    lines = ["The plan so far:"]
    lines += [_step_line(step, failed.index) for step in task.steps if step.status is not StepStatus.PENDING]
    lines.append(f"Step {failed.index} failed: {failed.error or 'no reason given'}.")
    lines.append("Plan the remaining steps again from the current screen, avoiding what failed.")
    return "\n".join(lines)


def _step_line(step: AgentStep, current: int) -> str:
    if step.index == current and step.status is StepStatus.RUNNING:
        state = "current"
    else:
        state = str(step.status)
    line = f"{step.index}. [{state}] {step.title}"
    if step.status is StepStatus.SUCCESS and step.summary:
        line += f" — {step.summary}"
    if step.status is StepStatus.FAILED and step.error:
        line += f" — failed: {step.error}"
    return line


def step_context(task: AgentTask, step: AgentStep) -> str:
    lines = [f"Goal: {task.goal}", "", "Plan:"]
    lines += [_step_line(s, step.index) for s in task.steps if s.status is not StepStatus.SKIPPED]
    lines += ["", f"Current step {step.index}: {step.title}"]
    if step.description:
        lines.append(step.description)
    return "\n".join(lines)


def step_system(observation: Observation) -> Message:
    mapping = observation.mapping
    return {
        "role": "system",
        "content": STEP_SYSTEM.format(width=mapping.image_width, height=mapping.image_height),
    }


def screen_message(observation: Observation, current_app: str | None, note: str = "") -> Message:
    mapping = observation.mapping
    text = (
        f"Current screen: screenshot {mapping.image_width}x{mapping.image_height} pixels "
        f"(device {mapping.device_width}x{mapping.device_height})."
    )
    if current_app:
        text += f" Foreground app: {current_app}."
        if current_app.split("/", 1)[0] in PERMISSION_CONTROLLERS:
            text += f"\n{PERMISSION_NOTE}"
    if note:
        text += f"\n{note}"
    text += "\nUI elements (ref, label, role, centre in image pixels):\n"
    text += f"{observation.nodes_text()}\n\nCall one tool."
    return {"role": "user", "content": _with_image(text, observation)}


def _with_image(text: str, observation: Observation) -> list[dict[str, Any]]:
    return [
        {"type": "text", "text": text},
        {"type": "image_url", "image_url": {"url": observation.data_url()}},
    ]


def extract_messages(
    instruction: str, goal: str, images: list[str], width: int, heights: list[int]
) -> list[Message]:
    parts = len(images)
    text = (
        f"Task goal: {goal}\nInstruction: {instruction}\n\n"
        f"The {'image is' if parts == 1 else f'{parts} images are consecutive parts of'} one long "
        f"screenshot of the scrolled content, top to bottom, {width} pixels wide "
        f"(heights {', '.join(str(h) for h in heights)}). Answer with the extracted content only."
    )
    content: list[dict[str, Any]] = [{"type": "text", "text": text}]
    content += [{"type": "image_url", "image_url": {"url": url}} for url in images]
    return [{"role": "system", "content": EXTRACT_SYSTEM}, {"role": "user", "content": content}]
