"""Maestro's selectors on our UI tree: which nodes of a uiautomator dump a selector names.

A selector is a dict as the flow reader leaves it (``{"text": "Sign in", "below": {"id": "title"}}``),
its strings already expanded. ``text`` is a regular expression that must match the whole of a node's
text or content description (or equal it literally), ``id`` the whole resource id or the part after
``:id/``; ``enabled``, ``checked``, ``focused``, ``selected``, ``width``/``height`` (± ``tolerance``)
compare states and sizes; ``below``/``above``/``leftOf``/``rightOf`` keep nodes on that side of the
first node the inner selector finds, nearest first; ``traits`` keep nodes with text, square ones or long
text; ``containsChild`` needs a direct child that matches, ``childOf`` an ancestor,
``containsDescendants`` a descendant for each selector given; ``index`` picks
among the rest (0-based, in reading order: top to bottom, then left to right, as Maestro counts);
without ``index`` clickable nodes come first (Maestro's order, so a row found by a label inside it is
the row, not the list around it). Only nodes on the screen count: the screen is the display's size
when the caller gives it, else the union of the tree's windows. Text is compared as screen text
(``device.screen_text``): ``3:17 PM`` finds ``3:17\u202fPM`` and the other way round. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..device.interface import UiNode
from ..device.screen_text import screen_text
from ..device.windows import screen_extent
from .variables import StepFailed

SCREEN_SUMMARY_LABELS = 25


def _compiled(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(pattern, re.DOTALL)
    except re.error:
        return None


def pattern_matcher(pattern: str) -> Callable[[str], bool]:
    """Whether a value equals ``pattern`` or matches it whole as a regular expression — both sides read
    as screen text too (``3:17 PM`` and ``3:17\u202fPM`` match each other). Built once per selector."""
    wanted = screen_text(pattern)
    exact = _compiled(pattern)
    loose = _compiled(wanted) if wanted != pattern else None

    def matches(value: str) -> bool:
        if not value:
            return False
        if value == pattern:
            return True
        shown = screen_text(value)
        if shown == pattern or shown == wanted:
            return True
        if exact is not None and (exact.fullmatch(value) is not None or exact.fullmatch(shown) is not None):
            return True
        return loose is not None and loose.fullmatch(shown) is not None

    return matches


def text_matches(pattern: str, node: UiNode) -> bool:
    """Maestro's text: the node's text or its accessibility text matches the whole pattern."""
    return _text_matcher(pattern)(node)


def _text_matcher(pattern: str) -> Callable[[UiNode], bool]:
    matches = pattern_matcher(pattern)
    return lambda node: matches("" if node.password else node.text) or matches(node.content_desc)


def id_matches(pattern: str, node: UiNode) -> bool:
    return _id_matcher(pattern)(node)


def _id_matcher(pattern: str) -> Callable[[UiNode], bool]:
    matches = pattern_matcher(pattern)

    def match(node: UiNode) -> bool:
        rid = node.resource_id
        if not rid:
            return False
        return matches(rid) or matches(rid.split(":id/", 1)[1] if ":id/" in rid else rid)

    return match


def _flag(name: str) -> Callable[[Any], Callable[[UiNode], bool]]:
    return lambda wanted: lambda node: bool(getattr(node, name)) == bool(wanted)


# Each simple key's matcher, built once per selector from the value it asks for.
_SIMPLE: dict[str, Callable[[Any], Callable[[UiNode], bool]]] = {
    "text": lambda value: _text_matcher(str(value)),
    "id": lambda value: _id_matcher(str(value)),
    "enabled": _flag("enabled"),
    "checked": _flag("checked"),
    "focused": _flag("focused"),
    "selected": _flag("selected"),
}


class UiScreen:
    """One dump of the screen: its nodes on screen, in document order, with each node's parent."""

    def __init__(self, nodes: list[UiNode], width: int = 0, height: int = 0) -> None:
        if (not width or not height) and nodes:
            extent = screen_extent(nodes)
            width, height = width or extent[0], height or extent[1]
        self.width, self.height = width, height
        self.all = nodes
        self.parent: dict[int, UiNode] = {}
        for node in nodes:
            for child in node.children:
                self.parent[id(child)] = node
        self.nodes = [node for node in nodes if self.on_screen(node)]

    def on_screen(self, node: UiNode) -> bool:
        bounds = node.bounds
        if bounds.right <= bounds.left or bounds.bottom <= bounds.top:
            return False
        if self.width and self.height:
            return (
                bounds.left < self.width
                and bounds.top < self.height
                and bounds.right > 0
                and bounds.bottom > 0
            )
        return True

    def ancestors(self, node: UiNode) -> list[UiNode]:
        found = []
        while (node := self.parent.get(id(node))) is not None:  # type: ignore[assignment]
            found.append(node)
        return found

    def summary(self) -> str:
        """What the screen shows, as labels: ``"Settings", "Network & internet", …``."""
        labels: list[str] = []
        for node in self.nodes:
            label = screen_text("" if node.password else node.text) or screen_text(node.content_desc)
            if label and label not in labels:
                labels.append(label)
        if not labels:
            return "no text at all"
        shown = ", ".join(f'"{label[:60]}"' for label in labels[:SCREEN_SUMMARY_LABELS])
        more = len(labels) - SCREEN_SUMMARY_LABELS
        return shown + (f" and {more} more" if more > 0 else "")


