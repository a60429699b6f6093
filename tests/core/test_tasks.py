"""tasks.py: the task and step state machines (every allowed transition, every refused one), close_out,
and the JSON of task records (byte for byte what is stored today, both ways)."""

from __future__ import annotations

import itertools
import json

import jsonschema
import pytest

from phone_agent.tasks import (
    STEP_TRANSITIONS,
    TASK_TRANSITIONS,
    AgentStep,
    AgentTask,
    InvalidTransition,
    StepStatus,
    TaskStatus,
    close_out,
    skip_pending,
)
from phone_agent.tools.catalog import TASK_SCHEMA, TASK_SUMMARY_SCHEMA

T, S = TaskStatus, StepStatus

# The specification's diagram, the exits of planning it implies, and idle -> aborted (a task stopped
# before it began).
ALLOWED_TASK = {
    (T.IDLE, T.PLANNING),
    (T.IDLE, T.ABORTED),
    (T.IDLE, T.FAILED),
    (T.PLANNING, T.EXECUTING),
    (T.PLANNING, T.FAILED),
    (T.PLANNING, T.ABORTED),
    (T.EXECUTING, T.FINISHED),
    (T.EXECUTING, T.FAILED),
    (T.EXECUTING, T.ABORTED),
}
ALLOWED_STEP = {(S.PENDING, S.RUNNING), (S.PENDING, S.SKIPPED), (S.RUNNING, S.SUCCESS), (S.RUNNING, S.FAILED)}

# A record as the page stores it today (IndexedDB, the other tabs, a farm's bucket): a task that was
# executing, with a finished step, a running one and one not begun.
STORED_RECORD = (
    '{"taskId": "abc123", "goal": "Turn Wi-Fi on", "status": "executing", "conclusion": null, '
    '"error": null, "stepsCompleted": 1, "totalSteps": 3, "durationMs": null, "createdAt": 1700000000000, '
    '"startedAt": 1700000000010, "finishedAt": null, "steps": [{"id": "abc123-s1", "index": 1, '
    '"title": "Open Settings", "description": "Open the Settings app.", "summary": "Settings is open", '
    '"status": "success", "durationMs": 3500, "error": null, "toolCalls": [{"name": "launch_app", '
    '"args": {"package": "com.android.settings"}, "result": "launched com.android.settings", '
    '"durationMs": 310, "ok": true}, {"name": "tap", "args": {"x": 1, "y": 2}, '
    '"result": "Error: no such element", "durationMs": 4, "ok": false}], "startedAt": 1700000001000, '
    '"finishedAt": 1700000004500}, {"id": "abc123-s2", "index": 2, "title": "Turn Wi-Fi on", '
    '"description": "", "summary": null, "status": "running", "durationMs": null, "error": null, '
    '"toolCalls": [], "startedAt": 1700000004600, "finishedAt": null}, {"id": "abc123-s3", "index": 3, '
    '"title": "Check", "description": "See that it is on.", "summary": null, "status": "pending", '
    '"durationMs": null, "error": null, "toolCalls": [], "startedAt": null, "finishedAt": null}]}'
)


def stored_task() -> AgentTask:
    return AgentTask.from_json(json.loads(STORED_RECORD))


# -- the task's state machine ---------------------------------------------------------------------------


def test_the_task_table_is_the_specifications_diagram_with_its_implied_exits():
    table = {(old, new) for old, news in TASK_TRANSITIONS.items() for new in news}
    assert table == ALLOWED_TASK
    assert set(TASK_TRANSITIONS) == set(TaskStatus)


@pytest.mark.parametrize(("old", "new"), sorted(ALLOWED_TASK))
def test_every_allowed_task_transition_is_taken(old, new):
    task = AgentTask("t", "g", created_at=100, status=old)
    task.move_to(new, 500)
    assert task.status is new
    assert task.done is (new in (T.FINISHED, T.FAILED, T.ABORTED))
    assert task.finished_at == (500 if task.done else None)
    assert task.started_at == (500 if new is T.PLANNING else None)


@pytest.mark.parametrize(
    ("old", "new"), [pair for pair in itertools.product(TaskStatus, TaskStatus) if pair not in ALLOWED_TASK]
)
def test_every_other_task_transition_is_refused_and_changes_nothing(old, new):
    task = AgentTask("t", "g", created_at=100, status=old)
    with pytest.raises(InvalidTransition, match=f"task t: {old} -> {new} is not allowed"):
        task.move_to(new, 500)
    assert task.status is old and task.started_at is None and task.finished_at is None


def test_a_task_keeps_its_first_start_and_measures_from_it():
    task = AgentTask("t", "g", created_at=0)
    task.move_to(T.PLANNING, 5)
    task.move_to(T.EXECUTING, 6)
    task.move_to(T.ABORTED, 9)
    assert (task.started_at, task.finished_at, task.duration_ms) == (5, 9, 4)


