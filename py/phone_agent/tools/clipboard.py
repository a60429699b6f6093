"""Clipboard: the device tools get_clipboard and set_clipboard.

Through scrcpy's clipboard messages when the live view runs scrcpy (any Unicode, acknowledged by the
phone; ``paste`` pastes into the focused field); otherwise setting goes through the Clipper app when
installed, and reading is unsupported (Android lets only the focused app read the clipboard). Pure:
the phone is reached only through the ``Device`` interface.
"""

from __future__ import annotations

from typing import Any

from .results import action_result
from .spec import BOOLEAN, INTEGER, STRING, CallEnv, ToolSpec, object_schema, result_schema

CLIPBOARD_MAX = 100_000


async def get_clipboard(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    phone = env.session()
    text = await phone.device.get_clipboard()
    shown = text if text else "(the clipboard is empty)"
    return action_result(shown, {"text": text})


GET_CLIPBOARD = ToolSpec(
    name="get_clipboard",
    title="Get the clipboard",
    description="The phone's clipboard text (needs scrcpy: turn on the live view through scrcpy in "
    "the page).",
    input_schema=object_schema({}),
    read_only=True,
    consequential=False,
    relay_timeout_ms=15_000,
    output_schema=result_schema({"text": STRING}, ["text"]),
    untrusted_content=True,
    run=get_clipboard,
)


async def set_clipboard(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    phone = env.session()
    text, paste = args["text"], args["paste"]
    via = await phone.device.set_clipboard(text, paste)
    said = f"put {len(text)} characters on the clipboard" + (" and pasted them" if paste else "")
    return action_result(f"{said} (through {via})", {"length": len(text), "pasted": paste, "via": via})


SET_CLIPBOARD = ToolSpec(
    name="set_clipboard",
    title="Set the clipboard",
    description="Put text (any Unicode) on the phone's clipboard; paste=true also pastes it into the focused "
    "field. Through scrcpy when it runs, else the Clipper app.",
    input_schema=object_schema(
        {
            "text": {"type": "string", "maxLength": CLIPBOARD_MAX, "description": "The text to put there."},
            "paste": {**BOOLEAN, "default": False, "description": "Also paste it into the focused field."},
        },
        required=["text"],
    ),
    read_only=False,
    consequential=False,
    relay_timeout_ms=15_000,
    output_schema=result_schema(
        {"length": INTEGER, "pasted": BOOLEAN, "via": STRING}, ["length", "pasted", "via"]
    ),
    run=set_clipboard,
    idempotent=True,
)