def _center(node: UiNode) -> tuple[int, int]:
    return node.bounds.center


def _side(key: str, anchor: UiNode) -> tuple[Callable[[UiNode], bool], Callable[[UiNode], float]]:
    a = anchor.bounds
    ax, ay = a.center

    def distance(node: UiNode) -> float:
        x, y = _center(node)
        return ((x - ax) ** 2 + (y - ay) ** 2) ** 0.5

    keep = {
        "below": lambda node: node.bounds.top >= a.bottom - 1 and node is not anchor,
        "above": lambda node: node.bounds.bottom <= a.top + 1 and node is not anchor,
        "leftOf": lambda node: node.bounds.right <= a.left + 1 and node is not anchor,
        "rightOf": lambda node: node.bounds.left >= a.right - 1 and node is not anchor,
    }[key]
    return keep, distance


_DEEPEST = ("text", "id")  # Maestro names the deepest of a chain of nodes that all match these


def _deepest(found: list[UiNode], matcher: Callable[[UiNode], bool], screen: UiScreen) -> list[UiNode]:
    """Each match replaced by the deepest node of the chain of matching children below it (a tab
    whose description is "Explore" holding a text "Explore" is named by that text), as Maestro does."""
    out: list[UiNode] = []
    seen: set[int] = set()
    for node in found:
        current = node
        while kids := [child for child in current.children if matcher(child) and screen.on_screen(child)]:
            current = kids[-1]
        if id(current) not in seen:
            seen.add(id(current))
            out.append(current)
    return out


def find(selector: dict[str, Any], screen: UiScreen) -> list[UiNode]:
    """The nodes on ``screen`` that ``selector`` names, in the order ``index`` counts them."""
    found = list(screen.nodes)
    for key, make in _SIMPLE.items():
        if key in selector:
            matcher = make(selector[key])
            found = [node for node in found if matcher(node)]
            if key in _DEEPEST:
                found = _deepest(found, matcher, screen)
    for trait in selector.get("traits") or ():
        keep = _TRAITS.get(str(trait).lower().replace("_", "-"))
        if keep is not None:
            found = [node for node in found if keep(node)]
    tolerance = int(selector.get("tolerance") or 0)
    for key, size in (("width", lambda node: node.bounds.width), ("height", lambda node: node.bounds.height)):
        if key in selector:
            found = [node for node in found if abs(size(node) - int(selector[key])) <= tolerance]
    if "containsChild" in selector:
        inner = selector["containsChild"]
        found = [
            node for node in found if any(_matches_alone(inner, child, screen) for child in node.children)
        ]
    if "childOf" in selector:
        parents = {id(node) for node in find(selector["childOf"], screen)}
        found = [node for node in found if any(id(up) in parents for up in screen.ancestors(node))]
    if "containsDescendants" in selector:
        wanted_all = selector["containsDescendants"]
        wanted_all = wanted_all if isinstance(wanted_all, list) else [wanted_all]
        for inner in wanted_all:
            holders = _holders(inner, screen)
            found = [node for node in found if id(node) in holders]
    order: Callable[[UiNode], float] | None = None
    for key in ("below", "above", "leftOf", "rightOf"):
        if key in selector:
            anchors = find(selector[key], screen)
            if not anchors:
                return []
            keep, order = _side(key, anchors[0])
            found = [node for node in found if keep(node)]
    if order is not None:
        found.sort(key=order)
    if "index" in selector:
        index = _index(selector["index"])
        found.sort(key=lambda node: (node.bounds.top, node.bounds.left))
        return found[index : index + 1] if 0 <= index < len(found) else []
    found.sort(key=lambda node: not node.clickable)  # stable: clickable first, each in its order
    return found


def _index(value: Any) -> int:
    """A selector's ``index`` (Maestro reads it as text: ``"2"``, ``${N}`` once evaluated)."""
    try:
        return int(float(str(value).strip()))
    except ValueError:
        raise StepFailed(f"index must be a number, not {value!r}") from None


def _square(node: UiNode) -> bool:
    bounds = node.bounds
    return bounds.height > 0 and abs(1.0 - bounds.width / bounds.height) < 0.03


# Maestro's traits: text (the element has text), square (width and height within 3 %), long-text (over
# 200 characters of text).
_TRAITS: dict[str, Callable[[UiNode], bool]] = {
    "text": lambda node: bool("" if node.password else node.text),
    "square": _square,
    "long-text": lambda node: len(node.text) > 200,
}


def _matches_alone(selector: dict[str, Any], node: UiNode, screen: UiScreen) -> bool:
    return any(candidate is node for candidate in find(selector, screen))


def _holders(selector: dict[str, Any], screen: UiScreen) -> set[int]:
    """The ids of every node holding (as an ancestor) a node ``selector`` finds."""
    held: set[int] = set()
    for node in find(selector, screen):
        held.update(id(up) for up in screen.ancestors(node))
    return held


def describe(selector: dict[str, Any]) -> str:
    """``text "Sign in", below id "title"`` — a selector as an error names it."""
    parts = []
    for key, value in selector.items():
        if isinstance(value, dict):
            parts.append(f"{key} {describe(value)}")
        elif isinstance(value, str):
            parts.append(f'{key} "{value}"')
        else:
            parts.append(f"{key} {str(value).lower() if isinstance(value, bool) else value}")
    return ", ".join(parts)
