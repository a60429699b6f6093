"""The tool catalog: the one source of tool names, descriptions, schemas, annotations and timeouts.

The page registers its WebMCP tools from it, the MCP server lists its tools from it, the relay takes
its timeouts from it, and the docs' tool reference is generated from it. ``validate_arguments`` checks
a call against the schema here, because Chrome does not validate WebMCP input and the relay must not
trust what arrives.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from .errors import ErrorCode, ToolError


class Channel(StrEnum):
    """How a call reached the page: A is the relay from ``phone-agent mcp``, B is WebMCP."""

    RELAY = "relay"
    WEBMCP = "webmcp"


# run_agent_task's default time budget per channel (the specification's numbers).
DEFAULT_TASK_TIMEOUT_MS = {Channel.RELAY: 1_200_000, Channel.WEBMCP: 120_000}
# The relay waits this much longer than the task's own budget before it gives up on the page.
RELAY_TASK_GRACE_MS = 5_000
MIN_TASK_TIMEOUT_MS = 1_000
MAX_TASK_TIMEOUT_MS = 24 * 3_600_000


@dataclass(frozen=True)
class ToolSpec:
    """One tool as both channels offer it."""

    name: str
    title: str
    description: str
    input_schema: dict[str, Any]
    read_only: bool
    consequential: bool
    relay_timeout_ms: int
    # What structuredContent looks like when the call succeeds (MCP ``outputSchema``); None: no schema.
    output_schema: dict[str, Any] | None = None
    # The answer carries what the phone shows (screen text can hold instructions a model must not follow).
    untrusted_content: bool = False

    def mcp_annotations(self) -> dict[str, Any]:
        """Annotations for Channel A (MCP ``ToolAnnotations``, wire names)."""
        notes: dict[str, Any] = {"title": self.title, "readOnlyHint": self.read_only}
        if not self.read_only:
            notes["destructiveHint"] = self.consequential
            notes["idempotentHint"] = False
        notes["openWorldHint"] = self.consequential
        return notes

    def webmcp_annotations(self) -> dict[str, Any]:
        """Annotations for Channel B; Chrome keeps ``readOnlyHint`` and ``consequentialHint``."""
        notes: dict[str, Any] = {"readOnlyHint": self.read_only}
        if self.consequential:
            notes["consequentialHint"] = True
        if self.untrusted_content:
            notes["untrustedContentHint"] = True
        return notes

    def timeout_ms(self, args: dict[str, Any]) -> int:
        """The relay's time limit for one call with these (validated) arguments."""
        if self.name == "run_agent_task":
            budget = args.get("timeoutMs", DEFAULT_TASK_TIMEOUT_MS[Channel.RELAY])
            return int(budget) + RELAY_TASK_GRACE_MS
        return self.relay_timeout_ms


def _object(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="run_agent_task",
        title="Run a phone agent task",
        description=(
            "Run an AI agent automation task on the connected Android phone. The agent plans the goal "
            "into steps, then carries each out by looking at the screen and tapping, swiping and typing "
            "(Plan-and-Resolve). Blocks until the task ends and answers a report of every step. One task "
            "runs at a time; call abort_task to stop it early."
        ),
        input_schema=_object(
            {
                "goal": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 4000,
                    "description": "The task in natural language, e.g. "
                    '"Open Messages and send Zhang San: see you tomorrow".',
                },
                "timeoutMs": {
                    "type": "number",
                    "minimum": MIN_TASK_TIMEOUT_MS,
                    "maximum": MAX_TASK_TIMEOUT_MS,
                    "description": "Longest the task may run, in ms. Default 1200000 (20 min) through "
                    "phone-agent mcp, 120000 (2 min) through WebMCP.",
                },
            },
            required=["goal"],
        ),
        read_only=False,
        consequential=True,
        relay_timeout_ms=DEFAULT_TASK_TIMEOUT_MS[Channel.RELAY] + RELAY_TASK_GRACE_MS,
    ),
    ToolSpec(
        name="abort_task",
        title="Abort the running task",
        description="Abort the agent task that is running now. Its finished steps are kept and it is "
        "marked aborted. Answers an error when no task is running.",
        input_schema=_object({}),
        read_only=False,
        consequential=False,
        relay_timeout_ms=10_000,
    ),
    ToolSpec(
        name="get_task_result",
        title="Get a task's result",
        description="The detailed result of one agent task by its taskId (from run_agent_task), as JSON: "
        "goal, status, conclusion, error, duration and, unless includeSteps is false, every step.",
        input_schema=_object(
            {
                "taskId": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 200,
                    "description": "The taskId run_agent_task answered.",
                },
                "includeSteps": {
                    "type": "boolean",
                    "default": True,
                    "description": "Include the per-step records (default true).",
                },
            },
            required=["taskId"],
        ),
        read_only=True,
        consequential=False,
        relay_timeout_ms=10_000,
    ),
    ToolSpec(
        name="get_latest_task",
        title="Get the latest task",
        description="The full result, steps included, of the most recent agent task in this page, in "
        "the same JSON as get_task_result.",
        input_schema=_object({}),
        read_only=True,
        consequential=False,
        relay_timeout_ms=10_000,
    ),
    ToolSpec(
        name="take_screenshot",
        title="Take a screenshot",
        description="A screenshot of the connected phone's screen, as a PNG image.",
        input_schema=_object({}),
        read_only=True,
        consequential=False,
        relay_timeout_ms=30_000,
    ),
    ToolSpec(
        name="get_device_status",
        title="Get device status",
        description="Whether a phone is connected and, if so, its model, brand, Android release, SDK "
        'level, serial and screen size, as JSON. Answers {"connected": false} when none is.',
        input_schema=_object({}),
        read_only=True,
        consequential=False,
        relay_timeout_ms=15_000,
    ),
)

