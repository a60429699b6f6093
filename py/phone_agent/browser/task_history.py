"""Task history that survives a reload: the task records kept in IndexedDB ("tasks") and what a
reload makes of them.

Pure Python (no ``js``), so it is tested in CPython. A record is a task's JSON (``AgentTask.to_json``;
screenshots are left out: they are large and get_task_result does not answer them). A task that was
still running when the page went away cannot go on: it is closed out aborted (``tasks.close_out``),
with its finished steps and an error that says what happened — unless
another tab of this browser still runs it (it holds the task's Web Lock, ``task_lock_name``): then it
comes back as it stands, and the tab that runs it keeps writing its record.
"""

from __future__ import annotations

from typing import Any

from ..tasks import TASK_ID_KEY, TASK_STATUS_KEY, TERMINAL_STATUSES, AgentTask, TaskStatus, close_out

HISTORY_LIMIT = 50  # tasks kept across reloads; older ones are forgotten
INTERRUPTED_ERROR = "The page was closed or reloaded while this task was running; it was stopped there."


AGENT_LOCK = "phone-agent:agent"  # held by the tab whose agent drives the phone: one task at a time


def task_lock_name(task_id: str) -> str:
    """The Web Lock a tab holds while it runs this task and until its last record is written."""
    return f"phone-agent:task:{task_id}"


def task_record(task: AgentTask) -> dict[str, Any]:
    """What is stored for a task: get_task_result's JSON (no screenshots) plus step descriptions."""
    return task.to_json(include_steps=True)


def task_from_record(data: dict[str, Any], now_ms: int, keep_running: bool = False) -> AgentTask:
    """The task a stored record describes; one that had not ended is closed out now, as aborted,
    unless ``keep_running`` (another tab still runs it)."""
    task = AgentTask.from_json(data)
    if not task.done and not keep_running:
        close_out(task, TaskStatus.ABORTED, now_ms, error=INTERRUPTED_ERROR)
    return task


def unfinished_ids(records: list[Any]) -> set[str]:
    """The ids of the stored tasks that had not ended when they were last written."""
    ended = {str(status) for status in TERMINAL_STATUSES}
    return {
        record[TASK_ID_KEY]
        for record in records
        if isinstance(record, dict)
        and isinstance(record.get(TASK_ID_KEY), str)
        and record.get(TASK_STATUS_KEY) not in ended
    }


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
            running_elsewhere = isinstance(record, dict) and record.get(TASK_ID_KEY) in running
            tasks.append(task_from_record(record, now_ms, keep_running=running_elsewhere))
        except (KeyError, TypeError, ValueError):
            if isinstance(record, dict) and isinstance(record.get(TASK_ID_KEY), str):
                drop.append(record[TASK_ID_KEY])
    tasks.sort(key=lambda task: (task.created_at, task.id))
    if len(tasks) > HISTORY_LIMIT:
        old = {task.id for task in tasks[:-HISTORY_LIMIT] if task.id not in running}
        drop += sorted(old)
        tasks = [task for task in tasks if task.id not in old]
    return tasks, drop
