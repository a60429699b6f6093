"""results.py: the Markdown report of Channel A (a task as the specification shows it) and truncation."""

from phone_agent.tasks import (
    AgentStep,
    AgentTask,
    StepStatus,
    TaskStatus,
    ToolCallRecord,
)
from phone_agent.tools.results import format_task_markdown, truncate


def finished_task() -> AgentTask:
    task = AgentTask(id="abc123", goal="Open WeChat and send a message to Zhang San", created_at=1000)
    task.move_to(TaskStatus.PLANNING, 1000)
    task.steps = [
        AgentStep(
            id="s1",
            index=1,
            title="Open WeChat",
            description="Launch the app",
            status=StepStatus.SUCCESS,
            started_at=1000,
            finished_at=6200,
            summary="WeChat is open",
            tool_calls=[ToolCallRecord("tap", {"x": 540, "y": 1200}, "tapped at (540,1200)", 80)],
        ),
        AgentStep(
            id="s2", index=2, title="Send", status=StepStatus.SUCCESS, started_at=6200, finished_at=33500
        ),
    ]
    task.move_to(TaskStatus.EXECUTING, 2000)
    task.conclusion = "WeChat message sent successfully"
    task.move_to(TaskStatus.FINISHED, 33500)
    return task


def test_markdown_report_matches_the_specification():
    report = format_task_markdown(finished_task())
    lines = report.splitlines()
    assert lines[0] == "## ✅ Agent Task Completed"
    assert "**Goal**: Open WeChat and send a message to Zhang San" in lines
    assert "**Status**: finished  **Steps**: 2/2 succeeded  **Duration**: 32.5s" in lines
    assert "**Conclusion**: WeChat message sent successfully" in lines
    assert "---" in lines
    assert "### ✅ Step 1: Open WeChat (5.2s)" in lines
    assert '- `tap({"x":540,"y":1200})` → tapped at (540,1200)' in lines
    assert "> WeChat is open" in lines


def test_markdown_report_of_a_failed_and_an_aborted_task():
    task = AgentTask(id="t2", goal="g", created_at=0)
    task.move_to(TaskStatus.PLANNING, 0)
    tried = ToolCallRecord("tap", {"x": 1, "y": 2}, "x" * 500, 3, ok=False)  # a long, failed call
    failed = {"status": StepStatus.FAILED, "started_at": 0, "finished_at": 1000, "error": "button not found"}
    task.steps = [
        AgentStep("a", 1, "Try", tool_calls=[tried], **failed),
        AgentStep("b", 2, "Next", status=StepStatus.SKIPPED),
    ]
    task.move_to(TaskStatus.EXECUTING, 0)
    task.error = "Step 1 failed"
    task.move_to(TaskStatus.FAILED, 1000)
    report = format_task_markdown(task)
    assert report.startswith("## ❌ Agent Task Failed")
    assert "**Steps**: 0/2 succeeded" in report
    assert "**Error**: Step 1 failed" in report
    assert "### ⏭️ Step 2: Next (–)" in report
    call_line = next(line for line in report.splitlines() if line.startswith("- `tap"))
    assert len(call_line) < 400 and call_line.endswith("…")

    aborted = AgentTask(id="t3", goal="g", created_at=0)
    aborted.move_to(TaskStatus.PLANNING, 0)
    aborted.move_to(TaskStatus.ABORTED, 10)
    assert format_task_markdown(aborted).startswith("## ⏹️ Agent Task Aborted")


def test_truncate_keeps_short_text_and_marks_long_text():
    assert truncate("abc", 5) == "abc"
    assert truncate("abcdefgh", 5) == "abcd…"
    assert len(truncate("x" * 1000)) == 300
