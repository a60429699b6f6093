"""The ``uiautomator dump`` XML format: the nodes of a dump, flattened in document order, and their
``[left,top][right,bottom]`` bounds. Pure: text in, ``UiNode`` out."""

from __future__ import annotations

import re
from xml.etree import ElementTree

from ..device.interface import Bounds, UiNode
from ..errors import DeviceError

_BOUNDS = re.compile(r"\[(-?\d+),(-?\d+)\]\[(-?\d+),(-?\d+)\]")


def parse_bounds(text: str) -> Bounds:
    match = _BOUNDS.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"not uiautomator bounds: {text!r}")
    left, top, right, bottom = (int(value) for value in match.groups())
    return Bounds(left, top, right, bottom)


def parse_ui_dump(xml_text: str) -> list[UiNode]:
    """The nodes of a ``uiautomator dump`` XML, flattened in document order (children kept too).

    Raises DeviceError when the text is not a dump (uiautomator prints errors such as "could not get
    idle state" instead of writing XML).
    """
    start = xml_text.find("<hierarchy")
    if start < 0:
        raise DeviceError(f"the phone gave no UI dump: {xml_text.strip()[:200] or 'empty answer'}")
    try:
        root = ElementTree.fromstring(xml_text[start:].strip())
    except ElementTree.ParseError as exc:
        raise DeviceError(f"the phone's UI dump is not valid XML: {exc}") from None
    flat: list[UiNode] = []

    def walk(element: ElementTree.Element, depth: int) -> list[UiNode]:
        nodes = []
        for child in element:
            if child.tag != "node":
                continue
            attrs = child.attrib
            try:
                bounds = parse_bounds(attrs.get("bounds", ""))
            except ValueError:
                bounds = Bounds(0, 0, 0, 0)
            node = UiNode(
                bounds=bounds,
                text=attrs.get("text", ""),
                resource_id=attrs.get("resource-id", ""),
                class_name=attrs.get("class", ""),
                package=attrs.get("package", ""),
                content_desc=attrs.get("content-desc", ""),
                checkable=attrs.get("checkable") == "true",
                checked=attrs.get("checked") == "true",
                clickable=attrs.get("clickable") == "true",
                enabled=attrs.get("enabled", "true") == "true",
                focusable=attrs.get("focusable") == "true",
                focused=attrs.get("focused") == "true",
                scrollable=attrs.get("scrollable") == "true",
                long_clickable=attrs.get("long-clickable") == "true",
                password=attrs.get("password") == "true",
                selected=attrs.get("selected") == "true",
                index=int(attrs.get("index", "0") or 0),
                depth=depth,
            )
            flat.append(node)
            node.children = walk(child, depth + 1)
            nodes.append(node)
        return nodes

    walk(root, 0)
    return flat
