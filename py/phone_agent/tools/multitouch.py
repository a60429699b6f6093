"""Multi-touch: the device tool pinch — two fingers about a target's centre or a point (the screen's
centre by default) spreading apart (scale > 1, zoom in) or closing (scale < 1, zoom out). It needs
scrcpy's multi-touch injection; without scrcpy it is ``unsupported``, with the remedy. Pure: the phone
is reached only through the ``Device`` interface.
"""

from __future__ import annotations

from typing import Any

from .gestures import POINT_RESULT, X, Y, _matched, _point, _public
from .results import action_result
from .spec import CallEnv, ToolSpec, object_schema
from .targets import TARGET


async def pinch(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    phone = env.session()
    if "target" in args or "x" in args or "y" in args:
        x, y, report = await _point(phone, "pinch", args)
    else:
        width, height = await phone.screen_size()
        x, y, report = width // 2, height // 2, {}
    scale = float(args["scale"])
    await phone.device.pinch(x, y, scale, args["durationMs"])
    verb = "pinched out (zoom in)" if scale > 1 else "pinched in (zoom out)"
    return action_result(
        f"{verb} ×{scale:g} at ({x},{y}){_matched(report)}",
        {"x": x, "y": y, "scale": scale, **_public(report)},
    )


PINCH = ToolSpec(
    name="pinch",
    title="Pinch",
    description="Two-finger pinch about an element (target) or a point (x, y; default the screen's centre): "
    "scale > 1 spreads the fingers (zoom in), < 1 closes them (zoom out). Needs scrcpy (the live view).",
    input_schema=object_schema(
        {
            "target": TARGET,
            "x": X,
            "y": Y,
            "scale": {
                "type": "number",
                "minimum": 0.1,
                "maximum": 10,
                "description": "How far the fingers end apart, relative to where they start (2 = twice).",
            },
            "durationMs": {
                "type": "integer",
                "minimum": 100,
                "maximum": 5000,
                "default": 400,
                "description": "How long the fingers move (default 400 ms).",
            },
        },
        required=["scale"],
    ),
    read_only=False,
    consequential=False,
    relay_timeout_ms=20_000,
    output_schema={
        **POINT_RESULT,
        "properties": {**POINT_RESULT["properties"], "scale": {"type": "number"}},
        "required": ["x", "y", "scale"],
    },
    run=pinch,
)
