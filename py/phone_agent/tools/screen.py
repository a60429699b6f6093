"""The screen: list_elements (what is on it, each element with a ref the other tools accept),
get_screen_info (its size, density, orientation, whether it is on) and set_orientation.

Each handler stands beside its catalog entry. list_elements remembers the screen it handed out (its
refs) and its size in the ``DeviceSession``; set_orientation forgets the size. Pure: the phone is
reached only through the ``Device`` interface.
"""

from __future__ import annotations

from typing import Any

from ..device.interface import TREE_DUMP, TREE_SERVER
from ..device.windows import KEYBOARD
from .apps import APP_SCHEMA, app_json
from .locators import FORMS, ScreenSnapshot
from .results import action_result
from .spec import BOOLEAN, INTEGER, STRING, CallEnv, ToolSpec, object_schema, result_schema
from .targets import BOUNDS_SCHEMA, ELEMENT_SCHEMA, SETTLE_ARGUMENT, TARGET, bounds_json, parse_tool_target

DEFAULT_MAX_ELEMENTS = 200


async def list_elements(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    phone = env.session()
    look = await phone.look(args.get("settle", True), focus=True)
    snapshot, focus = look.snapshot, look.focus
    phone.state.snapshot = snapshot
    chosen = snapshot.elements
    if "target" in args:
        target = parse_tool_target("list_elements", args["target"])
        if target.ref is not None:
            chosen = [snapshot.by_ref[target.ref]] if target.ref in snapshot.by_ref else []
        else:
            chosen = target.find(snapshot)
    shown = chosen[: args["maxElements"]]
    app = app_json(focus)
    structured = {
        "elements": [element.to_json() for element in shown],
        "app": app,
        "screen": {"width": snapshot.width, "height": snapshot.height},
        "total": len(chosen),
        "treeSource": phone.state.tree_source,
        "settledMs": look.settled_ms,
    }
    if len(shown) < len(chosen):  # said only when it is so
        structured["truncated"] = True
    if phone.state.tree_note:
        structured["treeNote"] = phone.state.tree_note
    if snapshot.keyboard is not None:
        structured["keyboard"] = bounds_json(snapshot.keyboard)
    lines = "\n".join(element.line() for element in shown) or (
        f'(no element matches "{args["target"]}")' if "target" in args else "(no elements on this screen)"
    )
    # The rest (how the tree was read, how long the screen took to settle) is in structuredContent; a
    # tree note is news (a partial tree, a restarted reader) and is said.
    summary = (
        f"{len(shown)} of {len(chosen)} elements"
        f"{' matching ' + args['target'] if 'target' in args else ''}; app "
        f"{app['packageName'] or 'unknown'}; screen {snapshot.width}x{snapshot.height}"
        f"{_windows_said(snapshot)}" + (f". {phone.state.tree_note}" if phone.state.tree_note else "")
    )
    return action_result(lines, structured, summary)


def _windows_said(snapshot: ScreenSnapshot) -> str:
    """``; windows: system, app, keyboard (covers y 1500-2274)`` when the screen has more than one."""
    if len(snapshot.windows) < 2 and snapshot.keyboard is None:
        return ""
    kinds = []
    for window in snapshot.windows:
        said = window.kind
        if window.kind == KEYBOARD:
            said += f" (covers y {window.bounds.top}-{window.bounds.bottom})"
        if said not in kinds:
            kinds.append(said)
    return "; windows: " + ", ".join(kinds)


LIST_ELEMENTS = ToolSpec(
    name="list_elements",
    title="List the screen's elements",
    description="The screen's elements now (every window: app, keyboard, system bars, dialogs) in "
    "reading order, one a line, e.g. `@e3 Connected devices (button) [540,657]` (role text unsaid), each "
    "with a ref (@e3) "
    "valid until the screen changes and a locator that finds exactly it. A target (any tool's) is "
    f"{FORMS}. Password text is never read.",
    input_schema=object_schema(
        {
            "target": {**TARGET, "description": "Only the elements this locator matches."},
            "maxElements": {
                "type": "integer",
                "minimum": 1,
                "maximum": 1000,
                "default": DEFAULT_MAX_ELEMENTS,
                "description": "At most this many elements (default 200).",
            },
            "settle": SETTLE_ARGUMENT,
        }
    ),
    read_only=True,
    consequential=False,
    relay_timeout_ms=45_000,
    output_schema=result_schema(
        {
            "elements": {"type": "array", "items": ELEMENT_SCHEMA},
            "app": APP_SCHEMA,
            "screen": result_schema({"width": INTEGER, "height": INTEGER}, ["width", "height"]),
            "total": INTEGER,
            "truncated": BOOLEAN,
            "treeSource": {"type": "string", "enum": [TREE_SERVER, TREE_DUMP]},
            "treeNote": STRING,
            "settledMs": INTEGER,
            "keyboard": BOUNDS_SCHEMA,
        },
        ["elements", "app", "screen"],
    ),
    untrusted_content=True,
    run=list_elements,
)


async def get_screen_info(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    phone = env.session()
    info = await phone.device.screen_info()
    text = (
        f"{info['width']}x{info['height']} px, {info['density']} dpi, {info['orientation']}, "
        f"screen {'on' if info['screenOn'] else 'off'}"
    )
    return action_result(text, info)


GET_SCREEN_INFO = ToolSpec(
    name="get_screen_info",
    title="Get screen info",
    description="The screen's size in device pixels, density (dpi), orientation and whether it is on.",
    input_schema=object_schema({}),
    read_only=True,
    consequential=False,
    relay_timeout_ms=15_000,
    output_schema=result_schema(
        {
            "width": INTEGER,
            "height": INTEGER,
            "density": INTEGER,
            "orientation": {"type": "string", "enum": ["portrait", "landscape"]},
            "rotation": INTEGER,
            "screenOn": BOOLEAN,
        },
        ["width", "height", "density", "orientation", "screenOn"],
    ),
    run=get_screen_info,
)


async def set_orientation(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    phone = env.session()
    await phone.device.set_orientation(args["orientation"])
    phone.state.screen_size = phone.state.display = None
    return action_result(f"orientation set to {args['orientation']}", {"orientation": args["orientation"]})


SET_ORIENTATION = ToolSpec(
    name="set_orientation",
    title="Set the orientation",
    description="Lock the screen in portrait or landscape (turns auto-rotate off).",
    input_schema=object_schema(
        {
            "orientation": {
                "type": "string",
                "enum": ["portrait", "landscape"],
                "description": "portrait or landscape.",
            }
        },
        required=["orientation"],
    ),
    read_only=False,
    consequential=False,
    relay_timeout_ms=15_000,
    output_schema=result_schema({"orientation": STRING}, ["orientation"]),
    run=set_orientation,
    idempotent=True,
)
