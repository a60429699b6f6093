"""The agent's actions as the model sees them (function-calling tools) and their validation.

The device actions (tap, long_press, swipe, type_text, press_key, open_app, open_url) are the tool
catalog's own entries (``ToolSpec.agent_action``), offered with the same names and schemas; the agent
adds only what steers its own loop (wait, finish_step, fail_step, finish_task, extraction).
Coordinates in actions are pixels of the screenshot image the model was sent; ``validate_action``
checks them against that image (or converts 0–1000 normalised ones from text action formats) and
rejects anything off the screen, unknown or missing with a message meant for the model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..device.interface import key_code
from ..errors import ToolError
from ..tools.catalog import AGENT_ACTION_TOOLS
from ..tools.spec import ToolSpec, validate_arguments
from .model import ToolCall, ToolSchema
from .text_actions import NORMALIZED_MAX

MAX_WAIT_MS = 10_000


def _tool(name: str, description: str, properties: dict[str, Any], required: list[str]) -> ToolSchema:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": required,
                "additionalProperties": False,
            },
        },
    }


_PLAN_STEP = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "description": "A short imperative title, e.g. 'Open Settings'."},
        "description": {
            "type": "string",
            "description": "What to do in this step and how to tell it is done.",
        },
    },
    "required": ["title", "description"],
    "additionalProperties": False,
}

SUBMIT_PLAN = _tool(
    "submit_plan",
    "Submit the plan: the steps that reach the goal from the current screen, in order.",
    {"steps": {"type": "array", "items": _PLAN_STEP, "minItems": 1}},
    ["steps"],
)

# Coordinates the agent's model gives in screenshot pixels; the device tools take device pixels.
POINT_FIELDS = (("x", "y"), ("startX", "startY"), ("endX", "endY"))


def _for_the_model(value: Any) -> Any:
    """A catalog schema as the agent's model reads it: pixels are the screenshot's, not the device's."""
    if isinstance(value, str):
        return value.replace("device pixels", "screenshot pixels")
    if isinstance(value, dict):
        return {key: _for_the_model(item) for key, item in value.items() if key != "default"}
    if isinstance(value, list):
        return [_for_the_model(item) for item in value]
    return value


# Every device action the model calls may carry this flag: the page asks the person before it runs.
SENSITIVE = "sensitive"
_SENSITIVE_FIELD = {
    "type": "boolean",
    "description": "true when this action sends a message, pays or buys, deletes, installs or uninstalls "
    "an app, or changes a permission: the person is asked before it runs.",
}


def catalog_action(spec: ToolSpec) -> ToolSchema:
    """A device tool of the catalog as one of the agent's function-calling actions (the same entry),
    with the ``sensitive`` flag the agent marks its sensitive actions with."""
    parameters = _for_the_model(spec.input_schema)
    if not spec.read_only:
        parameters = {**parameters, "properties": {**parameters["properties"], SENSITIVE: _SENSITIVE_FIELD}}
    return {
        "type": "function",
        "function": {
            "name": spec.name,
            "description": _for_the_model(spec.description),
            "parameters": parameters,
        },
    }


