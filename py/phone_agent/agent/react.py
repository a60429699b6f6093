"""ReAct, the agent's second way: look, think and act one action at a time with no plan up front, until
the goal is reached (``finish_task``) or the model gives up (``give_up``).

Each action is a step of the task's record and report (titled by the action), so a ReAct task reads
like a Plan-and-Resolve one and has the same states, progress, abort, take over, confirmations and
secrets: its turns are played by resolve.py's ``StepResolver.play_turn``, the same code a plan's step
runs. The chat history carries the recent actions and their results; every turn sends the screen now.
"""

from __future__ import annotations

import json

from ..tasks import AgentStep, AgentTask, StepStatus, TaskStatus
from .model import Message, ToolCall
from .model_functions import REACT_TOOLS
from .ports import Clock
from .prompts import screen_message, secrets_line
from .resolve import StepOutcome, StepResolver, StepRun

REACT_SYSTEM = """You operate an Android phone to reach the user's goal, one action per answer, with no
plan: look at the screenshot, think briefly about what to do next, then call exactly one tool. You then
get its result and the new screen.
Coordinates are pixels of the screenshot image you are sent ({width}x{height}, origin top-left).
The UI element list gives each element's ref (@e3), label, role and centre in the same pixels; prefer
target="@e3" (or a locator such as target="text=Send") over a guessed pixel.
Tools: tap, long_press, swipe, type_text (with target, it taps the field first), type_secret (a secret
by its name; you never see its value), press_key, open_app, open_url, wait; take_over to hand the phone
to the person for what you cannot do (a login without its secret, a captcha); extract_scrolling_content
to read a whole list; finish_task when the goal is reached or answered, with the conclusion;
give_up when it cannot be reached. Mark an action sensitive=true when it sends a message, pays or buys,
deletes, installs or uninstalls, or changes a permission.
If an action did not change the screen, do not repeat it: try something else."""

HISTORY_MESSAGES = 24  # the recent actions the model is reminded of (the screen is always new)


class ReActFailure(Exception):
    """Ends the ReAct task as failed with this message."""


def _title(call: ToolCall | None) -> str:
    if call is None:
        return "(no action)"
    args = json.dumps(call.arguments, ensure_ascii=False, separators=(",", ":"))
    text = f"{call.name} {args}" if call.arguments else call.name
    return text if len(text) <= 80 else text[:79] + "…"


def _trim(history: list[Message]) -> None:
    """Keep the recent exchanges only, never starting inside one (a tool answer needs its call)."""
    if len(history) <= HISTORY_MESSAGES:
        return
    del history[: len(history) - HISTORY_MESSAGES]
    while history and history[0].get("role") != "assistant":
        del history[0]


async def run_react(task: AgentTask, steps: StepResolver, clock: Clock, max_actions: int) -> StepOutcome:
    """Drive the task ReAct's way; the outcome says whether it finished (and with what), else raises
    ReActFailure. The task is executing when this starts."""
    observation = await steps.look()
    run: StepRun | None = None
    for number in range(1, max_actions + 1):
        mapping = observation.mapping
        goal = f"Goal: {task.goal}"
        if steps.secret_names():
            goal += "\n" + secrets_line(steps.secret_names())
        history = run.history if run is not None else []
        _trim(history)
        messages: list[Message] = [
            {
                "role": "system",
                "content": REACT_SYSTEM.format(width=mapping.image_width, height=mapping.image_height),
            },
            {"role": "user", "content": goal},
            *history,
            screen_message(observation, observation.current_app, run.note if run is not None else ""),
        ]
        turn = await steps.ask(messages, REACT_TOOLS)
        call = turn.tool_calls[0] if turn.tool_calls else steps.text_action(turn.text)
        step = AgentStep(id=f"{task.id}-s{number}", index=number, title=_title(call))
        task.steps.append(step)
        step.move_to(StepStatus.RUNNING, clock())
        steps.reporter.on_step_start(step)
        if steps.config.keep_screenshots:
            step.before_screenshot = observation.data_url()
        if run is None:
            run = StepRun(step, observation, history)
        run.step, run.observation, run.note = step, observation, ""
        verdict = await steps.play_turn(run, turn, number)
        if verdict is None:
            last = step.tool_calls[-1] if step.tool_calls else None
            ok = last is not None and last.ok
            verdict = (
                (StepStatus.SUCCESS, None)
                if ok
                else (StepStatus.FAILED, last.result if last else "no action")
            )
        steps.end_step(run, *verdict)
        observation = run.observation
        if run.outcome.task_done:
            return run.outcome
        if run.outcome.given_up is not None:
            raise ReActFailure(f"The agent gave up: {run.outcome.given_up}")
        if run.repeats >= steps.config.max_repeats:
            raise ReActFailure(f"{verdict[1] or 'the same action kept leaving the screen unchanged'}")
    raise ReActFailure(f"The goal was not reached within {max_actions} actions")


def start_react(task: AgentTask, clock: Clock) -> None:
    """ReAct has no plan: the task goes through planning straight to executing."""
    task.move_to(TaskStatus.PLANNING, clock())
    task.move_to(TaskStatus.EXECUTING, clock())
