"""The ``uiautomator dump`` XML format: the nodes of a dump, flattened in document order, and their
``[left,top][right,bottom]`` bounds. Pure: text in, ``UiNode`` out.

A phone's tree is outside input, so the reader is built to survive any: it walks the XML with expat's
events and a stack of its own (no recursion: a 100,000-deep tree once took the page's small stack
down), and it bounds what it keeps — nodes deeper than ``MAX_TREE_DEPTH`` levels and nodes past the
first ``MAX_TREE_NODES`` are left out, and the dump's ``note`` says how many and why. Odd attributes
(an ``index`` that is not a number, bounds that cannot be read, a missing attribute) take their
defaults and are counted in the note, never raised; elements other than ``node`` (a wrapper some
dumpers write) are looked through, their nodes kept.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from xml.parsers import expat

from ..device.interface import Bounds, UiNode
from ..errors import DeviceError

MAX_TREE_NODES = 10_000  # a real screen has a few hundred nodes, a long WebView a few thousand
MAX_TREE_DEPTH = 500  # a real screen nests a few dozen levels, a WebView rarely a hundred
_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")
_INTEGER = re.compile(r"\s*([+-]?\d+)")
# Characters XML 1.0 forbids, raw or as references: some dumpers copy them from the screen as they are.
_FORBIDDEN = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_FORBIDDEN_REF = re.compile(r"&#(?:0*(?:[0-8]|1[124-9]|2\d|3[01])|[xX]0*(?:[0-8bBcCeEfF]|1[0-9a-fA-F]));")
_NO_BOUNDS = Bounds(0, 0, 0, 0)


def parse_bounds(text: str) -> Bounds:
    match = _BOUNDS.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"not uiautomator bounds: {text!r}")
    left, top, right, bottom = (int(value) for value in match.groups())
    return Bounds(left, top, right, bottom)


@dataclass
class UiDump:
    """A dump read: its nodes in document order, the screen's ``rotation`` when the dump says it, and a
    ``note`` saying what was left out or read with defaults ("" when nothing was)."""

    nodes: list[UiNode]
    rotation: int | None = None
    note: str = ""


class _Full(Exception):
    """The node cap is reached: stop reading."""


@dataclass
class _DumpReader:
    """expat's handlers and the stack of open elements (a node, or None for any other element)."""

    max_nodes: int
    max_depth: int
    flat: list[UiNode] = field(default_factory=list)
    open: list[UiNode | None] = field(default_factory=list)
    parents: list[UiNode] = field(default_factory=list)
    skipping: int = 0  # open elements inside a subtree left out for its depth
    too_deep: int = 0
    deepest: int = 0  # levels below the depth bound that a subtree left out reached
    cut: bool = False
    rotation: int | None = None
    bad_bounds: int = 0
    bad_numbers: int = 0

    def start(self, tag: str, attrs: dict[str, str]) -> None:
        if self.skipping:
            self.skipping += 1
            if tag == "node":
                self.too_deep += 1
                if self.skipping > self.deepest:
                    self.deepest = self.skipping
            return
        if tag != "node":
            if tag == "hierarchy" and self.rotation is None and "rotation" in attrs:
                match = _INTEGER.match(attrs["rotation"])
                self.rotation = int(match.group(1)) % 4 if match else None
            self.open.append(None)
            return
        depth = len(self.parents)
        if depth >= self.max_depth:
            self.skipping, self.too_deep = 1, self.too_deep + 1
            self.deepest = max(self.deepest, 1)
            return
        if len(self.flat) >= self.max_nodes:
            self.cut = True
            raise _Full
        node = self.node(attrs, depth)
        if self.parents:
            self.parents[-1].children.append(node)
        self.flat.append(node)
        self.open.append(node)
        self.parents.append(node)

    def end(self, tag: str) -> None:
        if self.skipping:
            self.skipping -= 1
            return
        if self.open and self.open.pop() is not None:
            self.parents.pop()

    def node(self, attrs: dict[str, str], depth: int) -> UiNode:
        get = attrs.get
        bounds_text = get("bounds", "")
        match = _BOUNDS.fullmatch(bounds_text.strip())
        if match is None:
            bounds, self.bad_bounds = _NO_BOUNDS, self.bad_bounds + 1
        else:
            left, top, right, bottom = match.groups()
            bounds = Bounds(int(left), int(top), int(right), int(bottom))
        index_text = get("index", "0") or "0"
        if index_text.isdigit():
            index = int(index_text)
        else:
            number = _INTEGER.match(index_text)
            index, self.bad_numbers = (int(number.group(1)) if number else 0), self.bad_numbers + 1
        return UiNode(
            bounds,
            get("text", ""),
            get("resource-id", ""),
            get("class", ""),
            get("package", ""),
            get("content-desc", ""),
            get("checkable") == "true",
            get("checked") == "true",
            get("clickable") == "true",
            get("enabled", "true") != "false",
            get("focusable") == "true",
            get("focused") == "true",
            get("scrollable") == "true",
            get("long-clickable") == "true",
            get("password") == "true",
            get("selected") == "true",
            index,
            depth,
        )

    def note(self) -> str:
        parts = []
        if self.cut:
            parts.append(
                f"the tree has more than {self.max_nodes:,} nodes: the first {self.max_nodes:,} in "
                "document order are read, the rest left out"
            )
        if self.too_deep:
            parts.append(
                f"{self.too_deep:,} node{'s' if self.too_deep != 1 else ''} deeper than {self.max_depth:,} "
                f"levels (the tree goes {self.max_depth + self.deepest:,} deep) left out"
            )
        if self.bad_bounds:
            plural = "s" if self.bad_bounds != 1 else ""
            parts.append(f"{self.bad_bounds:,} node{plural} without readable bounds (not shown)")
        if self.bad_numbers:
            plural = "es" if self.bad_numbers != 1 else ""
            parts.append(f"{self.bad_numbers:,} node index{plural} not a number (read as 0)")
        return "; ".join(parts)


