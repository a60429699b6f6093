"""Agent tasks and their steps (the specification's AgentTask appendix): their state machines, their
close-out, and their JSON.

All state logic is here, as data: ``TASK_TRANSITIONS`` and ``STEP_TRANSITIONS`` list every allowed change
of status, ``move_to`` (on a task or a step) is the only way to change one and refuses anything else
with ``InvalidTransition``, and ``close_out`` ends a task with its unfinished steps (the agent ending a
task, the page restoring one a reload interrupted). The camelCase JSON of a task record — what
get_task_result answers, the page keeps in IndexedDB and a farm page publishes — is one table of fields
per type (``TASK_FIELDS``, ``STEP_FIELDS``, ``TOOL_CALL_FIELDS``) read both ways. Times are milliseconds
since the epoch, given by the caller: nothing here reads a clock.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
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
# plan) or be aborted (abort_task or the timeout while the model still plans), and a task that never
# began can be aborted (a reload, a cancel before the first look) or fail (its phone went away first).
TASK_TRANSITIONS: dict[TaskStatus, frozenset[TaskStatus]] = {
    TaskStatus.IDLE: frozenset({TaskStatus.PLANNING, TaskStatus.ABORTED, TaskStatus.FAILED}),
    TaskStatus.PLANNING: frozenset({TaskStatus.EXECUTING, TaskStatus.FAILED, TaskStatus.ABORTED}),
    TaskStatus.EXECUTING: frozenset({TaskStatus.FINISHED, TaskStatus.FAILED, TaskStatus.ABORTED}),
    TaskStatus.FINISHED: frozenset(),
    TaskStatus.FAILED: frozenset(),
    TaskStatus.ABORTED: frozenset(),
}
TERMINAL_STATUSES = frozenset({TaskStatus.FINISHED, TaskStatus.FAILED, TaskStatus.ABORTED})

# A step is planned (pending), runs once, and ends: done or failed when it ran, skipped when it never did
# (a new plan replaced it, or the task ended first).
STEP_TRANSITIONS: dict[StepStatus, frozenset[StepStatus]] = {
    StepStatus.PENDING: frozenset({StepStatus.RUNNING, StepStatus.SKIPPED}),
    StepStatus.RUNNING: frozenset({StepStatus.SUCCESS, StepStatus.FAILED}),
    StepStatus.SUCCESS: frozenset(),
    StepStatus.FAILED: frozenset(),
    StepStatus.SKIPPED: frozenset(),
}


class InvalidTransition(ValueError):
    """A change of task or step state the state machine does not allow."""


def _check_transition(
    table: Mapping[Any, frozenset[Any]], what: str, current: StrEnum, status: StrEnum
) -> None:
    """The one check every change of status goes through."""
    if status not in table[current]:
        raise InvalidTransition(f"{what}: {current} -> {status} is not allowed")


@dataclass
class ToolCallRecord:
    """One action the agent took in a step."""

    name: str
    args: dict[str, Any]
    result: str = ""
    duration_ms: int = 0
    ok: bool = True
    # What a tap-like action acted on, found on the screen the agent saw: a locator (text=…, desc=…,
    # id=…) and the point in device pixels; a task saved as a flow replays by them.
    target: str = ""
    point: str = ""

    def to_json(self) -> dict[str, Any]:
        return _encode(self, TOOL_CALL_FIELDS)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ToolCallRecord:
        return cls(**_decode(data, TOOL_CALL_FIELDS))


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

    def move_to(self, status: StepStatus, now_ms: int) -> None:
        """Change state through the transition table; running stamps the start, an end after running
        stamps the finish (a skipped step never ran: no times)."""
        _check_transition(STEP_TRANSITIONS, f"step {self.id}", self.status, status)
        self.status = status
        if status is StepStatus.RUNNING:
            self.started_at = now_ms
        elif status in (StepStatus.SUCCESS, StepStatus.FAILED):
            self.finished_at = now_ms

    @property
    def duration_ms(self) -> int | None:
        if self.started_at is None or self.finished_at is None:
            return None
        return self.finished_at - self.started_at

    def to_json(self) -> dict[str, Any]:
        """The step as get_task_result answers it (screenshots are left out: they are large)."""
        return _encode(self, STEP_FIELDS)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AgentStep:
        return cls(**_decode(data, STEP_FIELDS))


@dataclass(frozen=True)
class AgentMode:
    """One way the agent works: its ``name`` (run_agent_task's ``mode``, the page's Setting), what the
    page calls it (``title``), what it does (``summary``) and, when it differs from a plan's steps, what a
    step of its report is (``steps``). The agent's table of how each way runs is ``agent.task_runner``'s
    ``WAYS``; the tool's schema, its docs and the page's Setting are written from this one table."""

    name: str
    title: str
    summary: str
    steps: str = ""


PLAN_MODE = AgentMode("plan", "Plan-and-Resolve", "plans the steps, then carries each out")
REACT_MODE = AgentMode(
    "react",
    "ReAct",
    "looks, thinks and acts one action at a time, no plan",
    "each action is a step of the report",
)
# Every way, by name; the first is the default.
AGENT_MODES: dict[str, AgentMode] = {mode.name: mode for mode in (PLAN_MODE, REACT_MODE)}
DEFAULT_AGENT_MODE = PLAN_MODE.name


DEFAULT_TAKEOVER_TIMEOUT_MS = 300_000
DEFAULT_CONFIRM_TIMEOUT_MS = 120_000


@dataclass(frozen=True)
class TaskOptions:
    """How one task runs, from run_agent_task's arguments: the agent's way (a name in ``AGENT_MODES``;
    None: the page's Setting), how long a take over may wait for the person, how long a confirmation."""

    mode: str | None = None
    takeover_timeout_ms: int = DEFAULT_TAKEOVER_TIMEOUT_MS
    confirm_timeout_ms: int = DEFAULT_CONFIRM_TIMEOUT_MS


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
    # Where the agent's looks came from, when the page could offer scrcpy frames (tools/screen_source.py):
    # e.g. "scrcpy frame (6 looks)"; None elsewhere (every look a screenshot, nothing to say).
    screen_source: str | None = None
    # How it runs (run_agent_task's mode, takeoverTimeoutMs, confirmTimeoutMs); not part of the record.
    options: TaskOptions = field(default_factory=TaskOptions, repr=False, compare=False)

    def move_to(self, status: TaskStatus, now_ms: int) -> None:
        """Change state through the transition table; stamps start and finish times."""
        _check_transition(TASK_TRANSITIONS, f"task {self.id}", self.status, status)
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
    def total_steps(self) -> int:
        return len(self.steps)

    @property
    def duration_ms(self) -> int | None:
        start = self.started_at if self.started_at is not None else self.created_at
        if self.finished_at is None:
            return None
        return self.finished_at - start

    def summary_json(self) -> dict[str, Any]:
        """What run_agent_task answers on Channel B (the specification's JSON)."""
        return _encode(self, TASK_SUMMARY_FIELDS)

    def to_json(self, include_steps: bool = True) -> dict[str, Any]:
        """What get_task_result and get_latest_task answer (the appendix's AgentTask)."""
        return _encode(self, TASK_FIELDS if include_steps else TASK_FIELDS[:-1])

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> AgentTask:
        """The task a record describes, as it was (``to_json``'s reverse; no screenshots). KeyError,
        TypeError or ValueError when the record is not one."""
        return cls(**_decode(data, TASK_FIELDS))


def skip_pending(steps: Iterable[AgentStep], now_ms: int) -> None:
    """Mark the steps that have not begun as skipped (a new plan replaces them, or the task ends)."""
    for step in steps:
        if step.status is StepStatus.PENDING:
            step.move_to(StepStatus.SKIPPED, now_ms)


def close_out(
    task: AgentTask,
    status: TaskStatus,
    now_ms: int,
    *,
    error: str | None = None,
    conclusion: str | None = None,
) -> list[AgentStep]:
    """End ``task`` as ``status`` (finished, failed or aborted) at ``now_ms``: a step still running fails
    (with ``error`` unless it has its own), pending steps are skipped, the task takes ``error`` and
    ``conclusion`` when given. Returns the steps it failed, for their end to be reported. Refuses (before
    changing anything) an end the task's state machine does not allow."""
    if status not in TERMINAL_STATUSES:
        raise InvalidTransition(f"task {task.id}: {status} does not end a task")
    _check_transition(TASK_TRANSITIONS, f"task {task.id}", task.status, status)
    interrupted = [step for step in task.steps if step.status is StepStatus.RUNNING]
    for step in interrupted:
        step.error = step.error or error
        step.move_to(StepStatus.FAILED, now_ms)
    skip_pending(task.steps, now_ms)
    if error is not None:
        task.error = error
    if conclusion is not None:
        task.conclusion = conclusion
    task.move_to(status, now_ms)
    return interrupted


# -- the JSON of task records -------------------------------------------------------------------------

# The keys a reader may look at before a record is decoded (which task, whether it ended, how old).
TASK_ID_KEY = "taskId"
TASK_STATUS_KEY = "status"
TASK_CREATED_KEY = "createdAt"


def _same(value: Any) -> Any:
    return value


_REQUIRED = object()


@dataclass(frozen=True)
class JsonField:
    """One camelCase key of a record and the attribute it holds. ``decode`` is None for a key that is
    only written (derived from other fields, like ``durationMs``); ``default`` is read when the key is
    missing (``_REQUIRED``: the record is not one without it)."""

    key: str
    attr: str
    encode: Callable[[Any], Any] = _same
    decode: Callable[[Any], Any] | None = _same
    default: Any = None
    omit_empty: bool = False  # written only when it holds something (a key later records added)


def _list_field(key: str, attr: str, item: type[ToolCallRecord] | type[AgentStep]) -> JsonField:
    """A list of records of their own (a step's tool calls, a task's steps)."""
    return JsonField(
        key,
        attr,
        encode=lambda items: [entry.to_json() for entry in items],
        decode=lambda items: [item.from_json(entry) for entry in items or []],
    )


TOOL_CALL_FIELDS: tuple[JsonField, ...] = (
    JsonField("name", "name", decode=str, default=""),
    JsonField("args", "args", decode=lambda value: dict(value or {})),
    JsonField("result", "result", decode=str, default=""),
    JsonField("durationMs", "duration_ms", decode=lambda value: int(value or 0)),
    JsonField("ok", "ok", decode=bool, default=True),
    JsonField("target", "target", decode=str, default="", omit_empty=True),
    JsonField("point", "point", decode=str, default="", omit_empty=True),
)

STEP_FIELDS: tuple[JsonField, ...] = (
    JsonField("id", "id", decode=str, default=""),
    JsonField("index", "index", decode=int, default=0),
    JsonField("title", "title", decode=str, default=""),
    JsonField("description", "description", decode=lambda value: str(value or "")),
    JsonField("summary", "summary"),
    JsonField("status", "status", encode=str, decode=StepStatus, default=StepStatus.PENDING.value),
    JsonField("durationMs", "duration_ms", decode=None),
    JsonField("error", "error"),
    _list_field("toolCalls", "tool_calls", ToolCallRecord),
    JsonField("startedAt", "started_at"),
    JsonField("finishedAt", "finished_at"),
)

# ``steps`` comes last: ``to_json(include_steps=False)`` leaves it out.
TASK_FIELDS: tuple[JsonField, ...] = (
    JsonField(TASK_ID_KEY, "id", decode=str, default=_REQUIRED),
    JsonField("goal", "goal", decode=str, default=""),
    JsonField(TASK_STATUS_KEY, "status", encode=str, decode=TaskStatus, default=TaskStatus.IDLE.value),
    JsonField("conclusion", "conclusion"),
    JsonField("error", "error"),
    JsonField("stepsCompleted", "steps_completed", decode=None),
    JsonField("totalSteps", "total_steps", decode=None),
    JsonField("durationMs", "duration_ms", decode=None),
    JsonField(TASK_CREATED_KEY, "created_at", decode=lambda value: int(value or 0)),
    JsonField("startedAt", "started_at"),
    JsonField("finishedAt", "finished_at"),
    JsonField("screenSource", "screen_source", omit_empty=True),
    _list_field("steps", "steps", AgentStep),
)
_TASK_FIELD = {spec.key: spec for spec in TASK_FIELDS}
# run_agent_task's answer on Channel B, in the specification's order.
TASK_SUMMARY_FIELDS: tuple[JsonField, ...] = tuple(
    _TASK_FIELD[key]
    for key in (
        "taskId",
        "status",
        "conclusion",
        "stepsCompleted",
        "totalSteps",
        "durationMs",
        "error",
        "screenSource",
    )
)


def _encode(obj: Any, fields: Iterable[JsonField]) -> dict[str, Any]:
    encoded: dict[str, Any] = {}
    for spec in fields:
        value = getattr(obj, spec.attr)
        if value or not spec.omit_empty:
            encoded[spec.key] = spec.encode(value)
    return encoded


def _decode(data: Mapping[str, Any], fields: Iterable[JsonField]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for spec in fields:
        if spec.decode is None:
            continue
        if spec.default is _REQUIRED:
            value = data[spec.key]
        else:
            value = data.get(spec.key, spec.default)
        values[spec.attr] = spec.decode(value)
    return values