CATALOG_ACTIONS: dict[str, ToolSpec] = {spec.name: spec for spec in AGENT_ACTION_TOOLS}
ACTION_TOOLS: list[ToolSchema] = [
    *(catalog_action(spec) for spec in AGENT_ACTION_TOOLS),
    _tool(
        "wait",
        "Wait for the screen to settle (at most 10000 ms).",
        {"ms": {"type": "integer", "minimum": 0, "maximum": MAX_WAIT_MS}},
        ["ms"],
    ),
    _tool(
        "extract_scrolling_content",
        "Scroll the current list or page to its end, capturing it, and extract what the instruction "
        "asks from the whole content. Ends the task with the extraction as its conclusion.",
        {"instruction": {"type": "string"}},
        ["instruction"],
    ),
    _tool(
        "take_over",
        "Hand the phone to the person for what you cannot or must not do yourself (a login whose secret "
        "you do not have, a captcha, a payment to approve): say what they should do. When they are done "
        "you look at the screen again and go on.",
        {"reason": {"type": "string"}},
        ["reason"],
    ),
    _tool(
        "finish_step",
        "The current step is done: say what was achieved or seen.",
        {"summary": {"type": "string"}},
        ["summary"],
    ),
    _tool(
        "fail_step",
        "The current step cannot be done: say why.",
        {"reason": {"type": "string"}},
        ["reason"],
    ),
    _tool(
        "finish_task",
        "The whole goal is reached (or answered): give the conclusion for the user.",
        {"conclusion": {"type": "string"}},
        ["conclusion"],
    ),
]
ACTION_NAMES = frozenset(tool["function"]["name"] for tool in ACTION_TOOLS)
CONTROL_ACTIONS = frozenset(
    {"finish_step", "fail_step", "finish_task", "extract_scrolling_content", "take_over", "give_up"}
)
# ReAct (no plan, no steps to finish or fail): the same actions, but give_up instead of fail_step.
GIVE_UP = _tool(
    "give_up",
    "The goal cannot be reached: say why (the task ends failed).",
    {"reason": {"type": "string"}},
    ["reason"],
)
REACT_TOOLS: list[ToolSchema] = [
    *(tool for tool in ACTION_TOOLS if tool["function"]["name"] not in ("finish_step", "fail_step")),
    GIVE_UP,
]
REACT_NAMES = frozenset(tool["function"]["name"] for tool in REACT_TOOLS)


class ActionError(ValueError):
    """The model's call cannot be run; the message goes back to the model as the tool result."""


@dataclass(frozen=True)
class Action:
    """A validated action: ``args`` as the model meant them, coordinates in image pixels."""

    name: str
    args: dict[str, Any]
    sensitive: bool = False  # the model marked it (sending, paying, deleting, installing, permissions)


def _number(args: dict[str, Any], name: str, required: bool = True, default: int | None = None) -> int:
    if name not in args or args[name] is None:
        if required:
            raise ActionError(f"missing required argument {name!r}")
        assert default is not None
        return default
    value = args[name]
    if isinstance(value, bool):
        raise ActionError(f"{name!r} must be a number, not {value!r}")
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            raise ActionError(f"{name!r} must be a number, not {value!r}") from None
    if not isinstance(value, (int, float)) or value != value:
        raise ActionError(f"{name!r} must be a number, not {value!r}")
    return round(value)


def _text(args: dict[str, Any], name: str, allow_empty: bool = False) -> str:
    value = args.get(name)
    if value is None:
        raise ActionError(f"missing required argument {name!r}")
    if not isinstance(value, str):
        raise ActionError(f"{name!r} must be a string, not {value!r}")
    if not allow_empty and not value.strip():
        raise ActionError(f"{name!r} must not be empty")
    return value


def _bool(args: dict[str, Any], name: str) -> bool:
    value = args.get(name, False)
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    if not isinstance(value, bool):
        raise ActionError(f"{name!r} must be true or false, not {value!r}")
    return value


def _lenient(spec: ToolSpec, args: dict[str, Any]) -> dict[str, Any]:
    """Models send "12" for 12 and "true" for true: the catalog's types, taken loosely."""
    properties = spec.input_schema["properties"]
    clean: dict[str, Any] = {}
    for name, value in args.items():
        if value is None:
            continue
        kind = properties.get(name, {}).get("type")
        if kind in ("integer", "number"):
            clean[name] = _number(args, name)
        elif kind == "boolean":
            clean[name] = _bool(args, name)
        elif kind == "string" and isinstance(value, str):
            clean[name] = value.strip() if name != "text" else value
        else:
            clean[name] = value
    return clean