def _read(text: str, max_nodes: int, max_depth: int) -> _DumpReader:
    reader = _DumpReader(max_nodes, max_depth)
    parser = expat.ParserCreate()
    parser.StartElementHandler = reader.start
    parser.EndElementHandler = reader.end
    try:
        parser.Parse(text, True)
    except _Full:
        pass
    return reader


def read_ui_dump(
    xml_text: str, *, max_nodes: int = MAX_TREE_NODES, max_depth: int = MAX_TREE_DEPTH
) -> UiDump:
    """The nodes of a ``uiautomator dump`` XML in document order (children kept too), the rotation it
    gives, and a note of what was left out.

    Raises DeviceError when the text is not a dump (uiautomator prints errors such as "could not get
    idle state" instead of writing XML) or not XML.
    """
    start = xml_text.find("<hierarchy")
    if start < 0:
        raise DeviceError(f"the phone gave no UI dump: {xml_text.strip()[:200] or 'empty answer'}")
    body = xml_text[start:].strip()
    try:
        reader = _read(body, max_nodes, max_depth)
    except expat.ExpatError as exc:
        cleaned = _FORBIDDEN_REF.sub("?", _FORBIDDEN.sub("?", body))
        if cleaned == body:
            raise DeviceError(f"the phone's UI dump is not valid XML: {exc}") from None
        try:  # characters XML forbids, copied from the screen: read them as "?"
            reader = _read(cleaned, max_nodes, max_depth)
        except expat.ExpatError as again:
            raise DeviceError(f"the phone's UI dump is not valid XML: {again}") from None
    return UiDump(reader.flat, reader.rotation, reader.note())


def parse_ui_dump(xml_text: str) -> list[UiNode]:
    """The nodes of a ``uiautomator dump`` XML, flattened in document order (children kept too).

    Raises DeviceError when the text is not a dump (uiautomator prints errors such as "could not get
    idle state" instead of writing XML).
    """
    return read_ui_dump(xml_text).nodes
