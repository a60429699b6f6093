"""The chat panel: a person types a goal and presses Run, watches the plan and the steps unfold live
(📋 ▶️ 💭 🔧 → ✅/❌/⏭️) and can press Abort; tasks that MCP clients start show here too, because the
panel listens to the agent itself, whichever channel started the task.

Thinking arrives token by token into one 💭 line (the relay gets it as one line when it is flushed).
Text goes in through ``textContent`` only: a model's words cannot inject markup.

A failure is said once, where the task is: a failed task's end line carries the error (the agent's
"Agent execution error" event, which MCP clients get as progress, is not repeated above it), and a goal
refused before it became a task (no model, no phone, busy) gets an item of its own with the remedy,
in the page's words. The status line only says how it ended.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import js  # type: ignore[import-not-found]

from ..agent.progress import ProgressEvent
from ..errors import ErrorCode, ToolError
from ..tasks import AgentTask, TaskStatus
from .dom import PanelEvents, element
from .interop import is_nullish

TASKS_SHOWN = 20  # older tasks leave the panel (their results stay in the history)
STATUS_ICONS = {
    TaskStatus.FINISHED: "✅",
    TaskStatus.FAILED: "❌",
    TaskStatus.ABORTED: "⏹️",
}

# What a refusal means to the person in the page (the tools' texts are written for remote callers).
PAGE_REMEDIES = {
    ErrorCode.NO_MODEL: "No model configured: choose a model provider, base URL and model in Settings "
    "(on this page), then Save — or start phone-agent with --model-base-url and --model.",
}

RunGoal = Callable[[str], Any]  # a coroutine function: runs the goal, raises ToolError when refused
AbortTask = Callable[[], None]


class ChatPanel:
    """The Agent card: goal form, Run and Abort, the live log of the running task, past tasks."""

    def __init__(self, run_goal: RunGoal, abort: AbortTask) -> None:
        self._doc = js.document
        self._run_goal = run_goal
        self._abort = abort
        self._events = PanelEvents()
        self._lines: Any = None  # the <ol> of the task being shown live
        self._thinking: Any = None  # the 💭 line receiving tokens
        self._current: AgentTask | None = None
        self._events.listen("agent-form", "submit", self._on_submit)
        self._events.listen("agent-abort", "click", self._on_abort)
        self._set_running(False)

    def _say(self, text: str, kind: str = "") -> None:
        node = self._doc.getElementById("agent-state")
        node.textContent = text
        node.dataset.kind = kind

    def _set_running(self, running: bool) -> None:
        self._doc.documentElement.dataset.agent = "running" if running else "idle"
        self._doc.getElementById("agent-run").disabled = running
        self._doc.getElementById("agent-abort").disabled = not running

    # -- the person's controls ------------------------------------------------------------------

    def _on_submit(self, event: Any) -> None:
        event.preventDefault()
        goal_field = self._doc.getElementById("agent-goal")
        goal = str(goal_field.value).strip()
        if not goal:
            self._say("Type a goal first, e.g. “Turn Wi-Fi on”.", "error")
            return
        self._events.spawn(self._run(goal))

    async def _run(self, goal: str) -> None:
        try:
            await self._run_goal(goal)
        except ToolError as exc:
            self.refused(goal, exc)

    def refused(self, goal: str, exc: ToolError) -> None:
        """A goal that did not become a task: an item in the list saying why and what to do."""
        text = PAGE_REMEDIES.get(exc.code) or " ".join(part for part in (exc.message, exc.remedy) if part)
        item = self._item(goal, "chat-task chat-task--refused", "refused", "this page")
        item.append(element("p", f"❌ Not started: {text}", "chat-task__end chat-task__end--refused"))
        self._say("❌ Not started (see the task list).", "error")

    def _on_abort(self, _event: Any = None) -> None:
        try:
            self._abort()
            self._say("Aborting…", "busy")
        except ToolError as exc:
            self._say(exc.message, "error")

    # -- a task's life (called by the page's agent runner) --------------------------------------

    def task_started(self, task: AgentTask, origin: str) -> None:
        self._lines = element("ol", cls="chat-lines")
        self._add_task(task, "chat-task", "running", origin, self._lines)
        self._thinking = None
        self._current = task
        self._set_running(True)
        self._say(f"Running: {task.goal}", "busy")

    def show_past(self, task: AgentTask) -> None:
        """A task from this browser's history (before the last reload): its goal and how it ended."""
        end = _end_line(_end_text(task, f", {task.steps_completed}/{len(task.steps)} steps"), task)
        self._add_task(task, "chat-task chat-task--past", str(task.status), "earlier", end)
        item = self._doc.querySelector(f'.chat-task[data-task-id="{task.id}"]')
        if not is_nullish(item) and task.status is TaskStatus.FINISHED:
            item.append(_save_flow_button())

    def _add_task(self, task: AgentTask, cls: str, status: str, origin: str, body: Any) -> None:
        """``task``'s item (its goal and origin, then ``body``) at the top of the list."""
        item = self._item(task.goal, cls, status, origin)
        item.dataset.taskId = task.id
        item.append(body)

    def _item(self, goal: str, cls: str, status: str, origin: str) -> Any:
        """A new item (its goal and origin) at the top of the list; only the ``TASKS_SHOWN`` newest
        stay."""
        listing = self._doc.getElementById("agent-tasks")
        empty = self._doc.getElementById("agent-empty")
        if not is_nullish(empty):
            empty.remove()
        item = element("li", cls=cls)
        item.dataset.status = status
        head = element("div", cls="chat-task__head")
        head.append(
            element("span", "🎯", "chat-task__icon"),
            element("span", goal, "chat-task__goal"),
            element("span", origin, "chat-task__origin"),
        )
        item.append(head)
        listing.prepend(item)
        while listing.children.length > TASKS_SHOWN:
            listing.lastElementChild.remove()
        return item

    def task_ended(self, task: AgentTask) -> None:
        item = self._doc.querySelector(f'.chat-task[data-task-id="{task.id}"]')
        text = _end_text(task)
        if not is_nullish(item):
            item.dataset.status = str(task.status)
            item.append(_end_line(text, task))
            if task.screen_source:  # where the agent's looks came from (scrcpy frames or screencap)
                item.append(element("p", f"📷 Screen: {task.screen_source}", "chat-task__screen muted small"))
            if task.status is TaskStatus.FINISHED:
                item.append(_save_flow_button())
        self._thinking = None
        self._lines = None
        self._current = None
        self._set_running(False)
        # How it ended; the why is said once, in the task's end line below.
        icon = STATUS_ICONS.get(task.status, "⏹️")
        self._say(f"{icon} Task {task.status}.", "ok" if task.status is TaskStatus.FINISHED else "error")

    def on_event(self, event: ProgressEvent) -> None:
        """One lifecycle event of the running task (the agent's listener)."""
        lines = self._lines
        if lines is None:
            return
        if event.kind == "step_text":
            delta = str(event.data.get("delta", ""))
            if self._thinking is None:
                self._thinking = element("li", "💭 ", "chat-line chat-line--thinking chat-line--live")
                lines.append(self._thinking)
            self._thinking.textContent = str(self._thinking.textContent) + delta
            return
        if event.kind == "thinking":
            # The flushed line (as the relay sends it) replaces the tokens gathered so far.
            if self._thinking is not None:
                self._thinking.textContent = event.text or ""
                self._thinking.classList.remove("chat-line--live")
                self._thinking = None
                return
        if event.text is None or event.kind == "error":  # the end line says the error, once
            return
        self._thinking = None
        line = element("li", event.text, f"chat-line chat-line--{event.kind}")
        if event.kind == "step_end":
            line.dataset.status = str(event.data.get("status", ""))
        lines.append(line)


def _end_text(task: AgentTask, counts: str = "") -> str:
    """How ``task`` ended, in words (``counts``: its steps, for a task from history)."""
    icon = STATUS_ICONS.get(task.status, "⏹️")
    detail = task.conclusion if task.status is TaskStatus.FINISHED else task.error
    return f"{icon} Task {task.status}{counts}" + (f": {detail}" if detail else "")


def _end_line(text: str, task: AgentTask) -> Any:
    return element("p", text, f"chat-task__end chat-task__end--{task.status}")


def _save_flow_button() -> Any:
    """A finished task's "Save as flow" button (the Flows card saves it: save_task_as_flow)."""
    button = element("button", "Save as flow", "button chat-task__save-flow")
    button.type = "button"
    return button
