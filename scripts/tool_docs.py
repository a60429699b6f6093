"""Write docs/tools.md, the tool reference, from the tool catalog and the error code list; and the parts
of manifest.json (the MCP bundle's: its tools, its version) and server.json (the MCP registry's entry: its
version) that come from the catalog and the package.

The catalog is the one source: run this after changing a tool in py/phone_agent/tools/ (catalog.py,
the device tools' family modules), errors.py or the version (`--check` only reports; a unit test runs it
that way). The rest of manifest.json and server.json is written by hand.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "py"))

from phone_agent import __version__  # noqa: E402
from phone_agent.errors import ERROR_CODE_MEANINGS  # noqa: E402
from phone_agent.tools.catalog import SPEC_TOOL_NAMES, ToolProfile, tools_for_profile  # noqa: E402
from phone_agent.tools.groups import GROUP_OF, GROUPS, GROUPS_TOOL_NAME, instructions  # noqa: E402
from phone_agent.tools.locators import FORMS  # noqa: E402

TARGET = ROOT / "docs" / "tools.md"
MANIFEST = ROOT / "manifest.json"
SERVER_JSON = ROOT / "server.json"
DIST_NAME = "phone-agent-mcp"
# Every tool the default (compact) profile offers: the catalog's and tool_groups.
TOOLS = tools_for_profile(ToolProfile.COMPACT)


def _wrapped(text: str, width: int = 100) -> list[str]:
    """``text`` in lines of at most ``width`` characters (words kept whole)."""
    lines: list[str] = []
    for word in text.split(" "):
        if lines and len(lines[-1]) + 1 + len(word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines


def render() -> str:
    out = [
        "# Tool reference",
        "",
        "Generated from the catalog in `py/phone_agent/tools/` (`catalog.py`: the six; `device_tools.py`:",
        "the device tools, each declared in its family's module: `screen.py`, `gestures.py`,",
        "`text_keys.py`, `apps.py`, `waits.py`, and the developer's loop: `packages.py`, `logs.py`,",
        "`files.py`, `clipboard.py`, `notifications.py`, `multitouch.py`, `recording.py`; `flow_tools.py`",
        "and `flow_keeping.py`: the flow tools, Maestro flows as README's Flows section describes them)",
        "by `scripts/tool_docs.py`; do not edit by hand. Both",
        "channels offer the same tools: Channel A through `phone-agent mcp` (MCP, relayed to the page),",
        "Channel B on `document.modelContext` in the page (WebMCP). The page's agent calls the device",
        "actions marked *agent* as its own actions.",
        "",
        "Tool profiles (`phone-agent serve|mcp --tools PROFILE`): `compact` (default) lists the `core`",
        f"group and `{GROUPS_TOOL_NAME}`, which lists the other groups and enables them (the list then",
        "changes: `notifications/tools/list_changed`); every tool is callable by name whatever is listed.",
        "`all` lists every tool but `tool_groups`, `agent` the specification's six",
        f"({', '.join(SPEC_TOOL_NAMES)}), `read-only` only the tools marked read.",
        "",
        "| group | what | tools |",
        "|---|---|---|",
        *(f"| `{g.name}` | {g.summary} | {', '.join(f'`{t}`' for t in g.tools)} |" for g in GROUPS),
        "",
        "The server's `instructions` (compact profile), written from the same table:",
        "",
        *(f"> {line}" for line in _wrapped(instructions(True))),
        "",
        "**Targets.** Tools that act on an element take `target`: " + FORMS + ". A ref is valid for",
        "the screen it came from: once the screen has changed, using it answers `stale_ref`. Several",
        "matches: the first in reading order is used and the answer says how many matched. Coordinates",
        "are device pixels. A password field's text is never read back.",
        "",
        "Every tool answers `structuredContent` matching its output schema beside its text, and every",
        "failure as an `isError` result (see Errors below).",
        "",
        "**Files.** Inline, bytes travel as base64 (`contentBase64`; in up to 256 MiB, answers up to",
        "64 MiB). A `path` names a file on the MCP client's machine: `phone-agent mcp` (stdio, with or",
        "without `--farm`) reads it (push_file, install_app: up to 256 MiB) or writes the answer's bytes",
        "to it (pull_file, stop_recording: any size; a directory gets the file's own name) and answers",
        "`path` instead. Through `phone-agent mcp` the file streams in 1 MiB chunks between it and the",
        "page (the page pushes or pulls them over ADB sync as they come, with progress; a download is",
        "renamed into place only when whole); the farm's front carries it inline. Over HTTP `/mcp` and",
        "WebMCP a `path` is refused (`invalid_argument`): the server never reads or writes its own files",
        "for a caller.",
        "",
        "| tool | group | kind | parameters | Channel A time limit |",
        "|---|---|---|---|---|",
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
        if tool.agent_action:
            kind += ", agent"
        limit = f"{tool.relay_timeout_ms // 1000} s"
        if tool.timeout_arg is not None:
            grace = tool.relay_timeout_ms if tool.timeout_grace_ms is None else tool.timeout_grace_ms
            limit = f"{tool.timeout_arg} + {grace // 1000} s"
        group = GROUP_OF.get(tool.name, "—")
        out.append(f"| `{tool.name}` | {group} | {kind} | {params} | {limit} |")
    for tool in TOOLS:
        out += ["", f"## {tool.name}", "", tool.description, ""]
        out += ["Input schema:", "", "```json", json.dumps(tool.input_schema, indent=2), "```", ""]
        if tool.output_schema is not None:
            out += ["Output schema (structuredContent):", "", "```json"]
            out += [json.dumps(tool.output_schema, indent=2), "```", ""]
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


def render_manifest(current: str) -> str:
    """manifest.json with its tools (every tool the bundle's default profile offers) and its
    version (the bundle runs the package of this version) from the source."""
    manifest = json.loads(current)
    manifest["version"] = __version__
    config = manifest["server"]["mcp_config"]
    pinned = f"{DIST_NAME}=={__version__}"
    config["args"] = [pinned if arg.startswith(DIST_NAME) else arg for arg in config["args"]]
    manifest["tools"] = [{"name": tool.name, "description": tool.description} for tool in TOOLS]
    return json.dumps(manifest, indent=2, ensure_ascii=False) + "\n"


def render_server_json(current: str) -> str:
    """server.json with the package's version."""
    entry = json.loads(current)
    entry["version"] = __version__
    for package in entry.get("packages", []):
        if package.get("identifier") == DIST_NAME:
            package["version"] = __version__
    return json.dumps(entry, indent=2, ensure_ascii=False) + "\n"


def main(argv: list[str]) -> int:
    outputs = [(TARGET, lambda _current: render())]
    outputs += [(MANIFEST, render_manifest), (SERVER_JSON, render_server_json)]
    stale = []
    for target, make in outputs:
        current = target.read_text() if target.exists() else ""
        wanted = make(current)
        if current == wanted:
            continue
        if "--check" in argv:
            stale.append(target.name)
        else:
            target.write_text(wanted)
    if stale:
        print(f"{', '.join(stale)} out of date: run python scripts/tool_docs.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
