"""Text and keys: the device tools that type — type_text (into the focused field or a target) and
press_key.

Each handler stands beside its catalog entry. type_text can tap a target first, empty the field and
press Enter after; it answers how the phone typed (input text, ADBKeyBoard, the clipboard or scrcpy).
Pure: the phone is reached only through the ``Device`` interface.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from .. import errors
from ..device.interface import key_code
from .locators import Element
from .results import action_result
from .spec import BOOLEAN, INTEGER, STRING, CallEnv, ToolSpec, object_schema, result_schema
from .targets import TARGET, resolve

MAX_TEXT_CHARS = 5_000
MAX_CLEAR_CHARS = 500


@dataclass(frozen=True)
class Typed:
    """What typing did: the sentence for the answer and its structured part."""

    said: str
    structured: dict[str, Any]


async def type_into(
    env: CallEnv,
    text: str,
    args: dict[str, Any],
    *,
    shown: str | None = None,
    typed: Callable[[], Awaitable[None]] | None = None,
) -> Typed:
    """Type ``text`` as type_text does (``args``: target, clear, submit). ``shown`` is how the answer
    names what was typed instead of the text itself (type_secret: "the secret NAME"); ``typed`` runs
    once the text is in, before Enter (type_secret: which field now shows the secret)."""
    phone = env.session()
    structured: dict[str, Any] = {"typed": text}
    field_element: Element | None = None
    if "target" in args:
        found = await resolve(phone, "type_text", args["target"], touch=True)
        field_element = found.element
        await phone.device.tap(*field_element.center)
        phone.state.acted()
        await phone.settle()  # the field takes the focus (the keyboard rises): bounded, not a sleep
        structured.update({"target": args["target"], "matches": found.matches})
    if args.get("clear"):
        if field_element is None:
            focused = [e for e in (await phone.screen()).elements if e.focused and e.role == "input"]
            field_element = focused[0] if focused else None
        length = len(field_element.text) if field_element is not None and field_element.text else 0
        if field_element is not None and field_element.password:
            length = 64  # its text is never read back, so clear generously
        if length:
            count = min(length, MAX_CLEAR_CHARS)
            await phone.device.delete_chars(count)
        structured["cleared"] = True
    method = await phone.device.type_text(text) or "input text"
    structured["method"] = method
    if typed is not None:
        await typed()
    if args.get("submit"):
        await phone.device.press_key("enter")
        structured["submitted"] = True
    if shown is None:
        shown = "•" * len(text) if field_element is not None and field_element.password else repr(text)
    said = f"typed {shown}" + (" and pressed Enter" if args.get("submit") else "")
    return Typed(f"{said} (via {method})", structured)


async def type_text(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    done = await type_into(env, args["text"], args)
    return action_result(done.said, done.structured)


TYPE_TEXT = ToolSpec(
    name="type_text",
    title="Type text",
    description="Type text (any Unicode) into the focused field, or into target after tapping it. "
    "clear=true empties the field first; submit=true presses Enter after. Answers how it was typed "
    "(input text, ADBKeyBoard or clipboard).",
    input_schema=object_schema(
        {
            "text": {
                "type": "string",
                "minLength": 1,
                "maxLength": MAX_TEXT_CHARS,
                "description": "The text to type; any Unicode.",
            },
            "target": TARGET,
            "clear": {**BOOLEAN, "default": False, "description": "Empty the field first."},
            "submit": {**BOOLEAN, "default": False, "description": "Press Enter after typing."},
        },
        required=["text"],
    ),
    read_only=False,
    consequential=False,
    relay_timeout_ms=90_000,
    output_schema=result_schema(
        {
            "typed": STRING,
            "method": STRING,
            "target": STRING,
            "matches": INTEGER,
            "cleared": BOOLEAN,
            "submitted": BOOLEAN,
        },
        ["typed", "method"],
    ),
    run=type_text,
    agent_action=True,
)


async def press_key(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    phone = env.session()
    try:
        code = key_code(args["key"])
    except ValueError as exc:
        raise errors.invalid_argument(
            "press_key", "key", str(exc), "Use back, home, enter, recents, delete, or a KEYCODE_ name."
        ) from None
    await phone.device.press_key(args["key"])
    return action_result(f"pressed {code}", {"key": code})


PRESS_KEY = ToolSpec(
    name="press_key",
    title="Press a key",
    description="Press a key: back, home, enter, recents, delete, tab, space, menu, search, power, "
    "volume_up, volume_down, or any Android KEYCODE_ name or number.",
    input_schema=object_schema(
        {
            "key": {
                "type": "string",
                "minLength": 1,
                "maxLength": 64,
                "description": "back, home, enter, recents, delete … or a KEYCODE_ name.",
            }
        },
        required=["key"],
    ),
    read_only=False,
    consequential=False,
    relay_timeout_ms=20_000,
    output_schema=result_schema({"key": STRING}, ["key"]),
    run=press_key,
    agent_action=True,
)
