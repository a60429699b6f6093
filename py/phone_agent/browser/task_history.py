"""Task history that survives a reload: AgentTask to and from the JSON kept in IndexedDB ("tasks").

Pure Python (no ``js``), so it is tested in CPython. Screenshots are left out (they are large and
get_task_result does not answer them). A task that was still running when the page went away cannot
go on: it comes back aborted, with its finished steps and an error that says what happened — unless
another tab of this browser still runs it (it holds the task's Web Lock, ``task_lock_name``): then it
comes back as it stands, and the tab that runs it keeps writing its record.
"""

from __future__ import annotations

from typing import Any

from ..tasks import AgentStep, AgentTask, StepStatus, TaskStatus, ToolCallRecord

HISTORY_LIMIT = 50  # tasks kept across reloads; older ones are forgotten
INTERRUPTED_ERROR = "The page was closed or reloaded while this task was running; it was stopped there."


AGENT_LOCK = "phone-agent:agent"  # held by the tab whose agent drives the phone: one task at a time


def task_lock_name(task_id: str) -> str:
    """The Web Lock a tab holds while it runs this task and until its last record is written."""
    return f"phone-agent:task:{task_id}"


def task_record(task: AgentTask) -> dict[str, Any]:
    """What is stored for a task: get_task_result's JSON (no screenshots) plus step descriptions."""
    return task.to_json(include_steps=True)


def _step_from_json(data: dict[str, Any]) -> AgentStep:
    calls = [
        ToolCallRecord(
            name=str(call.get("name", "")),
            args=dict(call.get("args") or {}),
            result=str(call.get("result", "")),
            duration_ms=int(call.get("durationMs") or 0),
            ok=bool(call.get("ok", True)),
        )
        for call in data.get("toolCalls") or []
    ]
    return AgentStep(
        id=str(data.get("id", "")),
        index=int(data.get("index", 0)),
        title=str(data.get("title", "")),
        description=str(data.get("description") or ""),
        summary=data.get("summary"),
        status=StepStatus(data.get("status", "pending")),
        tool_calls=calls,
        error=data.get("error"),
        started_at=data.get("startedAt"),
        finished_at=data.get("finishedAt"),
    )


def task_from_record(data: dict[str, Any], now_ms: int, keep_running: bool = False) -> AgentTask:
    """The task a stored record describes; one that had not ended is ended now, as aborted, unless
    ``keep_running`` (another tab still runs it)."""
    task = AgentTask(
        id=str(data["taskId"]),
        goal=str(data.get("goal", "")),
        created_at=int(data.get("createdAt") or 0),
        steps=[_step_from_json(step) for step in data.get("steps") or []],
        status=TaskStatus(data.get("status", "idle")),
        conclusion=data.get("conclusion"),
        error=data.get("error"),
        started_at=data.get("startedAt"),
        finished_at=data.get("finishedAt"),
        screen_source=data.get("screenSource"),
    )
    if not task.done and not keep_running:
        for step in task.steps:
            if step.status is StepStatus.RUNNING:
                step.status = StepStatus.FAILED
                step.error = step.error or INTERRUPTED_ERROR
                step.finished_at = now_ms
            elif step.status is StepStatus.PENDING:
                step.status = StepStatus.SKIPPED
        task.error = INTERRUPTED_ERROR
        if task.status is TaskStatus.IDLE:
            task.status = TaskStatus.PLANNING  # the state machine has no idle -> aborted
            task.started_at = task.started_at or task.created_at
        task.move_to(TaskStatus.ABORTED, now_ms)
    return task


def restore_order(
    records: list[Any], now_ms: int, running: frozenset[str] = frozenset()
) -> tuple[list[AgentTask], list[str]]:
    """Stored records → tasks oldest first (the latest last, as get_latest_task expects), and the ids
    of records to delete (unreadable, or beyond ``HISTORY_LIMIT``). Tasks in ``running`` (another tab
    runs them) keep their state."""
    tasks: list[AgentTask] = []
    drop: list[str] = []
    for record in records:
        try:
            running_elsewhere = isinstance(record, dict) and record.get("taskId") in running
            tasks.append(task_from_record(record, now_ms, keep_running=running_elsewhere))
        except (KeyError, TypeError, ValueError):
            if isinstance(record, dict) and isinstance(record.get("taskId"), str):
                drop.append(record["taskId"])
    tasks.sort(key=lambda task: (task.created_at, task.id))
    if len(tasks) > HISTORY_LIMIT:
        old = {task.id for task in tasks[:-HISTORY_LIMIT] if task.id not in running}
        drop += sorted(old)
        tasks = [task for task in tasks if task.id not in old]
    return tasks, drop
