"""The agent's actions as the model sees them (function-calling tools) and their validation.

Coordinates in actions are pixels of the screenshot image the model was sent; ``validate_action``
checks them against that image (or converts 0–1000 normalised ones from text action formats) and
rejects anything off the screen, unknown or missing with a message meant for the model.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..device import key_code
from .model import ToolCall, ToolSchema
from .text_actions import NORMALIZED_MAX

DEFAULT_LONG_PRESS_MS = 800
DEFAULT_SWIPE_MS = 300
MAX_GESTURE_MS = 10_000
MAX_WAIT_MS = 10_000
MAX_TEXT_CHARS = 2_000


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


_INT = {"type": "integer"}
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

ACTION_TOOLS: list[ToolSchema] = [
    _tool("tap", "Tap a point of the screenshot (image pixels).", {"x": _INT, "y": _INT}, ["x", "y"]),
    _tool(
        "long_press",
        "Touch and hold a point of the screenshot (image pixels).",
        {"x": _INT, "y": _INT, "durationMs": {"type": "integer", "minimum": 100, "maximum": MAX_GESTURE_MS}},
        ["x", "y"],
    ),
    _tool(
        "swipe",
        "Drag a finger from a start point to an end point (image pixels). To scroll a list down, "
        "swipe from lower to higher on the screen.",
        {
            "startX": _INT,
            "startY": _INT,
            "endX": _INT,
            "endY": _INT,
            "durationMs": {"type": "integer", "minimum": 50, "maximum": MAX_GESTURE_MS},
        },
        ["startX", "startY", "endX", "endY"],
    ),
    _tool(
        "type_text",
        "Type text into the focused field (tap the field first). submit=true presses Enter afterwards.",
        {"text": {"type": "string"}, "submit": {"type": "boolean"}},
        ["text"],
    ),
    _tool(
        "press_key",
        "Press a key: back, home, enter, recents, delete, or an Android KEYCODE_ name.",
        {"key": {"type": "string"}},
        ["key"],
    ),
    _tool(
        "open_app",
        "Open an app by its package name (e.g. com.android.settings).",
        {"packageName": {"type": "string"}},
        ["packageName"],
    ),
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
CONTROL_ACTIONS = frozenset({"finish_step", "fail_step", "finish_task", "extract_scrolling_content"})


class ActionError(ValueError):
    """The model's call cannot be run; the message goes back to the model as the tool result."""


@dataclass(frozen=True)
class Action:
    """A validated action: ``args`` as the model meant them, coordinates in image pixels."""

    name: str
    args: dict[str, Any]


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


def validate_action(call: ToolCall, image_width: int, image_height: int) -> Action:
    """The call as an Action, or ActionError saying exactly what is wrong."""
    if call.name not in ACTION_NAMES:
        raise ActionError(f"unknown tool {call.name!r}; the tools are: {', '.join(sorted(ACTION_NAMES))}")
    if call.error:
        raise ActionError(f"{call.name}: {call.error}")
    args = call.arguments

    def point(x_name: str, y_name: str) -> dict[str, int]:
        x, y = _number(args, x_name), _number(args, y_name)
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

    name = call.name
    if name == "tap":
        return Action(name, point("x", "y"))
    if name == "long_press":
        duration = _number(args, "durationMs", required=False, default=DEFAULT_LONG_PRESS_MS)
        return Action(name, {**point("x", "y"), "durationMs": _duration(duration, 100)})
    if name == "swipe":
        duration = _number(args, "durationMs", required=False, default=DEFAULT_SWIPE_MS)
        clean = {**point("startX", "startY"), **point("endX", "endY")}
        return Action(name, {**clean, "durationMs": _duration(duration, 50)})
    if name == "type_text":
        text = _text(args, "text")
        if len(text) > MAX_TEXT_CHARS:
            raise ActionError(f"type_text: text is {len(text)} characters; at most {MAX_TEXT_CHARS}")
        clean: dict[str, Any] = {"text": text}
        if _bool(args, "submit"):
            clean["submit"] = True
        return Action(name, clean)
    if name == "press_key":
        key = _text(args, "key")
        try:
            key_code(key)
        except ValueError as exc:
            raise ActionError(f"press_key: {exc}") from None
        return Action(name, {"key": key})
    if name == "open_app":
        return Action(name, {"packageName": _text(args, "packageName").strip()})
    if name == "wait":
        ms = _number(args, "ms", required=False, default=1000)
        if not 0 <= ms <= MAX_WAIT_MS:
            raise ActionError(f"wait: ms={ms} must be 0–{MAX_WAIT_MS}")
        return Action(name, {"ms": ms})
    if name == "extract_scrolling_content":
        return Action(name, {"instruction": _text(args, "instruction")})
    if name == "finish_step":
        return Action(name, {"summary": _text(args, "summary", allow_empty=True).strip() or "done"})
    if name == "fail_step":
        return Action(name, {"reason": _text(args, "reason")})
    return Action(name, {"conclusion": _text(args, "conclusion")})  # finish_task


def _duration(ms: int, minimum: int) -> int:
    if not minimum <= ms <= MAX_GESTURE_MS:
        raise ActionError(f"durationMs={ms} must be {minimum}–{MAX_GESTURE_MS}")
    return ms


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
