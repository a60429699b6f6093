"""Builders for tool results (MCP CallToolResult in wire form) and the Markdown task report.

Results are plain dicts with camelCase keys because they travel as JSON over the relay and are handed
to WebMCP as objects; the MCP server turns them into the SDK's types at its edge.
"""

from __future__ import annotations

import base64
import json
from typing import Any

from ..tasks import AgentTask, StepStatus, TaskStatus

TOOL_RESULT_PREVIEW_CHARS = 300


def dumps_compact(value: Any) -> str:
    """JSON as the specification prints it: no spaces, non-ASCII kept readable."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def text_result(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}]}


def action_result(text: str, structured: dict[str, Any], *more_text: str) -> dict[str, Any]:
    """A tool's answer: the text a model reads and the same facts as structuredContent."""
    content = [{"type": "text", "text": text}, *({"type": "text", "text": extra} for extra in more_text)]
    return {"content": content, "structuredContent": structured}


def json_result(data: dict[str, Any]) -> dict[str, Any]:
    """JSON as text content (what the specification shows) and as structuredContent (for programs)."""
    return {"content": [{"type": "text", "text": dumps_compact(data)}], "structuredContent": data}


def png_result(png: bytes) -> dict[str, Any]:
    return {
        "content": [{"type": "image", "data": base64.b64encode(png).decode("ascii"), "mimeType": "image/png"}]
    }


def truncate(text: str, limit: int = TOOL_RESULT_PREVIEW_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def format_seconds(ms: int | None) -> str:
    return "–" if ms is None else f"{ms / 1000:.1f}s"


_TASK_HEADINGS = {
    TaskStatus.FINISHED: "## ✅ Agent Task Completed",
    TaskStatus.FAILED: "## ❌ Agent Task Failed",
    TaskStatus.ABORTED: "## ⏹️ Agent Task Aborted",
}
STEP_ICONS = {
    StepStatus.SUCCESS: "✅",
    StepStatus.FAILED: "❌",
    StepStatus.SKIPPED: "⏭️",
    StepStatus.RUNNING: "▶️",
    StepStatus.PENDING: "⏳",
}


def format_task_markdown(task: AgentTask) -> str:
    """The readable report run_agent_task answers on Channel A (the specification's format)."""
    heading = _TASK_HEADINGS.get(task.status, f"## ⏳ Agent Task {str(task.status).capitalize()}")
    lines = [
        heading,
        "",
        f"**Goal**: {task.goal}",
        f"**Status**: {task.status}  **Steps**: {task.steps_completed}/{len(task.steps)} succeeded  "
        f"**Duration**: {format_seconds(task.duration_ms)}",
    ]
    if task.conclusion:
        lines += ["", f"**Conclusion**: {task.conclusion}"]
    if task.error:
        lines += ["", f"**Error**: {task.error}"]
    if task.screen_source:
        lines += ["", f"**Screen**: {task.screen_source}"]
    lines += ["", f"**Task ID**: `{task.id}`"]
    if task.steps:
        lines += ["", "---"]
    for step in task.steps:
        lines += [
            "",
            f"### {STEP_ICONS[step.status]} Step {step.index}: {step.title} "
            f"({format_seconds(step.duration_ms)})",
        ]
        if step.summary:
            lines.append(f"> {step.summary}")
        for call in step.tool_calls:
            arrow = "→" if call.ok else "→ ❌"
            lines.append(f"- `{call.name}({dumps_compact(call.args)})` {arrow} {truncate(call.result)}")
        if step.error:
            lines.append(f"- **Error**: {step.error}")
    return "\n".join(lines) + "\n"
