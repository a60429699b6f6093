"""TaskKeeper: the agent tasks a page keeps (the running one and its history) and their ids.

Bounded: past ``TASKS_KEPT`` the oldest finished tasks are forgotten (the page's storage keeps 50 across
reloads). One task runs at a time. Pure: tested in CPython.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

from ..tasks import AgentTask, TaskOptions

TASKS_KEPT = 100  # tasks a page keeps in memory (its storage keeps 50 across reloads)

__all__ = ["TASKS_KEPT", "TaskKeeper"]


class TaskKeeper:
    """The page's tasks by id, and the one running now."""

    def __init__(self, clock_ms: Callable[[], int]) -> None:
        self._tasks: dict[str, AgentTask] = {}
        self._running: AgentTask | None = None
        self._clock_ms = clock_ms

    @property
    def running(self) -> AgentTask | None:
        """The task the page's agent runs now, if any."""
        return self._running

    def get(self, task_id: str) -> AgentTask | None:
        return self._tasks.get(task_id)

    def all(self) -> list[AgentTask]:
        return list(self._tasks.values())

    def remember(self, task: AgentTask) -> None:
        """Keep a task (one restored from storage, or one just created); past TASKS_KEPT, the oldest
        finished ones are forgotten."""
        self._tasks[task.id] = task
        extra = len(self._tasks) - TASKS_KEPT
        if extra > 0:
            for old in [kept for kept in self._tasks.values() if kept.done and kept is not task][:extra]:
                del self._tasks[old.id]

    def start(self, goal: str, options: TaskOptions | None) -> AgentTask:
        """A new task for ``goal``, kept and marked running."""
        now = self._clock_ms()
        task = AgentTask(id=f"task-{now:x}-{secrets.token_hex(3)}", goal=goal, created_at=now)
        if options is not None:
            task.options = options
        self.remember(task)
        self._running = task
        return task

    def stop(self, task: AgentTask, *, forget: bool = False) -> None:
        """``task`` runs no more; ``forget``: it never began (refused before its first step)."""
        if self._running is task:
            self._running = None
        if forget:
            self._tasks.pop(task.id, None)
