"""Flow tools: run_flow (a Maestro flow, run through the catalog's device tools, no model) and the
assertions assert_visible / assert_not_visible. Keeping and recording flows is ``flow_keeping``.

``ToolPhone`` is the flows package's ``FlowPhone`` on a ``CallEnv``: a flow's taps, swipes and typing
run the catalog's own device tool handlers, looked up by name in ``DEVICE_TOOLS`` (a table). Pure: the
phone is reached only through the ``Device`` interface.
"""

from __future__ import annotations

import re
from typing import Any

from .. import errors
from ..device.interface import UiNode
from ..flows.actions import flow_runner
from ..flows.flow_reader import FlowError, read_flow
from ..flows.library import FlowLibrary, MemoryFlowLibrary
from ..flows.scripts import (
    DEFAULT_SCRIPT_TIMEOUT_MS,
    ScriptEngine,
    ScriptError,
    ScriptOptions,
    ScriptSession,
)
from .device_tools import DEVICE_TOOLS
from .locators import ScreenSnapshot
from .pipeline.bare import bare_pipeline
from .pipeline.call import Call, Caller
from .pipeline.chain import pipeline_here
from .results import action_result
from .session import DeviceSession
from .spec import (
    BOOLEAN,
    INTEGER,
    STRING,
    CallEnv,
    ToolSpec,
    object_schema,
    result_schema,
)
from .targets import ELEMENT_SCHEMA, TARGET, parse_tool_target

_DEVICE_TOOLS_BY_NAME: dict[str, ToolSpec] = {tool.name: tool for tool in DEVICE_TOOLS}

# Where a flow's steps run when its run_flow was called without the page's pipeline (a handler called
# directly): checked, failures kept, the screen marked as moved.
_BARE = bare_pipeline(_DEVICE_TOOLS_BY_NAME)
_HOST = re.compile(r"(\[[0-9a-f:.]+\]|[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?)(:[0-9]{1,5})?")
DEFAULT_FLOW_TIMEOUT_MS = 600_000
MAX_FLOW_TIMEOUT_MS = 3_600_000
DEFAULT_ASSERT_MS = 3_000
MAX_ASSERT_MS = 60_000
ASSERT_POLL_S = 0.25
FLOW_YAML = {
    "type": "string",
    "minLength": 1,
    "maxLength": 200_000,
    "description": "The flow in Maestro's "
    "YAML: a header (appId, optional name and env), ---, then the commands.",
}
FLOW_NAME = {
    "type": "string",
    "minLength": 1,
    "maxLength": 100,
    "description": "The flow's name (no slashes).",
}


def flow_library(env: CallEnv) -> FlowLibrary:
    """Where this page keeps its flows (the dispatcher's ``flow_library``; a handler called with no page:
    an empty one in memory)."""
    return env.service.flow_library if env.service is not None else MemoryFlowLibrary()


class ToolPhone:
    """A flow's phone: the catalog's device tools by name, and the Device for the UI tree and shell."""

    def __init__(self, env: CallEnv, session: DeviceSession) -> None:
        self.env, self.session = env, session

    async def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """Run a flow's step as a call of its own (caller ``flow``, under the run_flow that runs it),
        through the pipeline its run_flow came by; its failure fails the step."""
        if tool not in _DEVICE_TOOLS_BY_NAME:
            raise AssertionError(f"not a device tool: {tool}")
        call = Call(tool, args, self.env.channel, Caller.FLOW, session=self.session, secrets=self.env.secrets)
        result = await pipeline_here(_BARE).run_nested(call)
        return result.get("structuredContent") or {}

    async def nodes(self) -> list[UiNode]:
        """The screen's nodes, with the secrets typed hidden as every look hides them (a flow's selector
        cannot find a secret by its letters)."""
        nodes = await self.session.device.ui_nodes()
        if self.session.redact_nodes is not None:
            self.session.redact_nodes(nodes)
        return nodes

    async def screen_size(self) -> tuple[int, int]:
        """The screen's true size (the session's), or (0, 0) when the phone cannot say."""
        try:
            return await self.session.screen_size()
        except errors.ToolError:
            return (0, 0)

    async def screenshot(self) -> bytes:
        return await self.session.device.screenshot_png()

    async def delete_chars(self, count: int) -> None:
        await self.session.device.delete_chars(count)

    async def shell(self, command: str) -> str:
        return (await self.session.device.shell(command)).text


