"""Targets: how a device tool names an element, and how that name becomes an element on the screen.

A target is a ref from the latest ``list_elements`` (``@e12``) or a locator (``text=Settings``, see
``locators``). ``parse_tool_target`` reads one (invalid_argument when it is not one), ``resolve`` finds
the element it names on the screen as it is now. ``TARGET`` and ``ELEMENT_SCHEMA`` are the schema
fragments every family of device tools describes targets and elements with. Pure: the phone is reached
only through the ``DeviceSession``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import errors
from ..device.interface import Bounds
from ..device.windows import WINDOW_KINDS
from .locators import Element, LocatorError, ScreenSnapshot, Target, parse_target
from .screen_elements import ELEMENT_FLAGS
from .session import DeviceSession
from .spec import BOOLEAN, INTEGER, STRING

TARGET = {
    "type": "string",
    "minLength": 1,
    "maxLength": 500,
    "description": "A ref from the latest list_elements (@e12) or a locator (text=Settings; the forms: "
    "list_elements).",
}
BOUNDS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"x1": INTEGER, "y1": INTEGER, "x2": INTEGER, "y2": INTEGER},
    "required": ["x1", "y1", "x2", "y2"],
}
ELEMENT_SCHEMA: dict[str, Any] = {  # what is left out has its default: "", false, enabled, the app
    "type": "object",
    "properties": {
        "ref": STRING,
        "text": STRING,
        "desc": STRING,
        "id": STRING,
        "class": STRING,
        "role": {
            "type": "string",
            "enum": ["button", "input", "switch", "checkbox", "list", "image", "text"],
        },
        "bounds": BOUNDS_SCHEMA,
        "center": {"type": "object", "properties": {"x": INTEGER, "y": INTEGER}, "required": ["x", "y"]},
        **{flag: BOOLEAN for flag in (*ELEMENT_FLAGS, "enabled")},
        "window": {"type": "string", "enum": list(WINDOW_KINDS)},
        "locator": STRING,
    },
    "required": ["ref", "class", "role", "bounds", "center"],
}


SETTLE_ARGUMENT = {  # no schema default: left out, the call is forwarded as it was written
    "type": "boolean",
    "description": "After an action, wait (at most 2 s) for the screen to settle before looking "
    "(default true; the answer's settledMs says how long). false: look at once.",
}


def bounds_json(bounds: Bounds) -> dict[str, int]:
    return {"x1": bounds.left, "y1": bounds.top, "x2": bounds.right, "y2": bounds.bottom}


@dataclass(frozen=True)
class Found:
    """The element a target named, and how many elements it matched (the first in reading order)."""

    element: Element
    matches: int


def parse_tool_target(tool: str, text: str) -> Target:
    """The target ``tool`` was given, parsed; invalid_argument (on ``target``) when it is not one."""
    try:
        return parse_target(text)
    except LocatorError as exc:
        raise errors.invalid_argument(
            tool, "target", str(exc).rstrip("."), f"Call {tool} with a valid target: {exc}"
        ) from None


async def resolve(env: DeviceSession, tool: str, text: str, *, touch: bool = False) -> Found:
    """The element a target names on the screen as it is now (ToolError when none does); with ``touch``
    (the tool touches it), off_screen when the soft keyboard covers it. The tree just read stands for
    the screen when no action came after it (no second read of the phone); a locator it does not match
    is looked for on a fresh read (the screen may have changed by itself)."""
    found, snapshot = await _resolve(env, tool, text)
    if touch and snapshot is not None and snapshot.under_keyboard(found.element):
        assert snapshot.keyboard is not None
        raise errors.under_keyboard(text, snapshot.keyboard.top)
    return found


async def _resolve(env: DeviceSession, tool: str, text: str) -> tuple[Found, ScreenSnapshot | None]:
    target = parse_tool_target(tool, text)
    recent = env.recent_screen()
    if target.ref is not None:
        snapshot = env.state.snapshot
        old = snapshot.by_ref.get(target.ref) if snapshot is not None else None
        if old is None:
            raise errors.unknown_ref(target.ref)
        if not env.verify_refs or (recent is not None and recent is snapshot):
            return Found(old, 1), snapshot
        fresh = recent or await env.screen()
        same = fresh.find_same(old)
        if same is None:
            raise errors.stale_ref(target.ref)
        return Found(same, 1), fresh
    fresh = recent
    found = target.find(recent) if recent is not None else []
    if not found:  # not on the tree just read (or none): the screen as it is now
        fresh = await env.screen()
        found = target.find(fresh)
    if not found:
        raise errors.no_such_element(str(target))
    return Found(found[0], len(found)), fresh
