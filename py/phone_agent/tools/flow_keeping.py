"""Keeping and recording flows: save_flow, list_flows, get_flow, delete_flow, start_flow_recording,
stop_flow_recording and save_task_as_flow, and ``acted_before``, what the dispatcher asks before a
recorded call runs (the element it acts on, while the screen still shows it).

Flows live in the dispatcher's ``flow_library`` (the page's IndexedDB, so every channel sees the same
ones); the recording is the dispatcher's ``flow_recorder``, fed by its one dispatch from every channel.
Pure: the phone is reached only through the ``Device`` interface.
"""

from __future__ import annotations

from typing import Any

from .. import errors
from ..device.interface import UiNode
from ..flows.flow_reader import FlowError, read_flow
from ..flows.library import NAME_PATTERN
from ..flows.recorder import (
    ELEMENT_TOOLS,
    Acted,
    FlowRecorder,
    commands_from_task,
    flow_yaml,
    nodes_at,
    selector_for,
)
from ..flows.selectors import UiScreen
from .flow_tools import (
    ASSERT_NOT_VISIBLE,
    ASSERT_VISIBLE,
    FLOW_NAME,
    FLOW_YAML,
    RUN_FLOW,
    flow_library,
    saved_flows,
)
from .locators import Element, ScreenSnapshot
from .results import action_result
from .session import DeviceSession
from .spec import BOOLEAN, INTEGER, STRING, CallEnv, ToolSpec, object_schema, result_schema
from .targets import parse_tool_target


def _name(tool: str, name: str) -> str:
    name = name.strip()
    if not NAME_PATTERN.fullmatch(name):
        raise errors.invalid_argument(
            tool,
            "name",
            "must be 1 to 100 characters without slashes",
            f"Call {tool} with a name such as login-smoke.",
        )
    return name


def recorder_of(env: CallEnv) -> FlowRecorder:
    """The page's flow recording (a handler called with no page: one of its own, never recording)."""
    return env.service.flow_recorder if env.service is not None else FlowRecorder()


async def _check_readable(env: CallEnv, text: str, name: str) -> int:
    try:
        flow = read_flow(text, saved=(await saved_flows(flow_library(env))).get, source=name)
    except FlowError as exc:
        raise errors.invalid_flow(str(exc), exc.line, exc.column, exc.source) from None
    return len(flow.commands)