async def saved_flows(library: FlowLibrary) -> dict[str, str]:
    """Every saved flow's YAML by name (what ``runFlow: name`` may run)."""
    found = {}
    for summary in await library.names():
        text = await library.get(summary["name"])
        if text is not None:
            found[summary["name"]] = text
    return found


def check_env(tool: str, env: Any) -> dict[str, str]:
    if env is None:
        return {}
    bad = [key for key, value in env.items() if not isinstance(value, str)]
    if bad:
        raise errors.invalid_argument(
            tool, "env", f"must map names to text ({bad[0]} does not)", 'Give env as {"NAME": "value", …}.'
        )
    return {str(key): str(value) for key, value in env.items()}


def _text_map(field: str, value: Any, example: str) -> dict[str, str]:
    found = value or {}
    if any(not isinstance(key, str) or not isinstance(text, str) for key, text in found.items()):
        raise errors.invalid_argument(
            "run_flow", field, "must map paths to text", f"Give {field} as {example}."
        )
    return found


def _allowed_hosts(value: Any) -> tuple[str, ...]:
    hosts = tuple(host.lower() for host in re.split(r"[\s,]+", str(value or "")) if host)
    for host in hosts:
        if not _HOST.fullmatch(host):
            raise errors.invalid_argument(
                "run_flow", "allowHttp", f"holds {host!r}, which is not a host or host:port",
                'Give allowHttp as "api.example.com, 127.0.0.1:8080".',
            )  # fmt: skip
    return hosts


def script_engine(env: CallEnv) -> ScriptEngine | None:
    """The JavaScript engine flows run their scripts in (the page's Worker; Node in CPython), if any."""
    return env.service.script_engine if env.service is not None else None


