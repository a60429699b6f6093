"""The node tree of one screen: the single truth that the renderer draws,
taps hit-test and `uiautomator dump` reports.

A node carries the attributes uiautomator prints, the action a tap triggers,
and a `Paint` saying how the renderer draws it. Bounds are what is visible on
screen (already clipped to scrolling containers, as on Android); `box` keeps
the unclipped rectangle for drawing.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

Rect = tuple[int, int, int, int]
Color = tuple[int, int, int]


@dataclass(frozen=True)
class Paint:
    """How to draw a node. `kind` picks the drawing routine in render.py."""

    kind: str = "box"
    bg: Color | None = None
    fg: Color = (28, 27, 31)
    size: int = 40
    bold: bool = False
    radius: int = 0
    align: str = "left"
    pad: int = 0
    label: str = ""  # text drawn instead of the node's text (hints, glyphs)


@dataclass
class SimulatedView:
    """One view, as uiautomator reports it, plus what a tap on it does."""

    cls: str
    bounds: Rect
    text: str = ""
    resource_id: str = ""
    package: str = ""
    content_desc: str = ""
    checkable: bool = False
    checked: bool = False
    clickable: bool = False
    enabled: bool = True
    focusable: bool = False
    focused: bool = False
    scrollable: bool = False
    long_clickable: bool = False
    password: bool = False
    selected: bool = False
    children: list[SimulatedView] = field(default_factory=list)
    action: str | None = None
    paint: Paint | None = None
    box: Rect | None = None
    clip: bool = False
    secure: bool = False  # a window with FLAG_SECURE: screenshots and scrcpy show it black

    def add(self, child: SimulatedView | None) -> SimulatedView | None:
        """Append a child (None, for a node clipped away, is skipped)."""
        if child is not None:
            if not child.package:
                child.package = self.package
            self.children.append(child)
        return child

    def walk(self) -> Iterator[SimulatedView]:
        yield self
        for child in self.children:
            yield from child.walk()

    @property
    def draw_box(self) -> Rect:
        return self.box or self.bounds

    @property
    def center(self) -> tuple[int, int]:
        x1, y1, x2, y2 = self.bounds
        return (x1 + x2) // 2, (y1 + y2) // 2


def intersect(a: Rect, b: Rect) -> Rect | None:
    """The overlap of two rectangles, or None when they do not overlap."""
    x1, y1 = max(a[0], b[0]), max(a[1], b[1])
    x2, y2 = min(a[2], b[2]), min(a[3], b[3])
    if x2 <= x1 or y2 <= y1:
        return None
    return (x1, y1, x2, y2)


def contains(rect: Rect, x: float, y: float) -> bool:
    return rect[0] <= x < rect[2] and rect[1] <= y < rect[3]


def hit_test(windows: list[SimulatedView], x: float, y: float) -> SimulatedView | None:
    """The node a touch at (x, y) lands on: the topmost, deepest node with an action."""
    found: SimulatedView | None = None
    for root in windows:  # later windows are drawn on top
        for node in root.walk():
            if node.action is not None and contains(node.bounds, x, y):
                found = node
    return found


def find_scrollable(windows: list[SimulatedView], x: float, y: float) -> SimulatedView | None:
    """The innermost scrollable node under (x, y)."""
    found: SimulatedView | None = None
    for root in windows:
        for node in root.walk():
            if node.scrollable and contains(node.bounds, x, y):
                found = node
    return found


def _escape(value: str) -> str:
    """Attribute escaping as Android's XmlSerializer does it (always double quotes)."""
    return (
        value.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("\n", "&#10;")
    )


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _dump_node(node: SimulatedView, index: int, out: list[str]) -> None:
    x1, y1, x2, y2 = node.bounds
    attrs = [
        ("index", str(index)),
        ("text", node.text),
        ("resource-id", node.resource_id),
        ("class", node.cls),
        ("package", node.package),
        ("content-desc", node.content_desc),
        ("checkable", _flag(node.checkable)),
        ("checked", _flag(node.checked)),
        ("clickable", _flag(node.clickable)),
        ("enabled", _flag(node.enabled)),
        ("focusable", _flag(node.focusable)),
        ("focused", _flag(node.focused)),
        ("scrollable", _flag(node.scrollable)),
        ("long-clickable", _flag(node.long_clickable)),
        ("password", _flag(node.password)),
        ("selected", _flag(node.selected)),
        ("bounds", f"[{x1},{y1}][{x2},{y2}]"),
    ]
    out.append("<node " + " ".join(f'{k}="{_escape(v)}"' for k, v in attrs))
    if node.children:
        out.append(">")
        for i, child in enumerate(node.children):
            _dump_node(child, i, out)
        out.append("</node>")
    else:
        out.append(" />")


def dump_xml(windows: list[SimulatedView]) -> str:
    """The window hierarchy in uiautomator's XML format (one line, like Android)."""
    out = ["<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"]
    for root in windows:
        _dump_node(root, 0, out)
    out.append("</hierarchy>")
    return "".join(out)