# -- the step's state machine ---------------------------------------------------------------------------


def test_the_step_table_runs_a_step_once_or_skips_it():
    table = {(old, new) for old, news in STEP_TRANSITIONS.items() for new in news}
    assert table == ALLOWED_STEP
    assert set(STEP_TRANSITIONS) == set(StepStatus)


@pytest.mark.parametrize(("old", "new"), sorted(ALLOWED_STEP))
def test_every_allowed_step_transition_is_taken_and_stamped(old, new):
    step = AgentStep("s", 1, "title", status=old)
    step.move_to(new, 700)
    assert step.status is new
    assert step.started_at == (700 if new is S.RUNNING else None)
    assert step.finished_at == (700 if new in (S.SUCCESS, S.FAILED) else None)


@pytest.mark.parametrize(
    ("old", "new"), [pair for pair in itertools.product(StepStatus, StepStatus) if pair not in ALLOWED_STEP]
)
def test_every_other_step_transition_is_refused_and_changes_nothing(old, new):
    step = AgentStep("s", 1, "title", status=old)
    with pytest.raises(InvalidTransition, match=f"step s: {old} -> {new} is not allowed"):
        step.move_to(new, 700)
    assert step.status is old and step.started_at is None and step.finished_at is None


def test_a_step_that_ran_measures_its_run():
    step = AgentStep("s", 1, "title")
    step.move_to(S.RUNNING, 100)
    step.move_to(S.SUCCESS, 350)
    assert step.duration_ms == 250


def test_skip_pending_leaves_steps_that_began_alone():
    steps = [
        AgentStep("a", 1, "a", status=S.SUCCESS),
        AgentStep("b", 2, "b", status=S.RUNNING),
        AgentStep("c", 3, "c"),
    ]
    skip_pending(steps, 10)
    assert [step.status for step in steps] == [S.SUCCESS, S.RUNNING, S.SKIPPED]
    assert steps[2].started_at is None and steps[2].finished_at is None


# -- close_out ------------------------------------------------------------------------------------------


def test_close_out_fails_the_running_step_skips_the_rest_and_ends_the_task():
    task = stored_task()
    interrupted = close_out(task, T.ABORTED, 1_700_000_009_000, error="Timed out after 5000 ms.")
    assert [step.id for step in interrupted] == ["abc123-s2"]
    assert [step.status for step in task.steps] == [S.SUCCESS, S.FAILED, S.SKIPPED]
    running = task.steps[1]
    assert running.error == "Timed out after 5000 ms." and running.finished_at == 1_700_000_009_000
    assert task.steps[0].finished_at == 1_700_000_004_500  # the finished step stays as it was
    assert task.steps[2].finished_at is None
    assert task.status is T.ABORTED and task.error == "Timed out after 5000 ms."
    assert task.finished_at == 1_700_000_009_000 and task.conclusion is None


def test_close_out_keeps_a_steps_own_error():
    task = stored_task()
    task.steps[1].error = "the button is gone"
    close_out(task, T.FAILED, 9, error="The phone stopped answering: gone")
    assert task.steps[1].error == "the button is gone"
    assert task.status is T.FAILED and task.error == "The phone stopped answering: gone"


def test_close_out_as_finished_sets_the_conclusion_and_no_error():
    task = AgentTask("t", "g", created_at=0, status=T.EXECUTING)
    task.steps = [AgentStep("a", 1, "a", status=S.SUCCESS), AgentStep("b", 2, "b")]
    assert close_out(task, T.FINISHED, 50, conclusion="done") == []
    assert task.status is T.FINISHED and task.conclusion == "done" and task.error is None
    assert [step.status for step in task.steps] == [S.SUCCESS, S.SKIPPED]


def test_a_task_that_never_began_closes_out_aborted():
    task = AgentTask("t", "g", created_at=40)
    close_out(task, T.ABORTED, 90, error="stopped")
    assert task.status is T.ABORTED and task.started_at is None and task.duration_ms == 50


def test_close_out_refuses_what_the_table_refuses_before_changing_anything():
    task = AgentTask("t", "g", created_at=0, status=T.IDLE, steps=[AgentStep("a", 1, "a", status=S.RUNNING)])
    with pytest.raises(InvalidTransition, match="task t: idle -> finished is not allowed"):
        close_out(task, T.FINISHED, 5, conclusion="x")
    with pytest.raises(InvalidTransition, match="task t: executing does not end a task"):
        close_out(task, T.EXECUTING, 5)
    assert task.status is T.IDLE and task.error is None
    assert task.steps[0].status is S.RUNNING and task.steps[0].error is None
    ended = AgentTask("u", "g", created_at=0, status=T.FINISHED)
    with pytest.raises(InvalidTransition, match="task u: finished -> aborted is not allowed"):
        close_out(ended, T.ABORTED, 5, error="late")
    assert ended.status is T.FINISHED and ended.error is None