async def run_flow(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    library = flow_library(env)
    if ("yaml" in args) == ("name" in args):
        raise errors.invalid_argument(
            "run_flow",
            "yaml",
            "or name must be given (one of them)",
            "Call run_flow with yaml (the flow's text) or name (a saved flow).",
        )
    variables = check_env("run_flow", args.get("env"))
    files = _text_map("files", args.get("files"), '{"path.yaml": "appId: …"}')
    media = _text_map("media", args.get("media"), '{"photos/cat.png": "<base64>"}')
    hosts = _allowed_hosts(args.get("allowHttp"))
    saved = await saved_flows(library)
    source = args.get("name", "") or args.get("path", "")
    text = args.get("yaml") or saved.get(args.get("name", ""))
    if text is None:
        raise errors.flow_not_found(args.get("name", ""), sorted(saved))
    try:
        flow = read_flow(
            text, files=files, saved=saved.get, source=source, media=media, path=args.get("path", "")
        )
    except FlowError as exc:
        raise errors.invalid_flow(str(exc), exc.line, exc.column, exc.source) from None
    session = env.session()
    phone = ToolPhone(env, session)
    runner = flow_runner(phone, env.progress, session.sleep, session.monotonic_ms, phone.screen_size)
    scripts = await _open_scripts(env, ScriptOptions(allowed_hosts=hosts, timeout_ms=args["scriptTimeoutMs"]))
    try:
        answer = await runner.run(flow, variables, args["timeoutMs"], scripts)
    finally:
        if scripts is not None:
            await scripts.close()
    return flow_answer(answer, flow.name or args.get("name", ""))


async def _open_scripts(env: CallEnv, options: ScriptOptions) -> ScriptSession | None:
    engine = script_engine(env)
    if engine is None:
        return None
    try:
        return await engine.open(options)
    except ScriptError as exc:
        raise errors.unsupported(
            f"the JavaScript engine for flow scripts could not start: {exc}",
            "Reload the page (its static/vendor/quickjs is made by scripts/setup) and run the flow again.",
        ) from None


def flow_answer(answer: dict[str, Any], name: str) -> dict[str, Any]:
    """run_flow's result: a summary a person reads, the screenshots as images, the report as JSON."""
    content: list[dict[str, Any]] = []
    steps = answer["steps"]
    passed = sum(1 for step in steps if step["status"] == "passed")
    title = f"Flow {name!r}" if name else "Flow"
    lines = [
        f"{title} {'passed' if answer['passed'] else 'FAILED'}: {passed}/{len(steps)} steps passed "
        f"in {answer['durationMs'] / 1000:.1f} s"
    ]
    marks = {"passed": "✅", "failed": "❌", "skipped": "⏭️"}
    for step in steps:
        error = f" — {step['error']}" if step.get("error") else ""
        lines.append(
            f"{marks[step['status']]} {step['index']}. {step['command']} ({step['durationMs']} ms){error}"
        )
    content.append({"type": "text", "text": "\n".join(lines)})
    structured: dict[str, Any] = {
        "passed": answer["passed"],
        "durationMs": answer["durationMs"],
        "steps": steps,
    }
    if name:
        structured["name"] = name
    shots = []
    for shot in answer["screenshots"]:
        shots.append({"path": shot["path"], "image": len(content)})
        content.append({"type": "image", "data": shot["data"], "mimeType": "image/png"})
    structured["screenshots"] = shots
    recordings = []
    for recording in answer.get("recordings", []):
        recordings.append({"path": recording["path"], "resource": len(content)})
        content.append(
            {
                "type": "resource",
                "resource": {
                    "uri": "flow-recording:" + recording["path"],
                    "mimeType": "video/mp4",
                    "blob": recording["data"],
                },
            }
        )
    if recordings:
        structured["recordings"] = recordings
    failure = answer.get("failure")
    if failure is not None:
        report = {key: failure[key] for key in ("index", "command", "line", "error")}
        if "screenshot" in failure:
            content.append({"type": "text", "text": f"The screen when step {failure['index']} failed:"})
            report["image"] = len(content)
            content.append({"type": "image", "data": failure["screenshot"], "mimeType": "image/png"})
        elif "screenshotError" in failure:
            report["screenshotError"] = failure["screenshotError"]
        structured["failure"] = report
    return {"content": content, "structuredContent": structured}


async def _assert(env: CallEnv, args: dict[str, Any], tool: str, visible: bool) -> dict[str, Any]:
    phone = env.session()
    target = parse_tool_target(tool, args["target"])
    old = None
    if target.ref is not None:
        snapshot = phone.state.snapshot
        old = snapshot.by_ref.get(target.ref) if snapshot is not None else None
        if old is None:
            raise errors.unknown_ref(target.ref)
    limit = args["timeoutMs"]
    started = phone.monotonic_ms()
    while True:
        snapshot = await phone.screen()
        if old is not None:
            same = snapshot.find_same(old)
            found = [same] if same is not None else []
        else:
            found = target.find(snapshot)
        waited = round(phone.monotonic_ms() - started)
        if bool(found) == visible:
            structured: dict[str, Any] = {"visible": visible, "waitedMs": waited}
            text = f'"{target}" is {"visible" if visible else "not visible"}'
            if found:
                structured["element"] = found[0].to_json()
                text += f": {found[0].line()}"
            return action_result(text, structured)
        if waited >= limit:
            expected = "is not visible" if visible else "is still visible"
            raise errors.assertion_failed(str(target), expected, _summary(snapshot), limit)
        await phone.sleep(min(ASSERT_POLL_S, max(0.0, (limit - waited) / 1000)))


def _summary(snapshot: ScreenSnapshot, most: int = 25) -> str:
    labels: list[str] = []
    for element in snapshot.elements:
        if element.label and element.label not in labels:
            labels.append(element.label)
    if not labels:
        return "nothing with a text or a description"
    more = len(labels) - most
    return ", ".join(f'"{label}"' for label in labels[:most]) + (f" and {more} more" if more > 0 else "")


async def assert_visible(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    return await _assert(env, args, "assert_visible", True)


async def assert_not_visible(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    return await _assert(env, args, "assert_not_visible", False)


_ASSERT_TIMEOUT = {
    "type": "integer",
    "minimum": 0,
    "maximum": MAX_ASSERT_MS,
    "default": DEFAULT_ASSERT_MS,
    "description": f"How long the screen may take to agree, in ms (default {DEFAULT_ASSERT_MS}, "
    "at most 60000).",
}
_ASSERT_RESULT = result_schema(
    {"visible": BOOLEAN, "waitedMs": INTEGER, "element": ELEMENT_SCHEMA}, ["visible", "waitedMs"]
)
STEP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "index": INTEGER,
        "command": STRING,
        "line": INTEGER,
        "status": {"type": "string", "enum": ["passed", "failed", "skipped"]},
        "durationMs": INTEGER,
        "error": STRING,
        "hook": {"type": "string", "enum": ["onFlowStart", "onFlowComplete"]},
        "logs": {"type": "array", "items": STRING},
    },
    "required": ["index", "command", "status", "durationMs"],
}

RUN_FLOW = ToolSpec(
    name="run_flow",
    title="Run a flow",
    description="Run a Maestro flow (YAML: appId header, ---, commands such as launchApp, tapOn, inputText, "
    "assertVisible, scrollUntilVisible, runFlow, repeat, retry, runScript) on the phone, deterministically "
    "and without a model: give its text as yaml or a saved flow's name. JavaScript (${…}, evalScript, "
    "runScript) runs in a sandboxed engine; its http object reaches only the allowHttp hosts. Stops at the "
    "first failed step (the answer then carries the screen at that moment); answers passed, durationMs and "
    "every step's status.",
    input_schema=object_schema(
        {
            "yaml": FLOW_YAML,
            "name": {**FLOW_NAME, "description": "A saved flow's name (list_flows), instead of yaml."},
            "env": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "Values for ${NAME} in the flow; they win over its env.",
            },
            "files": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "The flows (runFlow, retry) and scripts (runScript) the flow names, by path "
                "in the flows' folder, with their text (phone-agent flow run sends the files it read).",
            },
            "media": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "The media files addMedia names, by path in the flows' folder, as base64.",
            },
            "path": {
                "type": "string",
                "maxLength": 1000,
                "description": "The flow's own path in the flows' folder: the paths it names are relative to "
                "its folder, and MAESTRO_FILENAME is its name.",
            },
            "scriptTimeoutMs": {
                "type": "integer",
                "minimum": 100,
                "maximum": 120_000,
                "default": DEFAULT_SCRIPT_TIMEOUT_MS,
                "description": "Longest one script (or ${…}) may run before it is stopped, in ms "
                "(default 10000).",
            },
            "allowHttp": {
                "type": "string",
                "maxLength": 4000,
                "description": "Hosts (host or host:port, separated by commas or spaces) the flow's scripts "
                "may reach with Maestro's http object; any other is refused.",
            },
            "timeoutMs": {
                "type": "integer",
                "minimum": 1000,
                "maximum": MAX_FLOW_TIMEOUT_MS,
                "default": DEFAULT_FLOW_TIMEOUT_MS,
                "description": "Longest the whole flow may run, in ms (default 600000).",
            },
        }
    ),
    read_only=False,
    consequential=True,
    relay_timeout_ms=30_000,
    timeout_arg="timeoutMs",
    output_schema=result_schema(
        {
            "passed": BOOLEAN,
            "durationMs": INTEGER,
            "name": STRING,
            "steps": {"type": "array", "items": STEP_SCHEMA},
            "screenshots": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"path": STRING, "image": INTEGER},
                    "required": ["path"],
                },
            },
            "recordings": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"path": STRING, "resource": INTEGER},
                    "required": ["path"],
                },
            },
            "failure": {
                "type": "object",
                "properties": {
                    "index": INTEGER,
                    "command": STRING,
                    "line": INTEGER,
                    "error": STRING,
                    "image": INTEGER,
                },
            },
        },
        ["passed", "durationMs", "steps"],
    ),
    untrusted_content=True,
    run=run_flow,
)
ASSERT_VISIBLE = ToolSpec(
    name="assert_visible",
    title="Assert an element is visible",
    description="Check that target is on the screen, waiting up to timeoutMs (default 3000) for it; "
    "fails with assertion_failed naming the target and what the screen showed instead.",
    input_schema=object_schema({"target": TARGET, "timeoutMs": _ASSERT_TIMEOUT}, required=["target"]),
    read_only=True,
    consequential=False,
    relay_timeout_ms=45_000,
    timeout_arg="timeoutMs",
    output_schema=_ASSERT_RESULT,
    untrusted_content=True,
    run=assert_visible,
)
ASSERT_NOT_VISIBLE = ToolSpec(
    name="assert_not_visible",
    title="Assert an element is not visible",
    description="Check that target is not on the screen, waiting up to timeoutMs (default 3000) for it "
    "to go; fails with assertion_failed naming the target and what the screen showed.",
    input_schema=object_schema({"target": TARGET, "timeoutMs": _ASSERT_TIMEOUT}, required=["target"]),
    read_only=True,
    consequential=False,
    relay_timeout_ms=45_000,
    timeout_arg="timeoutMs",
    output_schema=_ASSERT_RESULT,
    untrusted_content=True,
    run=assert_not_visible,
)