def validate_action(call: ToolCall, image_width: int, image_height: int) -> Action:
    """The call as an Action, or ActionError saying exactly what is wrong. Device actions are the
    catalog's own entries, checked against their schema; coordinates stay in screenshot pixels."""
    if call.name not in ACTION_NAMES | REACT_NAMES:
        raise ActionError(f"unknown tool {call.name!r}; the tools are: {', '.join(sorted(ACTION_NAMES))}")
    if call.error:
        raise ActionError(f"{call.name}: {call.error}")
    args = call.arguments
    name = call.name
    spec = CATALOG_ACTIONS.get(name)
    if spec is not None:
        args = dict(args)
        sensitive = args.pop(SENSITIVE, False)
        sensitive = sensitive is True or (isinstance(sensitive, str) and sensitive.lower() == "true")
        clean = _lenient(spec, args)
        for x_name, y_name in POINT_FIELDS:
            if x_name in clean or y_name in clean:
                clean.update(_image_point(call, clean, x_name, y_name, image_width, image_height))
        try:
            validate_arguments(spec, clean)
        except ToolError as exc:
            raise ActionError(exc.message) from None
        if name == "press_key":
            try:
                key_code(clean["key"])
            except ValueError as exc:
                raise ActionError(f"press_key: {exc}") from None
        return Action(name, clean, sensitive)
    if name == "wait":
        ms = _number(args, "ms", required=False, default=1000)
        if not 0 <= ms <= MAX_WAIT_MS:
            raise ActionError(f"wait: ms={ms} must be 0–{MAX_WAIT_MS}")
        return Action(name, {"ms": ms})
    if name == "extract_scrolling_content":
        return Action(name, {"instruction": _text(args, "instruction")})
    if name == "finish_step":
        return Action(name, {"summary": _text(args, "summary", allow_empty=True).strip() or "done"})
    if name in ("fail_step", "take_over", "give_up"):
        return Action(name, {"reason": _text(args, "reason")})
    return Action(name, {"conclusion": _text(args, "conclusion")})  # finish_task


def _image_point(
    call: ToolCall, args: dict[str, Any], x_name: str, y_name: str, image_width: int, image_height: int
) -> dict[str, int]:
    if x_name not in args or y_name not in args:
        missing = y_name if x_name in args else x_name
        raise ActionError(f"{call.name}: missing required argument {missing!r}")
    x, y = args[x_name], args[y_name]
    if call.normalized:
        x = min(image_width - 1, x * image_width // NORMALIZED_MAX)
        y = min(image_height - 1, y * image_height // NORMALIZED_MAX)
    problems = []
    if not 0 <= x < image_width:
        problems.append(f"{x_name}={x} is outside 0–{image_width - 1}")
    if not 0 <= y < image_height:
        problems.append(f"{y_name}={y} is outside 0–{image_height - 1}")
    if problems:
        raise ActionError(
            f"{call.name}: the point is off the screen ({'; '.join(problems)}): coordinates are "
            f"pixels of the {image_width}x{image_height} screenshot"
        )
    return {x_name: x, y_name: y}


@dataclass(frozen=True)
class PlannedStep:
    title: str
    description: str


def validate_plan(call: ToolCall, max_steps: int) -> list[PlannedStep]:
    """The steps of a submit_plan call, or ActionError."""
    if call.name != "submit_plan":
        raise ActionError(f"expected submit_plan with the steps, got {call.name!r}")
    if call.error:
        raise ActionError(f"submit_plan: {call.error}")
    steps = call.arguments.get("steps")
    if isinstance(steps, str):  # some models double-encode arrays
        try:
            steps = json.loads(steps)
        except ValueError:
            raise ActionError("submit_plan: 'steps' must be an array of {title, description}") from None
    if not isinstance(steps, list) or not steps:
        raise ActionError("submit_plan: 'steps' must be a non-empty array of {title, description}")
    if len(steps) > max_steps:
        raise ActionError(f"submit_plan: {len(steps)} steps; plan at most {max_steps} steps")
    planned = []
    for number, step in enumerate(steps, 1):
        if isinstance(step, str) and step.strip():
            planned.append(PlannedStep(step.strip()[:120], step.strip()))
            continue
        if not isinstance(step, dict):
            raise ActionError(f"submit_plan: step {number} must be an object with title and description")
        title = step.get("title")
        if not isinstance(title, str) or not title.strip():
            raise ActionError(f"submit_plan: step {number} has no title")
        description = step.get("description")
        planned.append(
            PlannedStep(title.strip(), description.strip() if isinstance(description, str) else "")
        )
    return planned
