"""Write docs/tools.md, the tool reference, from the tool catalog and the error code list.

The catalog is the one source: run this after changing py/phone_agent/tools.py or errors.py
(`--check` only reports; a unit test runs it that way).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "py"))

from phone_agent.errors import ERROR_CODE_MEANINGS  # noqa: E402
from phone_agent.tools import TOOLS  # noqa: E402

TARGET = ROOT / "docs" / "tools.md"


def render() -> str:
    out = [
        "# Tool reference",
        "",
        "Generated from `py/phone_agent/tools.py` by `scripts/tool_docs.py`; do not edit by hand.",
        "Both channels offer the same tools: Channel A through `phone-agent mcp` (MCP over stdio, relayed",
        "to the page), Channel B on `document.modelContext` in the page (WebMCP).",
        "",
        "| tool | kind | parameters | Channel A time limit |",
        "|---|---|---|---|",
    ]
    for tool in TOOLS:
        props = tool.input_schema["properties"]
        required = tool.input_schema.get("required", [])
        params = (
            ", ".join(
                f"`{name}`{'' if name in required else '?'}: {spec['type']}" for name, spec in props.items()
            )
            or "—"
        )
        kind = "read" if tool.read_only else ("write, consequential" if tool.consequential else "write")
        limit = "timeoutMs + 5 s" if tool.name == "run_agent_task" else f"{tool.relay_timeout_ms // 1000} s"
        out.append(f"| `{tool.name}` | {kind} | {params} | {limit} |")
    for tool in TOOLS:
        out += ["", f"## {tool.name}", "", tool.description, ""]
        out += ["Input schema:", "", "```json", json.dumps(tool.input_schema, indent=2), "```", ""]
        out.append(
            f"Annotations — MCP: `{json.dumps(tool.mcp_annotations())}`; "
            f"WebMCP: `{json.dumps(tool.webmcp_annotations())}`"
        )
    out += [
        "",
        "## Errors",
        "",
        "A failure is a result with `isError: true`. Its `content` holds the message a model reads; its",
        "`structuredContent` holds `{code, message, remedy, retryable}` (and sometimes `details`).",
        "",
        "| code | meaning |",
        "|---|---|",
    ]
    out += [f"| `{code}` | {meaning} |" for code, meaning in ERROR_CODE_MEANINGS.items()]
    return "\n".join(out) + "\n"


def main(argv: list[str]) -> int:
    wanted = render()
    current = TARGET.read_text() if TARGET.exists() else ""
    if current == wanted:
        return 0
    if "--check" in argv:
        print("docs/tools.md is out of date: run python scripts/tool_docs.py", file=sys.stderr)
        return 1
    TARGET.write_text(wanted)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
