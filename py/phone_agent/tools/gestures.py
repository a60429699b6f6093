"""Gestures: the device tools that touch the screen — tap, long_press, swipe and scroll_to.

Each handler stands beside its catalog entry. A tap-like action lands on a target's centre or on x and
y in device pixels (checked against the screen's size); a swipe goes between two points or in a
direction across the screen or inside a target; scroll_to swipes a list until a locator matches.
Pure: the phone is reached only through the ``Device`` interface.
"""

from __future__ import annotations

from typing import Any

from .. import errors
from .locators import ScreenSnapshot
from .results import action_result
from .session import DeviceSession
from .spec import BOOLEAN, INTEGER, STRING, CallEnv, ToolSpec, object_schema, result_schema
from .targets import ELEMENT_SCHEMA, TARGET, parse_tool_target, resolve

DEFAULT_LONG_PRESS_MS = 800
DEFAULT_SWIPE_MS = 300
MAX_GESTURE_MS = 10_000
DIRECTIONS = ("up", "down", "left", "right")

X = {"type": "integer", "minimum": 0, "maximum": 100_000, "description": "Device pixels from the left."}
Y = {"type": "integer", "minimum": 0, "maximum": 100_000, "description": "Device pixels from the top."}
POINT_RESULT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "x": INTEGER,
        "y": INTEGER,
        "target": STRING,
        "matches": {"type": "integer", "minimum": 1},
    },
    "required": ["x", "y"],
}


async def _point(env: DeviceSession, tool: str, args: dict[str, Any]) -> tuple[int, int, dict[str, Any]]:
    """Where a tap-like action lands: the target's centre, or x and y; with what to report of it."""
    has_xy = "x" in args or "y" in args
    if "target" in args:
        if has_xy:
            raise errors.invalid_argument(
                tool, "target", "cannot be given with x and y", f"Call {tool} with a target or with x and y."
            )
        found = await resolve(env, tool, args["target"], touch=True)
        element = found.element  # a disabled one too: the answer says it is disabled
        report = {"target": args["target"], "matches": found.matches, "element": element.to_json()}
        return element.center[0], element.center[1], report
    if "x" not in args or "y" not in args:
        missing = "y" if "x" in args else "x"
        raise errors.invalid_argument(
            tool,
            missing,
            "is required (give a target, or both x and y)",
            f"Call {tool} with a target (a ref such as @e3 or a locator such as text=OK) or with both "
            "x and y in device pixels.",
        )
    x, y = int(args["x"]), int(args["y"])
    width, height = await env.screen_size()
    if not (0 <= x < width and 0 <= y < height):
        raise errors.off_screen(f"The point ({x},{y})", width, height)
    return x, y, {}


def _matched(report: dict[str, Any]) -> str:
    """What the answer's text says of the element a target named: its label, how many matched, whether
    it is disabled ("" for a point)."""
    if not report:
        return ""
    element = report["element"]
    label = element.get("text") or element.get("desc") or element.get("id") or element["class"]
    note = f" on {report['target']} ({label!s})" if label else f" on {report['target']}"
    if report["matches"] > 1:
        note += f"; {report['matches']} elements matched, the first in reading order was used"
    if not element.get("enabled", True):
        note += "; the element is disabled"
    return note


def _public(report: dict[str, Any]) -> dict[str, Any]:
    """What structuredContent says of the target: the target and how many elements it matched."""
    return {"target": report["target"], "matches": report["matches"]} if report else {}