async def save_flow(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    name = _name("save_flow", args["name"])
    commands = await _check_readable(env, args["yaml"], name)
    summary = await flow_library(env).save(name, args["yaml"])
    return action_result(f"Saved the flow {name!r} ({commands} commands).", {**summary, "commands": commands})


async def list_flows(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    flows = await flow_library(env).names()
    text = "\n".join(f"{flow['name']} ({flow['bytes']} bytes)" for flow in flows) or "No flow is saved yet."
    return action_result(text, {"flows": flows})


async def get_flow(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    library = flow_library(env)
    text = await library.get(args["name"])
    if text is None:
        raise errors.flow_not_found(args["name"], [flow["name"] for flow in await library.names()])
    return action_result(text, {"name": args["name"], "yaml": text})


async def delete_flow(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    library = flow_library(env)
    if not await library.delete(args["name"]):
        raise errors.flow_not_found(args["name"], [flow["name"] for flow in await library.names()])
    return action_result(f"Deleted the flow {args['name']!r}.", {"name": args["name"], "deleted": True})


async def start_flow_recording(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    app = ""
    try:
        current = await env.session().device.current_app()
        app = (current or "").split("/", 1)[0]
    except errors.ToolError:
        pass  # no phone yet: the first launchApp names the app
    recorder = recorder_of(env)
    restarted = recorder.active
    recorder.start(app)
    note = " (the recording that was running is dropped)" if restarted else ""
    return action_result(
        f"Recording: every action from any channel becomes a flow command until stop_flow_recording{note}.",
        {"recording": True, "appId": app},
    )


async def stop_flow_recording(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    recorder = recorder_of(env)
    if not recorder.active:
        raise errors.invalid_argument(
            "stop_flow_recording",
            "recording",
            "is not running",
            "Call start_flow_recording first, then act, then stop_flow_recording.",
        )
    name = _name("stop_flow_recording", args["name"]) if "name" in args else ""
    text = recorder.stop(name)
    structured: dict[str, Any] = {"yaml": text, "commands": recorder.count(), "saved": False}
    if name:
        await flow_library(env).save(name, text)
        structured.update(saved=True, name=name)
    return action_result(text, structured)


async def save_task_as_flow(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    name = _name("save_task_as_flow", args["name"])
    task = env.service.get_task(args["taskId"]) if env.service is not None else None
    if task is None:
        raise errors.task_not_found(args["taskId"])
    calls = [
        (call.name, call.args, call.result, call.ok, call.target, call.point)
        for step in task.steps
        for call in step.tool_calls
    ]
    commands = commands_from_task(calls)
    app = next((value for command, value in commands if command == "launchApp"), "")
    if not app:
        try:
            app = ((await env.session().device.current_app()) or "").split("/", 1)[0]
        except errors.ToolError:
            app = ""
    text = flow_yaml(app, commands, name)
    summary = await flow_library(env).save(name, text)
    return action_result(
        f"Saved task {task.id} as the flow {name!r} ({len(commands)} commands):\n{text}",
        {**summary, "yaml": text, "commands": len(commands)},
    )


def node_of(element: Element, snapshot: ScreenSnapshot, screen: UiScreen) -> UiNode | None:
    """``element``'s node on ``screen``: the very node it was read from when ``screen`` is that tree,
    else the node in the same place of the tree (same path of child positions, class and bounds) —
    never a node picked by its text."""
    node = element.node
    if node is None:
        return None
    if any(candidate is node for candidate in screen.all):
        return node
    path = _path(node, snapshot.parent)
    current: UiNode | None = None
    for depth, position in enumerate(path):
        siblings = (
            [n for n in screen.all if n.depth == 0] if depth == 0 else (current.children if current else [])
        )
        if position >= len(siblings):
            return None
        current = siblings[position]
    if current is None or current.class_name != node.class_name or current.bounds != node.bounds:
        return None
    return current


def _path(node: UiNode, parent: Any) -> list[int]:
    """The child positions from the window list down to ``node``."""
    path: list[int] = []
    current = node
    while (up := parent(current)) is not None:
        path.append(next(i for i, child in enumerate(up.children) if child is current))
        current = up
    return [*reversed(path)]


def acted_on(nodes: list[UiNode], screen: UiScreen, point: tuple[int, int]) -> Acted:
    """How a flow names what a touch at ``point`` acted on: a selector for the first of ``nodes`` that
    one names, else the point with a note saying why."""
    for candidate in nodes:
        selector = selector_for(candidate, screen)
        if selector is not None:
            return Acted(selector=selector)
    node = nodes[0] if nodes else None
    what = f"the {node.class_name.rsplit('.', 1)[-1] or 'element'}" if node is not None else "the element"
    note = (
        f"point: {what} at {point[0]},{point[1]} has no text, description, id or label inside it "
        "that finds it (this tap may miss on another screen size)"
    )
    return Acted(point=point, note=note)


async def acted_before(session: DeviceSession, tool: str, args: dict[str, Any]) -> Acted | None:
    """What a recorded call is about to act on: the element its target or point names, as a selector
    (or the point when nothing identifies it). None for calls that act on no element. A ref is looked
    up on the screen it was handed out with; a locator or a point on the tree just read, else a fresh
    read (which the call itself then reuses)."""
    if tool not in ELEMENT_TOOLS:
        return None
    if "target" in args:
        target = parse_tool_target(tool, args["target"])
        snapshot = session.state.snapshot if target.ref is not None else None
        if snapshot is None:
            snapshot = session.recent_screen() or await session.screen()
        if target.ref is not None:
            element = snapshot.by_ref.get(target.ref)
        else:
            found = target.find(snapshot)
            element = found[0] if found else None
        if element is None:
            return None
        screen = UiScreen(snapshot.nodes, snapshot.width, snapshot.height)
        node = node_of(element, snapshot, screen)
        return acted_on([node] if node is not None else [], screen, element.center)
    if "x" in args and "y" in args:
        snapshot = session.recent_screen() or await session.screen()
        screen = UiScreen(snapshot.nodes, snapshot.width, snapshot.height)
        point = (int(args["x"]), int(args["y"]))
        return acted_on(nodes_at(screen, *point), screen, point)
    return None


_FLOW_SUMMARY = {
    "type": "object",
    "properties": {"name": STRING, "savedAt": INTEGER, "bytes": INTEGER},
    "required": ["name"],
}
_NAME_ONLY = object_schema({"name": FLOW_NAME}, required=["name"])

SAVE_FLOW = ToolSpec(
    name="save_flow",
    title="Save a flow",
    description="Keep a Maestro flow under a name in the page (replacing one of that name), after checking "
    "it can be read; run_flow runs it by name, and runFlow in other flows can name it.",
    input_schema=object_schema({"name": FLOW_NAME, "yaml": FLOW_YAML}, required=["name", "yaml"]),
    read_only=False,
    consequential=False,
    relay_timeout_ms=15_000,
    idempotent=True,
    output_schema=result_schema(
        {"name": STRING, "savedAt": INTEGER, "bytes": INTEGER, "commands": INTEGER}, ["name", "commands"]
    ),
    run=save_flow,
)
LIST_FLOWS = ToolSpec(
    name="list_flows",
    title="List saved flows",
    description="The flows saved in the page, by name.",
    input_schema=object_schema({}),
    read_only=True,
    consequential=False,
    relay_timeout_ms=15_000,
    output_schema=result_schema({"flows": {"type": "array", "items": _FLOW_SUMMARY}}, ["flows"]),
    run=list_flows,
)
GET_FLOW = ToolSpec(
    name="get_flow",
    title="Get a saved flow",
    description="A saved flow's YAML, by name.",
    input_schema=_NAME_ONLY,
    read_only=True,
    consequential=False,
    relay_timeout_ms=15_000,
    output_schema=result_schema({"name": STRING, "yaml": STRING}, ["name", "yaml"]),
    run=get_flow,
)
DELETE_FLOW = ToolSpec(
    name="delete_flow",
    title="Delete a saved flow",
    description="Forget a saved flow, by name.",
    input_schema=_NAME_ONLY,
    read_only=False,
    consequential=False,
    relay_timeout_ms=15_000,
    output_schema=result_schema({"name": STRING, "deleted": BOOLEAN}, ["name", "deleted"]),
    run=delete_flow,
)
START_FLOW_RECORDING = ToolSpec(
    name="start_flow_recording",
    title="Start recording a flow",
    description="From now on, every action on the phone from any channel (MCP, WebMCP, the page's live "
    "view) is recorded as a Maestro command naming the element acted on by text, id or description; "
    "stop_flow_recording answers the flow.",
    input_schema=object_schema({}),
    read_only=False,
    consequential=False,
    relay_timeout_ms=15_000,
    output_schema=result_schema({"recording": BOOLEAN, "appId": STRING}, ["recording"]),
    run=start_flow_recording,
)
STOP_FLOW_RECORDING = ToolSpec(
    name="stop_flow_recording",
    title="Stop recording a flow",
    description="Stop the recording and answer the flow's YAML; with name, also save it under that name.",
    input_schema=object_schema({"name": {**FLOW_NAME, "description": "Save the flow under this name."}}),
    read_only=False,
    consequential=False,
    relay_timeout_ms=15_000,
    output_schema=result_schema(
        {"yaml": STRING, "commands": INTEGER, "saved": BOOLEAN, "name": STRING}, ["yaml", "commands", "saved"]
    ),
    run=stop_flow_recording,
)
SAVE_TASK_AS_FLOW = ToolSpec(
    name="save_task_as_flow",
    title="Save an agent task as a flow",
    description="Turn a finished agent task's actions into a Maestro flow saved under name, so run_flow "
    "replays it with no model.",
    input_schema=object_schema(
        {
            "taskId": {"type": "string", "minLength": 1, "maxLength": 200, "description": "The task's id."},
            "name": FLOW_NAME,
        },
        required=["taskId", "name"],
    ),
    read_only=False,
    consequential=False,
    relay_timeout_ms=15_000,
    output_schema=result_schema(
        {"name": STRING, "savedAt": INTEGER, "bytes": INTEGER, "yaml": STRING, "commands": INTEGER},
        ["name", "yaml", "commands"],
    ),
    run=save_task_as_flow,
)

# The flow tools in the catalog's order (after the device tools).
FLOW_TOOLS: tuple[ToolSpec, ...] = (
    RUN_FLOW,
    ASSERT_VISIBLE,
    ASSERT_NOT_VISIBLE,
    SAVE_FLOW,
    LIST_FLOWS,
    GET_FLOW,
    DELETE_FLOW,
    START_FLOW_RECORDING,
    STOP_FLOW_RECORDING,
    SAVE_TASK_AS_FLOW,
)
