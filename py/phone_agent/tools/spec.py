"""What one catalog entry is (``ToolSpec``), what a tool's handler is given (``CallEnv``), the schema
fragments entries are written with, and the strict argument check every call passes before its handler
runs.

The entries themselves are declared in ``catalog`` (the specification's six and the profiles) and in
the device tools' family modules; this module imports none of them, nor the dispatcher that runs them
(``dispatch.ToolDispatcher``), which it sees only as the ``TaskService`` protocol. So the imports run
one way: the entries build on this module, the dispatcher on the entries, and nothing back (the
import-graph test checks it). Pure: no I/O.
"""

from __future__ import annotations

import math
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from .. import errors
from ..errors import ToolError
from ..flows.library import FlowLibrary
from ..flows.recorder import FlowRecorder
from ..flows.scripts import ScriptEngine
from ..tasks import AgentTask, TaskOptions
from .session import DeviceSession

ProgressSink = Callable[[str], None]


class Channel(StrEnum):
    """How a call reached the page: A is the relay from ``phone-agent mcp`` (or the phone farm's router,
    over NATS), B is WebMCP; the agent and the page's own live view call the same entries too."""

    RELAY = "relay"
    WEBMCP = "webmcp"
    AGENT = "agent"
    PAGE = "page"
    FARM = "farm"


# Channel A: an MCP client's call through a server, by the relay or by the farm (answered alike).
MCP_CHANNELS = frozenset({Channel.RELAY, Channel.FARM})


class TaskService(Protocol):
    """What the tools use of the page's service (``tools.dispatch.ToolDispatcher``): the six tools its
    tasks, the flow tools its saved flows, recording and script engine."""

    flow_library: FlowLibrary
    flow_recorder: FlowRecorder
    script_engine: ScriptEngine | None

    async def run_agent(
        self,
        goal: str,
        timeout_ms: int,
        progress: ProgressSink | None = None,
        options: TaskOptions | None = None,
    ) -> AgentTask: ...

    def abort(self) -> str: ...

    def get_task(self, task_id: str) -> AgentTask | None: ...

    def get_all_tasks(self) -> list[AgentTask]: ...

    async def device_info(self) -> dict[str, Any]: ...

    def session(self) -> DeviceSession: ...


@dataclass
class CallEnv:
    """What a handler may use: the page's service (the six tools), the phone (device tools), the
    channel, and where progress goes. ``session()`` raises ``no_device`` when no phone is connected."""

    channel: Channel
    service: TaskService | None = None
    progress: ProgressSink | None = None
    device_session: DeviceSession | None = None
    # The secrets type_secret may type (tools.named_secrets.SecretBook); None: the service's, if it has one.
    secrets: Any = None
    # A streamed transfer's end (tools.transfer: a TransferSink or TransferSource), when the channel
    # moves this call's file in chunks instead of inline (a ``path`` through phone-agent mcp).
    transfer: Any = None

    def session(self) -> DeviceSession:
        if self.device_session is not None:
            return self.device_session
        if self.service is None:
            raise errors.no_device()
        return self.service.session()


Handler = Callable[[CallEnv, dict[str, Any]], Awaitable[dict[str, Any]]]


# The names WebMCP's current draft allows (``registerTool`` rejects others with "Invalid tool name").
WEBMCP_TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")


def webmcp_name_ok(name: str) -> bool:
    """Whether ``name`` is a tool name WebMCP takes."""
    return WEBMCP_TOOL_NAME.fullmatch(name) is not None


@dataclass(frozen=True)
class ToolSpec:
    """One tool, declared once: both channels, the agent, the page and the docs are made from it."""

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
    # How the call runs (validated arguments in, an MCP CallToolResult in wire form out).
    run: Handler | None = None
    # The relay's limit follows this argument when given (wait_for's and run_agent_task's timeoutMs):
    # its value plus ``timeout_grace_ms`` (default: relay_timeout_ms).
    timeout_arg: str | None = None
    timeout_grace_ms: int | None = None
    # Offered to the page's own agent as a function-calling action (device actions only).
    agent_action: bool = False
    # Idempotent: calling it twice does what calling it once does.
    idempotent: bool = False
    # A file on the MCP client's machine (``path``): "upload" — the stdio front reads it into
    # contentBase64 before relaying; "download" — it writes the answer's contentBase64 to it after.
    client_file: str | None = None

    def mcp_annotations(self) -> dict[str, Any]:
        """Annotations for Channel A (MCP ``ToolAnnotations``, wire names)."""
        notes: dict[str, Any] = {"title": self.title, "readOnlyHint": self.read_only}
        if not self.read_only:
            notes["destructiveHint"] = self.consequential
            notes["idempotentHint"] = self.idempotent
        notes["openWorldHint"] = self.consequential
        return notes

    def webmcp_annotations(self) -> dict[str, Any]:
        """Annotations for Channel B; Chrome keeps ``readOnlyHint``, ``untrustedContentHint`` and
        ``consequentialHint``."""
        notes: dict[str, Any] = {"readOnlyHint": self.read_only}
        if self.consequential:
            notes["consequentialHint"] = True
        if self.untrusted_content:
            notes["untrustedContentHint"] = True
        return notes

    def timeout_ms(self, args: dict[str, Any]) -> int:
        """The relay's time limit for one call with these (validated) arguments."""
        if self.timeout_arg is not None and isinstance(args.get(self.timeout_arg), (int, float)):
            grace = self.relay_timeout_ms if self.timeout_grace_ms is None else self.timeout_grace_ms
            return int(args[self.timeout_arg]) + grace
        return self.relay_timeout_ms


# Schema fragments the catalog's entries are written with.
STRING: dict[str, Any] = {"type": "string"}
STRING_OR_NULL: dict[str, Any] = {"type": ["string", "null"]}
INTEGER: dict[str, Any] = {"type": "integer"}
INTEGER_OR_NULL: dict[str, Any] = {"type": ["integer", "null"]}
BOOLEAN: dict[str, Any] = {"type": "boolean"}


def result_schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    """An output schema (``structuredContent``): these properties, the listed ones always present."""
    return {"type": "object", "properties": properties, "required": required}


def object_schema(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    """A strict JSON Schema object: the listed properties and nothing else."""
    schema: dict[str, Any] = {"type": "object", "properties": properties, "additionalProperties": False}
    if required:
        schema["required"] = required
    return schema


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


def parameters_text(tool: ToolSpec) -> str:
    """``goal: string, timeoutMs?: number`` — the parameters as a remedy names them."""
    required = tool.input_schema.get("required", [])
    return (
        ", ".join(
            f"{key}{'' if key in required else '?'}: {spec['type']}"
            for key, spec in tool.input_schema["properties"].items()
        )
        or "none"
    )


def _bad(tool: ToolSpec, field: str, problem: str) -> ToolError:
    return errors.bad_argument(tool.name, field, problem, parameters_text(tool))


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
            if "pattern" in spec and re.search(spec["pattern"], value) is None:
                raise _bad(tool, key, f"must match {spec['pattern']} (its description gives an example)")
        if "enum" in spec and value not in spec["enum"]:
            choices = ", ".join(str(choice) for choice in spec["enum"])
            raise _bad(tool, key, f"must be one of {choices}, not {value!r}")
        if kind in ("number", "integer"):
            if "minimum" in spec and value < spec["minimum"]:
                raise _bad(tool, key, f"must be at least {spec['minimum']}, not {value}")
            if "maximum" in spec and value > spec["maximum"]:
                raise _bad(tool, key, f"must be at most {spec['maximum']}, not {value}")
            if kind == "integer":
                value = int(value)
        clean[key] = value
    return clean
