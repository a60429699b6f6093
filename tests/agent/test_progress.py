"""Progress: the seed's lifecycle lines for the relay, structured events for the panel, thinking
buffered (never one frame per token), and a broken sink or listener never stops anything."""

from __future__ import annotations

from phone_agent.agent.progress import ProgressReporter
from phone_agent.tasks import AgentStep, StepStatus


def step(index: int = 1, status: StepStatus = StepStatus.PENDING) -> AgentStep:
    return AgentStep(
        id=f"s{index}", index=index, title="Open Settings", description="Tap Settings.", status=status
    )


def test_lines_follow_the_lifecycle_and_thinking_is_buffered():
    lines: list[str] = []
    events = []
    reporter = ProgressReporter(lines.append)
    reporter.subscribe(events.append)
    first = step()
    reporter.on_planned([first, step(2)])
    reporter.on_step_start(first)
    for token in ["I ", "see ", "Settings."]:
        reporter.on_step_text(token)
    reporter.on_tool_call("tap", {"x": 1, "y": 2})
    reporter.on_tool_result("tap", "x" * 400)
    reporter.on_step_text("Done now.")
    first.status, first.started_at, first.finished_at = StepStatus.SUCCESS, 1000, 6200
    reporter.on_step_end(first)
    reporter.on_error("boom")
    assert lines == [
        "📋 Execution plan generated (2 steps total)\n1. Open Settings\n2. Open Settings",
        "▶️ Step 1: Open Settings\nTap Settings.",
        "💭 I see Settings.",
        '🔧 Calling tap({"x":1,"y":2})',
        "→ " + "x" * 299 + "…",
        "💭 Done now.",
        "✅ Step 1 completed (success, duration 5.2s)",
        "❌ Agent execution error: boom",
    ]
    assert len(lines[4]) == 2 + 300  # the result is cut to 300 characters
    kinds = [event.kind for event in events]
    assert kinds.count("step_text") == 4  # the panel sees every token; the relay does not
    assert [e.data["delta"] for e in events if e.kind == "step_text"][:3] == ["I ", "see ", "Settings."]
    assert events[0].data["steps"][1] == {
        "index": 2,
        "title": "Open Settings",
        "description": "Tap Settings.",
    }


def test_failed_and_skipped_steps_and_a_broken_sink():
    def broken(_: str) -> None:
        raise RuntimeError("relay gone")

    seen = []
    reporter = ProgressReporter(broken)
    reporter.subscribe(lambda event: 1 / 0)
    unsubscribe = reporter.subscribe(seen.append)
    failed = step(status=StepStatus.FAILED)
    failed.error, failed.started_at, failed.finished_at = "no such button", 0, 1500
    reporter.on_step_end(failed)
    assert seen[-1].text == "❌ Step 1 completed (failed, duration 1.5s): no such button"
    unsubscribe()
    reporter.on_step_end(step(2, StepStatus.SKIPPED))
    assert len(seen) == 1


def test_long_thinking_keeps_its_end():
    lines: list[str] = []
    reporter = ProgressReporter(lines.append)
    reporter.on_step_text("a" * 5000 + "END")
    reporter.flush()
    assert lines[0].endswith("END") and len(lines[0]) <= 1003
    reporter.flush()
    assert len(lines) == 1  # nothing buffered: nothing sent
