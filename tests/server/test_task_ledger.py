"""The server's task ledger (one truth across pages and browsers) and its relay frame."""

from __future__ import annotations

from phone_agent.relay.frames import TaskRecordFrame, parse_server_frame
from phone_agent.server.task_ledger import TaskLedger, is_record


def record(task_id: str, status: str, steps: int = 0) -> dict:
    return {"taskId": task_id, "status": status, "stepsCompleted": steps}


def test_the_latest_record_of_each_task_is_kept_and_an_ended_one_is_never_undone() -> None:
    ledger = TaskLedger(limit=3)
    assert ledger.put(record("a", "planning"))
    assert ledger.put(record("a", "executing", 1))
    assert not ledger.put(record("a", "executing", 1))  # the same again: nothing new
    assert ledger.put(record("a", "aborted", 1))
    assert not ledger.put(record("a", "executing", 2))  # a late write of an older state
    assert ledger.records() == [record("a", "aborted", 1)]
    for task_id in "bcd":
        ledger.put(record(task_id, "finished"))
    assert [r["taskId"] for r in ledger.records()] == ["b", "c", "d"]  # the oldest went first


def test_only_task_records_are_taken() -> None:
    assert is_record(record("a", "finished"))
    for value in (None, [], {"taskId": 1, "status": "x"}, {"taskId": "", "status": "x"}, {"taskId": "a"}):
        assert not is_record(value)


def test_a_task_frame_carries_the_record_to_the_page() -> None:
    frame = parse_server_frame(TaskRecordFrame(record("a", "aborted")).to_wire())
    assert frame == TaskRecordFrame(record("a", "aborted"))
    assert not isinstance(parse_server_frame('{"type": "task", "record": {"status": "x"}}'), TaskRecordFrame)
