"""Agent tasks and their steps (the specification's AgentTask appendix) and the task state machine.

States and their transitions are data (``TASK_TRANSITIONS``) so that every change of state goes through
one check. Times are milliseconds since the epoch, given by the caller: nothing here reads a clock.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class TaskStatus(StrEnum):
    IDLE = "idle"
    PLANNING = "planning"
    EXECUTING = "executing"
    FINISHED = "finished"
    FAILED = "failed"
    ABORTED = "aborted"


class StepStatus(StrEnum):
    PENDING = "pending"
    RUNNING = "running"
    SUCCESS = "success"
    FAILED = "failed"
    SKIPPED = "skipped"


# The specification's state diagram, plus the exits it implies: planning can fail (the model gives no
# plan) or be aborted (abort_task or the timeout while the model still plans).
TASK_TRANSITIONS: dict[TaskStatus, frozenset[TaskStatus]] = {
    TaskStatus.IDLE: frozenset({TaskStatus.PLANNING}),
    TaskStatus.PLANNING: frozenset({TaskStatus.EXECUTING, TaskStatus.FAILED, TaskStatus.ABORTED}),
    TaskStatus.EXECUTING: frozenset({TaskStatus.FINISHED, TaskStatus.FAILED, TaskStatus.ABORTED}),
    TaskStatus.FINISHED: frozenset(),
    TaskStatus.FAILED: frozenset(),
    TaskStatus.ABORTED: frozenset(),
}
TERMINAL_STATUSES = frozenset({TaskStatus.FINISHED, TaskStatus.FAILED, TaskStatus.ABORTED})


class InvalidTransition(ValueError):
    """A change of task state the state machine does not allow."""


@dataclass
class ToolCallRecord:
    """One action the agent took in a step."""

    name: str
    args: dict[str, Any]
    result: str = ""
    duration_ms: int = 0
    ok: bool = True

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "args": self.args,
            "result": self.result,
            "durationMs": self.duration_ms,
            "ok": self.ok,
        }


@dataclass
class AgentStep:
    id: str
    index: int
    title: str
    description: str = ""
    summary: str | None = None
    status: StepStatus = StepStatus.PENDING
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    before_screenshot: str | None = None
    after_screenshot: str | None = None
    error: str | None = None
    started_at: int | None = None
    finished_at: int | None = None

    @property
    def duration_ms(self) -> int | None:
        if self.started_at is None or self.finished_at is None:
            return None
        return self.finished_at - self.started_at

    def to_json(self) -> dict[str, Any]:
        """The step as get_task_result answers it (screenshots are left out: they are large)."""
        return {
            "id": self.id,
            "index": self.index,
            "title": self.title,
            "description": self.description,
            "summary": self.summary,
            "status": str(self.status),
            "durationMs": self.duration_ms,
            "error": self.error,
            "toolCalls": [call.to_json() for call in self.tool_calls],
            "startedAt": self.started_at,
            "finishedAt": self.finished_at,
        }


@dataclass
class AgentTask:
    id: str
    goal: str
    created_at: int
    steps: list[AgentStep] = field(default_factory=list)
    status: TaskStatus = TaskStatus.IDLE
    conclusion: str | None = None
    error: str | None = None
    started_at: int | None = None
    finished_at: int | None = None
    # Where the agent's looks came from, when the page could offer scrcpy frames (agent.looks):
    # e.g. "scrcpy frame (6 looks)"; None elsewhere (every look a screenshot, nothing to say).
    screen_source: str | None = None

    def move_to(self, status: TaskStatus, now_ms: int) -> None:
        """Change state through the transition table; stamps start and finish times."""
        if status not in TASK_TRANSITIONS[self.status]:
            raise InvalidTransition(f"task {self.id}: {self.status} -> {status} is not allowed")
        self.status = status
        if status is TaskStatus.PLANNING and self.started_at is None:
            self.started_at = now_ms
        if status in TERMINAL_STATUSES:
            self.finished_at = now_ms

    @property
    def done(self) -> bool:
        return self.status in TERMINAL_STATUSES

    @property
    def steps_completed(self) -> int:
        return sum(1 for step in self.steps if step.status is StepStatus.SUCCESS)

    @property
    def duration_ms(self) -> int | None:
        start = self.started_at if self.started_at is not None else self.created_at
        if self.finished_at is None:
            return None
        return self.finished_at - start

    def summary_json(self) -> dict[str, Any]:
        """What run_agent_task answers on Channel B (the specification's JSON)."""
        return {
            "taskId": self.id,
            "status": str(self.status),
            "conclusion": self.conclusion,
            "stepsCompleted": self.steps_completed,
            "totalSteps": len(self.steps),
            "durationMs": self.duration_ms,
            "error": self.error,
            **({"screenSource": self.screen_source} if self.screen_source else {}),
        }

    def to_json(self, include_steps: bool = True) -> dict[str, Any]:
        """What get_task_result and get_latest_task answer (the appendix's AgentTask)."""
        data: dict[str, Any] = {
            "taskId": self.id,
            "goal": self.goal,
            "status": str(self.status),
            "conclusion": self.conclusion,
            "error": self.error,
            "stepsCompleted": self.steps_completed,
            "totalSteps": len(self.steps),
            "durationMs": self.duration_ms,
            "createdAt": self.created_at,
            "startedAt": self.started_at,
            "finishedAt": self.finished_at,
        }
        if self.screen_source:
            data["screenSource"] = self.screen_source
        if include_steps:
            data["steps"] = [step.to_json() for step in self.steps]
        return data
