"""The agent task records the server's pages stored, kept by the server: one truth across tabs and
browsers.

Tabs of one browser share their records through IndexedDB and a BroadcastChannel; a page of another
browser (or profile) shares nothing with them. So every page served by this server also hands each
record it stores to the server (``POST /api/task-record``), the server keeps the latest of each task
here, and hands them all to a page when it pairs and each new one to the page on the relay (a
``task`` frame): a page that replaces another mid-task answers get_latest_task and get_task_result with
the old page's record, and the old page's last word (``aborted``) reaches it too.

Pure: no sockets, no clock. A record that has ended is never replaced by one that has not (a late
write of an older state), and at most ``LEDGER_LIMIT`` tasks are kept (the oldest go first).
"""

from __future__ import annotations

from typing import Any

from ..tasks import TASK_ID_KEY, TASK_STATUS_KEY, TERMINAL_STATUSES

LEDGER_LIMIT = 50
# A record is a task's JSON with its steps' descriptions: far below this.
MAX_RECORD_BYTES = 1024 * 1024
_ENDED = frozenset(str(status) for status in TERMINAL_STATUSES)


def is_record(value: object) -> bool:
    """Whether ``value`` looks like a task record (an object with a string taskId and status)."""
    return (
        isinstance(value, dict)
        and isinstance(value.get(TASK_ID_KEY), str)
        and 0 < len(value[TASK_ID_KEY]) <= 200
        and isinstance(value.get(TASK_STATUS_KEY), str)
    )


class TaskLedger:
    """The latest record of each task, in the order tasks were first seen (the latest last)."""

    def __init__(self, limit: int = LEDGER_LIMIT) -> None:
        self._records: dict[str, dict[str, Any]] = {}
        self._limit = limit

    def __len__(self) -> int:
        return len(self._records)

    def put(self, record: dict[str, Any]) -> bool:
        """Keep ``record``; False (and nothing changes) when it is not newer than the one kept."""
        task_id = record[TASK_ID_KEY]
        kept = self._records.get(task_id)
        if kept is not None:
            if kept == record:
                return False
            if kept.get(TASK_STATUS_KEY) in _ENDED and record.get(TASK_STATUS_KEY) not in _ENDED:
                return False
        self._records[task_id] = record
        while len(self._records) > self._limit:
            del self._records[next(iter(self._records))]
        return True

    def records(self) -> list[dict[str, Any]]:
        return list(self._records.values())
