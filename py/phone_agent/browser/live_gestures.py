"""What a person's input on the page's live view means to the phone, as calls of the catalog's tools.

A click is a ``tap``, a press held still is a ``long_press``, a drag is a ``swipe``, the wheel scrolls
(a ``swipe`` the other way), and keys become ``type_text`` or ``press_key``. Points arrive in the live
view's CSS pixels and leave in device pixels. Pure: the browser adapter (``browser.live_controls``)
feeds it events and dispatches what it answers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..tools.gestures import clear_of_bars

TAP_SLOP_CSS = 8  # a pointer that moved less than this (CSS pixels) did not drag
LONG_PRESS_MS = 500
MIN_SWIPE_MS = 50
MAX_SWIPE_MS = 3_000
WHEEL_STEP_FRACTION = 0.25  # one wheel notch (100 CSS px of delta) scrolls a quarter of the screen

# Keys that are not text: what press_key is told.
SPECIAL_KEYS = {
    "Enter": "enter",
    "Backspace": "delete",
    "Tab": "tab",
    "Escape": "back",
    "Delete": "KEYCODE_FORWARD_DEL",
    "ArrowUp": "KEYCODE_DPAD_UP",
    "ArrowDown": "KEYCODE_DPAD_DOWN",
    "ArrowLeft": "KEYCODE_DPAD_LEFT",
    "ArrowRight": "KEYCODE_DPAD_RIGHT",
    "Home": "KEYCODE_MOVE_HOME",
    "End": "KEYCODE_MOVE_END",
}


@dataclass(frozen=True)
class ViewGeometry:
    """The live view's content box on the page (CSS pixels) and the screen it shows (device pixels),
    drawn as CSS ``object-fit: contain`` draws it: scaled to fit, centred, letterboxed."""

    css_width: float
    css_height: float
    device_width: int
    device_height: int

    def to_device(self, css_x: float, css_y: float) -> tuple[int, int]:
        scale = min(self.css_width / self.device_width, self.css_height / self.device_height)
        if scale <= 0:
            return 0, 0
        left = (self.css_width - self.device_width * scale) / 2
        top = (self.css_height - self.device_height * scale) / 2
        x, y = int((css_x - left) / scale), int((css_y - top) / scale)
        return min(max(x, 0), self.device_width - 1), min(max(y, 0), self.device_height - 1)


CatalogCall = tuple[str, dict[str, Any]]


def pointer_gesture(
    view: ViewGeometry, start: tuple[float, float], end: tuple[float, float], duration_ms: float
) -> CatalogCall:
    """The tool call a press from ``start`` to ``end`` (CSS pixels in the view) stands for."""
    moved = max(abs(end[0] - start[0]), abs(end[1] - start[1]))
    x1, y1 = view.to_device(*start)
    if moved < TAP_SLOP_CSS:
        if duration_ms >= LONG_PRESS_MS:
            return "long_press", {"x": x1, "y": y1, "durationMs": int(min(duration_ms, 10_000))}
        return "tap", {"x": x1, "y": y1}
    x2, y2 = view.to_device(*end)
    duration = int(min(max(duration_ms, MIN_SWIPE_MS), MAX_SWIPE_MS))
    return "swipe", {"startX": x1, "startY": y1, "endX": x2, "endY": y2, "durationMs": duration}


def wheel_gesture(view: ViewGeometry, at: tuple[float, float], delta_y: float) -> CatalogCall | None:
    """A wheel turn at ``at``: scroll the content by moving a finger against it (None for no turn).
    The stroke stays where a ``swipe`` with no target does (``tools.gestures.clear_of_bars``): a big
    turn near an edge must not start on the navigation or status bar, where it scrolls nothing."""
    if not delta_y:
        return None
    x, y = view.to_device(*at)
    _left, top, _right, bottom = clear_of_bars(view.device_width, view.device_height)
    notches = max(-4.0, min(4.0, delta_y / 100))
    span = int(abs(notches) * WHEEL_STEP_FRACTION * view.device_height)
    span = max(1, min(span, (bottom - top) * 9 // 10))
    centre = min(max(y, top + span // 2 + 1), bottom - span // 2 - 1)
    # Scrolling down (positive delta) shows what is below: the finger moves up.
    start_y = centre + span // 2 if delta_y > 0 else centre - span // 2
    end_y = start_y - span if delta_y > 0 else start_y + span
    return "swipe", {"startX": x, "startY": start_y, "endX": x, "endY": end_y, "durationMs": 200}


def key_action(key: str, ctrl: bool = False, meta: bool = False) -> CatalogCall | None:
    """A key pressed while the live view has the focus: text to type, a key to press, or nothing."""
    if ctrl or meta:
        return None  # the browser's own shortcuts stay the browser's
    if key in SPECIAL_KEYS:
        return "press_key", {"key": SPECIAL_KEYS[key]}
    if len(key) == 1:  # a printable character (any script): typed as text
        return "type_text", {"text": key}
    return None


def merge_typing(calls: list[CatalogCall]) -> list[CatalogCall]:
    """Consecutive characters typed quickly become one ``type_text`` (one round trip to the phone)."""
    merged: list[CatalogCall] = []
    for name, args in calls:
        if name == "type_text" and merged and merged[-1][0] == "type_text":
            merged[-1] = ("type_text", {"text": merged[-1][1]["text"] + args["text"]})
        else:
            merged.append((name, dict(args)))
    return merged
