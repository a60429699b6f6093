"""The page's task history and model defaults, in CPython: stored tasks come back as they were (a
task interrupted by a reload comes back aborted), and ``serve|mcp --model-base-url --model`` hand the
page a model whose key comes from the environment and never shows in the options' repr."""

from __future__ import annotations

import json

from phone_agent.browser.task_history import (
    HISTORY_LIMIT,
    INTERRUPTED_ERROR,
    restore_order,
    task_from_record,
    task_record,
    unfinished_ids,
)
from phone_agent.cli import build_parser, options_from_args
from phone_agent.server.app import api_config
from phone_agent.tasks import AgentStep, AgentTask, StepStatus, TaskStatus, ToolCallRecord


def finished_task(task_id: str = "t1", created: int = 1_000) -> AgentTask:
    task = AgentTask(task_id, "Turn Wi-Fi on", created)
    task.move_to(TaskStatus.PLANNING, created + 1)
    task.steps = [
        AgentStep(
            f"{task_id}-s1",
            1,
            "Open Settings",
            "Open it.",
            summary="open",
            status=StepStatus.SUCCESS,
            tool_calls=[ToolCallRecord("tap", {"x": 1, "y": 2}, "tapped at (2,4)", 12, True)],
            before_screenshot="data:image/jpeg;base64,AAAA",
            started_at=created + 2,
            finished_at=created + 50,
        ),
    ]
    task.move_to(TaskStatus.EXECUTING, created + 2)
    task.conclusion = "Wi-Fi is on"
    task.move_to(TaskStatus.FINISHED, created + 60)
    return task


def test_a_finished_task_round_trips_without_its_screenshots():
    task = finished_task()
    record = task_record(task)
    assert "data:image" not in str(record)
    again = task_from_record(record, now_ms=99_999)
    assert again.to_json() == task.to_json()
    assert again.steps[0].before_screenshot is None


def test_a_task_running_at_reload_comes_back_aborted_with_its_finished_steps():
    task = finished_task()
    task.status = TaskStatus.EXECUTING
    task.finished_at = None
    task.conclusion = None
    task.steps.append(AgentStep("t1-s2", 2, "Turn it on", status=StepStatus.RUNNING, started_at=1_070))
    task.steps.append(AgentStep("t1-s3", 3, "Check"))
    again = task_from_record(task_record(task), now_ms=2_000)
    assert again.status is TaskStatus.ABORTED and again.error == INTERRUPTED_ERROR
    assert [s.status for s in again.steps] == [StepStatus.SUCCESS, StepStatus.FAILED, StepStatus.SKIPPED]
    assert again.finished_at == 2_000 and again.steps[1].error == INTERRUPTED_ERROR
    planning = AgentTask("t2", "g", 5)
    assert task_from_record(task_record(planning), now_ms=9).status is TaskStatus.ABORTED


def test_restore_orders_by_creation_keeps_the_newest_and_drops_unreadable_records():
    records = [task_record(finished_task(f"t{i}", 1_000 + i)) for i in range(HISTORY_LIMIT + 3)]
    records.reverse()
    records.append({"taskId": "broken", "status": "no-such-status"})
    tasks, drop = restore_order(records, now_ms=10**9)
    assert [t.id for t in tasks] == [f"t{i}" for i in range(3, HISTORY_LIMIT + 3)]
    assert sorted(drop) == sorted(["broken", "t0", "t1", "t2"])


def test_a_task_another_tab_still_runs_comes_back_as_it_stands_and_is_never_dropped():
    running = finished_task("t-live", 500)
    running.status, running.finished_at, running.conclusion = TaskStatus.EXECUTING, None, None
    running.steps.append(AgentStep("t-live-s2", 2, "Turn it on", status=StepStatus.RUNNING, started_at=570))
    records = [task_record(running)] + [
        task_record(finished_task(f"t{i}", 1_000 + i)) for i in range(HISTORY_LIMIT + 1)
    ]
    tasks, drop = restore_order(records, now_ms=10**9, running=frozenset({"t-live"}))
    live = next(task for task in tasks if task.id == "t-live")
    assert live.status is TaskStatus.EXECUTING and live.error is None and live.finished_at is None
    assert [s.status for s in live.steps] == [StepStatus.SUCCESS, StepStatus.RUNNING]
    assert "t-live" not in drop  # the oldest, but still running elsewhere
    alone, _ = restore_order([task_record(running)], now_ms=10**9)
    assert alone[0].status is TaskStatus.ABORTED and alone[0].error == INTERRUPTED_ERROR


# A finished task's record exactly as pages have stored it in IndexedDB before (it must still load).
OLD_RECORD = (
    '{"taskId": "old-1", "goal": "Open the clock", "status": "finished", '
    '"conclusion": "The clock app is open", "error": null, "stepsCompleted": 1, "totalSteps": 1, '
    '"durationMs": 995, "createdAt": 1690000000000, '
    '"startedAt": 1690000000005, "finishedAt": 1690000001000, "steps": [{"id": "old-1-s1", "index": 1, '
    '"title": "Open Clock", "description": "", "summary": "Clock is open", "status": "success", '
    '"durationMs": 800, "error": null, "toolCalls": [{"name": "launch_app", "args": {"package": '
    '"com.android.deskclock"}, "result": "launched", "durationMs": 120, "ok": true}], '
    '"startedAt": 1690000000100, "finishedAt": 1690000000900}]}'
)


def test_a_record_stored_by_an_earlier_page_comes_back_as_it_was():
    tasks, drop = restore_order([json.loads(OLD_RECORD)], now_ms=10**13)
    assert drop == [] and [task.id for task in tasks] == ["old-1"]
    task = tasks[0]
    assert task.status is TaskStatus.FINISHED and task.conclusion == "The clock app is open"
    assert task.steps[0].tool_calls[0].args == {"package": "com.android.deskclock"}
    assert json.dumps(task_record(task), ensure_ascii=False) == OLD_RECORD


def test_unfinished_ids_are_the_records_that_had_not_ended():
    records = [
        task_record(finished_task("done")),
        {"taskId": "running", "status": "executing"},
        {"taskId": "new", "status": "idle"},
        {"taskId": 7, "status": "planning"},
        "not a record",
    ]
    assert unfinished_ids(records) == {"running", "new"}


def test_model_defaults_reach_the_page_config_with_the_key_from_the_environment(monkeypatch):
    monkeypatch.delenv("PHONE_AGENT_MODEL_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-XYZ")
    args = build_parser().parse_args(
        ["mcp", "--model-base-url", "http://127.0.0.1:11434/v1", "--model", "qwen"]
    )
    options = options_from_args(args)
    model = options.page_model_defaults()
    assert model == {
        "provider": "custom",
        "baseUrl": "http://127.0.0.1:11434/v1",
        "model": "qwen",
        "apiKey": "sk-openai-XYZ",
    }
    assert "sk-openai-XYZ" not in repr(options)
    monkeypatch.setenv("PHONE_AGENT_MODEL_API_KEY", "sk-phone-agent")
    assert options_from_args(args).page_model_defaults()["apiKey"] == "sk-phone-agent"
    assert api_config({"model": model})["model"] == model

    bare = options_from_args(build_parser().parse_args(["serve"]))
    assert bare.page_model_defaults() is None and bare.model_api_key is None