async def tap(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    phone = env.session()
    x, y, report = await _point(phone, "tap", args)
    await phone.device.tap(x, y)
    if args.get("double"):
        await phone.device.tap(x, y)
    structured: dict[str, Any] = {"x": x, "y": y, **_public(report)}
    if args.get("double"):
        structured["double"] = True
    verb = "double-tapped" if args.get("double") else "tapped"
    return action_result(f"{verb} at ({x},{y}){_matched(report)}", structured)


TAP = ToolSpec(
    name="tap",
    title="Tap",
    description="Tap an element (target: a ref from list_elements or a locator such as "
    "text=Settings) or a point (x, y in device pixels). double=true taps twice.",
    input_schema=object_schema(
        {
            "target": TARGET,
            "x": X,
            "y": Y,
            "double": {**BOOLEAN, "default": False, "description": "Tap twice (a double tap)."},
        }
    ),
    read_only=False,
    consequential=False,
    relay_timeout_ms=45_000,
    output_schema={
        **POINT_RESULT,
        "properties": {**POINT_RESULT["properties"], "double": BOOLEAN},
    },
    run=tap,
    agent_action=True,
)


async def long_press(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    phone = env.session()
    x, y, report = await _point(phone, "long_press", args)
    duration = args["durationMs"]
    await phone.device.long_press(x, y, duration)
    structured = {"x": x, "y": y, "durationMs": duration, **_public(report)}
    return action_result(f"long-pressed at ({x},{y}) for {duration} ms{_matched(report)}", structured)


LONG_PRESS = ToolSpec(
    name="long_press",
    title="Long-press",
    description="Touch and hold an element (target) or a point (x, y in device pixels) for "
    "durationMs (default 800).",
    input_schema=object_schema(
        {
            "target": TARGET,
            "x": X,
            "y": Y,
            "durationMs": {
                "type": "integer",
                "minimum": 100,
                "maximum": MAX_GESTURE_MS,
                "default": DEFAULT_LONG_PRESS_MS,
                "description": "How long to hold, in ms (default 800).",
            },
        }
    ),
    read_only=False,
    consequential=False,
    relay_timeout_ms=55_000,
    output_schema={
        **POINT_RESULT,
        "properties": {**POINT_RESULT["properties"], "durationMs": INTEGER},
        "required": ["x", "y", "durationMs"],
    },
    run=long_press,
    agent_action=True,
)


_SWIPE_POINTS = ("startX", "startY", "endX", "endY")


def clear_of_bars(width: int, height: int) -> tuple[int, int, int, int]:
    """Where a swipe with no target stays (left, top, right, bottom): the middle three fifths of the
    screen, clear of the status bar, app bars, the navigation bar and its edge gestures."""
    return 0, height // 5, width, height * 4 // 5


def direction_points(
    area: tuple[int, int, int, int], direction: str, distance: int | None
) -> tuple[int, int, int, int]:
    """A finger stroke in ``direction`` through the middle of ``area`` (left, top, right, bottom)."""
    left, top, right, bottom = area
    cx, cy = (left + right) // 2, (top + bottom) // 2
    vertical = direction in ("up", "down")
    extent = (bottom - top) if vertical else (right - left)
    span = distance if distance is not None else extent * 6 // 10
    span = max(1, min(span, extent * 9 // 10))
    half = span // 2
    if direction == "up":
        return cx, cy + half, cx, cy - half
    if direction == "down":
        return cx, cy - half, cx, cy + half
    if direction == "left":
        return cx + half, cy, cx - half, cy
    return cx - half, cy, cx + half, cy


async def swipe(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    phone = env.session()
    given = [name for name in _SWIPE_POINTS if name in args]
    duration = args["durationMs"]
    width, height = await phone.screen_size()
    report: dict[str, Any] = {}
    if "direction" in args:
        if given:
            raise errors.invalid_argument(
                "swipe",
                "direction",
                "cannot be given with start and end points",
                "Call swipe with direction (and optional target, distance) or with startX, startY, endX, "
                "endY.",
            )
        area = clear_of_bars(width, height)
        if "target" in args:
            found = await resolve(phone, "swipe", args["target"])
            bounds = found.element.bounds
            area = (
                max(bounds.left, 0),
                max(bounds.top, 0),
                min(bounds.right, width),
                min(bounds.bottom, height),
            )
            report = {"target": args["target"], "matches": found.matches, "element": found.element.to_json()}
        x1, y1, x2, y2 = direction_points(area, args["direction"], args.get("distance"))
    else:
        if "target" in args or "distance" in args:
            field_name = "target" if "target" in args else "distance"
            raise errors.invalid_argument(
                "swipe",
                field_name,
                "only goes with direction",
                "Give direction with target or distance, or give startX, startY, endX and endY.",
            )
        missing = [name for name in _SWIPE_POINTS if name not in args]
        if missing:
            raise errors.invalid_argument(
                "swipe",
                missing[0],
                "is required (give direction, or all of startX, startY, endX, endY)",
                "Call swipe with direction (up, down, left, right) or with all four points in device pixels.",
            )
        x1, y1, x2, y2 = (int(args[name]) for name in _SWIPE_POINTS)
        for x, y in ((x1, y1), (x2, y2)):
            if not (0 <= x < width and 0 <= y < height):
                raise errors.off_screen(f"The point ({x},{y})", width, height)
    await phone.device.swipe(x1, y1, x2, y2, duration)
    structured = {"startX": x1, "startY": y1, "endX": x2, "endY": y2, "durationMs": duration}
    if "direction" in args:
        structured["direction"] = args["direction"]
    structured.update(_public(report))
    text = f"swiped from ({x1},{y1}) to ({x2},{y2}) in {duration} ms{_matched(report)}"
    return action_result(text, structured)


SWIPE = ToolSpec(
    name="swipe",
    title="Swipe",
    description="Drag a finger: from (startX, startY) to (endX, endY) in device pixels, or in a "
    "direction (up, down, left, right: the way the finger moves; swiping up scrolls a list down) "
    "across the screen or inside target, over distance pixels (default 60 % of the area).",
    input_schema=object_schema(
        {
            "startX": X,
            "startY": Y,
            "endX": X,
            "endY": Y,
            "direction": {
                "type": "string",
                "enum": list(DIRECTIONS),
                "description": "The way the finger moves (up scrolls a list down).",
            },
            "target": {
                **TARGET,
                "description": "With direction: swipe inside this element. " + TARGET["description"],
            },
            "distance": {
                "type": "integer",
                "minimum": 1,
                "maximum": 100_000,
                "description": "With direction: the stroke's length in device pixels.",
            },
            "durationMs": {
                "type": "integer",
                "minimum": 50,
                "maximum": MAX_GESTURE_MS,
                "default": DEFAULT_SWIPE_MS,
                "description": "How long the stroke takes, in ms (default 300).",
            },
        }
    ),
    read_only=False,
    consequential=False,
    relay_timeout_ms=60_000,
    output_schema=result_schema(
        {
            "startX": INTEGER,
            "startY": INTEGER,
            "endX": INTEGER,
            "endY": INTEGER,
            "durationMs": INTEGER,
            "direction": STRING,
            "target": STRING,
            "matches": INTEGER,
        },
        ["startX", "startY", "endX", "endY", "durationMs"],
    ),
    run=swipe,
    agent_action=True,
)


_SCROLL_FINGER = {"down": "up", "up": "down", "right": "left", "left": "right"}


def _scroll_area(snapshot: ScreenSnapshot) -> tuple[int, int, int, int]:
    lists = [element for element in snapshot.elements if element.scrollable]
    if lists:
        biggest = max(lists, key=lambda element: element.bounds.width * element.bounds.height)
        bounds = biggest.bounds
        return (
            max(bounds.left, 0),
            max(bounds.top, 0),
            min(bounds.right, snapshot.width or bounds.right),
            min(bounds.bottom, snapshot.height or bounds.bottom),
        )
    return clear_of_bars(snapshot.width, snapshot.height)


def _screen_key(snapshot: ScreenSnapshot) -> list[tuple[Any, ...]]:
    return [element.identity() for element in snapshot.elements]


async def scroll_to(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    phone = env.session()
    target = parse_tool_target("scroll_to", args["target"])
    if target.ref is not None:
        raise errors.invalid_argument(
            "scroll_to",
            "target",
            "must be a locator, not a ref (a ref names an element of a screen already seen)",
            "Call scroll_to with a locator such as text=Bluetooth or textContains=bluetooth.",
        )
    direction = args["direction"]
    swipes = 0
    previous: list[tuple[Any, ...]] | None = None
    while True:
        snapshot = await phone.screen()
        found = target.find(snapshot)
        if found:
            phone.state.snapshot = snapshot
            element = found[0]
            structured = {"element": element.to_json(), "swipes": swipes, "matches": len(found)}
            text = f"found {element.line()} after {swipes} swipe{'s' if swipes != 1 else ''} {direction}"
            return action_result(text, structured)
        key = _screen_key(snapshot)
        if swipes >= args["maxSwipes"] or key == previous:
            end = "the end of the list was reached" if key == previous else f"{swipes} swipes"
            raise errors.no_such_element(str(target), f"after scrolling {direction} ({end})")
        previous = key
        x1, y1, x2, y2 = direction_points(_scroll_area(snapshot), _SCROLL_FINGER[direction], None)
        await phone.device.swipe(x1, y1, x2, y2, DEFAULT_SWIPE_MS)
        swipes += 1
        phone.state.acted()  # the next read waits for the scroll to settle (bounded)


SCROLL_TO = ToolSpec(
    name="scroll_to",
    title="Scroll to an element",
    description="Scroll the screen's list until an element matching target (a locator) is on the "
    "screen, swiping at most maxSwipes times (default 10); direction is the way the content "
    "scrolls (default down). Answers the element found, with a ref, or no_such_element.",
    input_schema=object_schema(
        {
            "target": TARGET,
            "direction": {
                "type": "string",
                "enum": list(DIRECTIONS),
                "default": "down",
                "description": "The way the content scrolls (default down: towards the list's end).",
            },
            "maxSwipes": {
                "type": "integer",
                "minimum": 0,
                "maximum": 50,
                "default": 10,
                "description": "Give up after this many swipes (default 10).",
            },
        },
        required=["target"],
    ),
    read_only=False,
    consequential=False,
    relay_timeout_ms=300_000,
    output_schema=result_schema(
        {"element": ELEMENT_SCHEMA, "swipes": INTEGER, "matches": INTEGER}, ["element", "swipes"]
    ),
    untrusted_content=True,
    run=scroll_to,
)