# -- the JSON of task records ---------------------------------------------------------------------------


def test_a_record_stored_today_loads_and_writes_back_byte_for_byte():
    task = stored_task()
    assert task.status is T.EXECUTING and task.created_at == 1_700_000_000_000
    assert task.steps[0].tool_calls[1].ok is False and task.steps[0].tool_calls[0].duration_ms == 310
    assert task.steps[1].status is S.RUNNING and task.steps[2].description == "See that it is on."
    assert json.dumps(task.to_json(), ensure_ascii=False) == STORED_RECORD


def test_a_closed_out_record_round_trips():
    task = stored_task()
    close_out(task, T.ABORTED, 1_700_000_009_000, error="stopped")
    data = task.to_json()
    assert data["status"] == "aborted" and data["durationMs"] == 8_990 and data["stepsCompleted"] == 1
    assert AgentTask.from_json(json.loads(json.dumps(data))).to_json() == data


def test_the_summary_and_the_record_without_steps_keep_their_keys_in_order():
    task = stored_task()
    assert json.dumps(task.summary_json()) == (
        '{"taskId": "abc123", "status": "executing", "conclusion": null, "stepsCompleted": 1, '
        '"totalSteps": 3, "durationMs": null, "error": null}'
    )
    without = task.to_json(include_steps=False)
    assert list(without) == list(task.to_json())[:-1] and "steps" not in without


def test_screenshots_stay_out_of_the_record():
    task = stored_task()
    task.steps[0].before_screenshot = "data:image/jpeg;base64,AAAA"
    assert "data:image" not in json.dumps(task.to_json())


def test_a_sparse_record_loads_with_the_defaults():
    task = AgentTask.from_json(
        {"taskId": "t", "steps": [{"toolCalls": [{"name": "tap"}], "description": None}]}
    )
    assert (task.goal, task.status, task.created_at, task.started_at) == ("", T.IDLE, 0, None)
    step = task.steps[0]
    assert (step.id, step.index, step.title, step.description, step.status) == ("", 0, "", "", S.PENDING)
    call = step.tool_calls[0]
    assert (call.args, call.result, call.duration_ms, call.ok) == ({}, "", 0, True)


@pytest.mark.parametrize(
    ("record", "error"),
    [
        ({"goal": "no id"}, KeyError),
        ({"taskId": "t", "status": "no-such-status"}, ValueError),
        ({"taskId": "t", "steps": [{"status": "done"}]}, ValueError),
        ({"taskId": "t", "steps": [{"index": None}]}, TypeError),
    ],
)
def test_a_record_that_is_not_one_is_refused(record, error):
    with pytest.raises(error):
        AgentTask.from_json(record)


# Keys a record carries only when it has something to say (the tools declare them, not as required).
OPTIONAL_KEYS = {"screenSource"}


def test_the_records_keys_are_the_ones_the_tools_declare():
    task = stored_task()
    summary_keys = list(TASK_SUMMARY_SCHEMA["properties"])
    assert list(task.summary_json()) == [key for key in summary_keys if key not in OPTIONAL_KEYS]
    assert set(task.to_json()) == set(TASK_SCHEMA["properties"]) - OPTIONAL_KEYS
    assert set(TASK_SCHEMA["required"]) <= set(task.to_json(include_steps=False))
    assert set(TASK_SUMMARY_SCHEMA["required"]) <= set(task.summary_json())
    assert not OPTIONAL_KEYS & (set(TASK_SCHEMA["required"]) | set(TASK_SUMMARY_SCHEMA["required"]))
    # With the optional field said, every declared key is written, in the summary's declared order.
    task.screen_source = "scrcpy frame (4 looks), screencap (1 look: scrcpy is not running)"
    assert list(task.summary_json()) == summary_keys
    assert set(task.to_json()) == set(TASK_SCHEMA["properties"])
    assert task.to_json()["screenSource"] == task.summary_json()["screenSource"] == task.screen_source
    for key in OPTIONAL_KEYS:
        assert TASK_SCHEMA["properties"][key] == TASK_SUMMARY_SCHEMA["properties"][key]
        assert TASK_SUMMARY_SCHEMA["properties"][key]["type"] == "string"


def test_the_records_values_match_the_declared_schemas():
    task = stored_task()
    for said in (None, "scrcpy frame (6 looks)"):
        task.screen_source = said
        jsonschema.validate(task.summary_json(), TASK_SUMMARY_SCHEMA)
        jsonschema.validate(task.to_json(), TASK_SCHEMA)
        jsonschema.validate(task.to_json(include_steps=False), TASK_SCHEMA)
    with pytest.raises(jsonschema.ValidationError):  # the check can fail: a wrong type is refused
        jsonschema.validate({**task.summary_json(), "screenSource": 6}, TASK_SUMMARY_SCHEMA)