TOOLS_BY_NAME: dict[str, ToolSpec] = {tool.name: tool for tool in TOOLS}
TOOL_NAMES: tuple[str, ...] = tuple(tool.name for tool in TOOLS)
# The specification's six tools, in its order.
SPEC_TOOL_NAMES: tuple[str, ...] = (
    "run_agent_task",
    "abort_task",
    "get_task_result",
    "get_latest_task",
    "take_screenshot",
    "get_device_status",
)


class ToolProfile(StrEnum):
    """Which tools a server offers (``--tools``): every tool, the specification's six, or read-only ones."""

    ALL = "all"
    AGENT = "agent"
    READ_ONLY = "read-only"


DEFAULT_TOOL_PROFILE = ToolProfile.ALL


def tools_for_profile(profile: str | ToolProfile = DEFAULT_TOOL_PROFILE) -> tuple[ToolSpec, ...]:
    """The catalog's tools a profile offers, in catalog order; ValueError for an unknown profile."""
    chosen = ToolProfile(profile)
    if chosen is ToolProfile.AGENT:
        return tuple(TOOLS_BY_NAME[name] for name in SPEC_TOOL_NAMES)
    if chosen is ToolProfile.READ_ONLY:
        return tuple(tool for tool in TOOLS if tool.read_only)
    return TOOLS


def get_tool(name: Any) -> ToolSpec:
    """The spec of the tool ``name``, or a ToolError naming the tools that exist."""
    if isinstance(name, str) and name in TOOLS_BY_NAME:
        return TOOLS_BY_NAME[name]
    raise ToolError(
        ErrorCode.UNKNOWN_TOOL,
        f"Unknown tool {name!r}. The tools are: {', '.join(TOOL_NAMES)}.",
        remedy="Call one of the listed tools (tools/list shows their parameters).",
        details={"tool": name if isinstance(name, str) else repr(name)},
    )


_JSON_TYPES = {
    "string": "a string",
    "number": "a number",
    "integer": "an integer",
    "boolean": "a boolean (true or false)",
    "object": "an object",
}


def _type_ok(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind in ("number", "integer"):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        if not math.isfinite(value):
            return False
        return kind == "number" or float(value).is_integer()
    if kind == "object":
        return isinstance(value, dict)
    return True


def _describe(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number" if math.isfinite(value) else f"the non-finite number {value}"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _bad(tool: ToolSpec, field: str, problem: str) -> ToolError:
    params = (
        ", ".join(
            f"{key}{'' if key in tool.input_schema.get('required', []) else '?'}: {spec['type']}"
            for key, spec in tool.input_schema["properties"].items()
        )
        or "none"
    )
    return ToolError(
        ErrorCode.INVALID_ARGUMENT,
        f'Invalid argument for {tool.name}: "{field}" {problem}.',
        remedy=f"Call {tool.name} again with valid arguments. Its parameters: {params}.",
        details={"tool": tool.name, "field": field},
    )


def validate_arguments(tool: ToolSpec, args: Any) -> dict[str, Any]:
    """Check ``args`` against the tool's schema and return them with defaults filled in.

    Raises ToolError(invalid_argument) naming the first bad field. ``None`` counts as ``{}`` (MCP
    clients omit ``arguments`` for tools without parameters).
    """
    if args is None:
        args = {}
    if not isinstance(args, dict):
        raise _bad(tool, "arguments", f"must be an object, not {_describe(args)}")
    schema = tool.input_schema
    properties: dict[str, Any] = schema["properties"]
    for key in args:
        if key not in properties:
            allowed = ", ".join(properties) or "no parameters"
            raise _bad(tool, key, f"is not a parameter of this tool (it takes {allowed})")
    for key in schema.get("required", []):
        if key not in args:
            raise _bad(tool, key, "is required")
    clean: dict[str, Any] = {}
    for key, spec in properties.items():
        if key not in args:
            if "default" in spec:
                clean[key] = spec["default"]
            continue
        value = args[key]
        kind = spec["type"]
        if not _type_ok(value, kind):
            raise _bad(tool, key, f"must be {_JSON_TYPES[kind]}, not {_describe(value)}")
        if kind == "string":
            if spec.get("minLength", 0) > 0 and not value.strip():
                raise _bad(tool, key, "must not be empty")
            if len(value) > spec.get("maxLength", len(value)):
                raise _bad(tool, key, f"must be at most {spec['maxLength']} characters")
        if kind in ("number", "integer"):
            if "minimum" in spec and value < spec["minimum"]:
                raise _bad(tool, key, f"must be at least {spec['minimum']}, not {value}")
            if "maximum" in spec and value > spec["maximum"]:
                raise _bad(tool, key, f"must be at most {spec['maximum']}, not {value}")
        clean[key] = value
    return clean
