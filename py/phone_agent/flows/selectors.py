"""Maestro's selectors on our UI tree: which nodes of a uiautomator dump a selector names.

A selector is a dict as the flow reader leaves it (``{"text": "Sign in", "below": {"id": "title"}}``),
its strings already expanded. ``text`` is a regular expression that must match the whole of a node's
text or content description (or equal it literally), ``id`` the whole resource id or the part after
``:id/``; ``enabled``, ``checked``, ``focused``, ``selected``, ``width``/``height`` (± ``tolerance``)
compare states and sizes; ``below``/``above``/``leftOf``/``rightOf`` keep nodes on that side of the
first node the inner selector finds, nearest first; ``traits`` keep nodes with text, square ones or long
text; ``containsChild`` needs a direct child that matches, ``childOf`` an ancestor, ``containsDescendants``
a descendant for each selector given; ``index`` picks among the rest (0-based). Only nodes on the screen
count. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from ..device.interface import UiNode
from .variables import StepFailed

SCREEN_SUMMARY_LABELS = 25


def _pattern_matches(pattern: str, value: str) -> bool:
    if not value:
        return False
    if value == pattern or " ".join(value.split()) == pattern:
        return True
    try:
        compiled = re.compile(pattern, re.DOTALL)
    except re.error:
        return False
    return compiled.fullmatch(value) is not None or compiled.fullmatch(" ".join(value.split())) is not None


def text_matches(pattern: str, node: UiNode) -> bool:
    """Maestro's text: the node's text or its accessibility text matches the whole pattern."""
    own = "" if node.password else node.text
    return _pattern_matches(pattern, own) or _pattern_matches(pattern, node.content_desc)


def id_matches(pattern: str, node: UiNode) -> bool:
    rid = node.resource_id
    if not rid:
        return False
    short = rid.split(":id/", 1)[1] if ":id/" in rid else rid
    return _pattern_matches(pattern, rid) or _pattern_matches(pattern, short)


def _flag(name: str) -> Callable[[Any, UiNode], bool]:
    return lambda wanted, node: bool(getattr(node, name)) == bool(wanted)


_SIMPLE: dict[str, Callable[[Any, UiNode], bool]] = {
    "text": lambda value, node: text_matches(str(value), node),
    "id": lambda value, node: id_matches(str(value), node),
    "enabled": _flag("enabled"),
    "checked": _flag("checked"),
    "focused": _flag("focused"),
    "selected": _flag("selected"),
}


class UiScreen:
    """One dump of the screen: its nodes on screen, in document order, with each node's parent."""

    def __init__(self, nodes: list[UiNode], width: int = 0, height: int = 0) -> None:
        if (not width or not height) and nodes:
            width, height = width or nodes[0].bounds.right, height or nodes[0].bounds.bottom
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
            label = ("" if node.password else node.text).strip() or node.content_desc.strip()
            if label and label not in labels:
                labels.append(label)
        if not labels:
            return "no text at all"
        shown = ", ".join(f'"{" ".join(label.split())[:60]}"' for label in labels[:SCREEN_SUMMARY_LABELS])
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


def find(selector: dict[str, Any], screen: UiScreen) -> list[UiNode]:
    """The nodes on ``screen`` that ``selector`` names, in the order ``index`` counts them."""
    found = list(screen.nodes)
    for key, matcher in _SIMPLE.items():
        if key in selector:
            wanted = selector[key]
            found = [node for node in found if matcher(wanted, node)]
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
        found = [node for node in found if all(_has_descendant(node, inner, screen) for inner in wanted_all)]
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
        return found[index : index + 1] if 0 <= index < len(found) else []
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


def _has_descendant(node: UiNode, selector: dict[str, Any], screen: UiScreen) -> bool:
    matches = {id(candidate) for candidate in find(selector, screen)}
    stack = list(node.children)
    while stack:
        current = stack.pop()
        if id(current) in matches:
            return True
        stack.extend(current.children)
    return False


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
