"""What the phone says of its screen — ``wm size``, ``wm density`` and the display's ``DisplayInfo``
line of ``dumpsys display`` — read as get_screen_info answers it (``parse_screen_info``).

``SCREEN_INFO_COMMAND`` asks for all three in one shell. Pure: parsing only, no I/O.
"""

from __future__ import annotations

import re
from typing import Any

SCREEN_INFO_COMMAND = "wm size; wm density; dumpsys display | grep 'DisplayInfo{'"

_REAL_SIZE = re.compile(r"real (\d+) x (\d+)")
_ROTATION = re.compile(r"rotation (\d)")
_DENSITY = re.compile(r"density (\d+)")
_STATE = re.compile(r"state (\w+)")
_WM_SIZE = re.compile(r"(Physical|Override) size:\s*(\d+)x(\d+)")
_WM_DENSITY = re.compile(r"(Physical|Override) density:\s*(\d+)")


def parse_screen_info(text: str) -> dict[str, Any]:
    """``wm size``, ``wm density`` and the display's DisplayInfo line as get_screen_info answers."""
    sizes = {kind: (int(w), int(h)) for kind, w, h in _WM_SIZE.findall(text)}
    densities = {kind: int(d) for kind, d in _WM_DENSITY.findall(text)}
    display = ""
    for line in text.splitlines():
        if "DisplayInfo{" in line and (not display or "mOverrideDisplayInfo" in line):
            display = line
    width, height = sizes.get("Override") or sizes.get("Physical") or (0, 0)
    if not width and (real := _REAL_SIZE.search(display)):
        width, height = int(real.group(1)), int(real.group(2))
    rotation_match = _ROTATION.search(display)
    rotation = int(rotation_match.group(1)) if rotation_match else 0
    if rotation % 2 == 1:
        width, height = height, width  # wm size gives the natural orientation
    density = densities.get("Override") or densities.get("Physical")
    if density is None and (found := _DENSITY.search(display)):
        density = int(found.group(1))
    state = _STATE.search(display)
    return {
        "width": width,
        "height": height,
        "density": density or 0,
        "orientation": "landscape" if width > height else "portrait",
        "rotation": rotation,
        "screenOn": state is None or state.group(1).upper() in ("ON", "VR"),
    }
