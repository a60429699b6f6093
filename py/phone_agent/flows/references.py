"""Which files a flow names — runFlow's and retry's flows, runScript's scripts, addMedia's media — so that
whoever has the files (``phone-agent flow run`` and ``flow check``) can send them with the flow: the page
has no file system, and the reader never reads a disk. Paths come back resolved against the flow's own
path in the flows' folder; one that leaves the folder is returned as such, for the reader to refuse.
Pure: text in, paths out.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from .yaml_nodes import Node, YamlError, parse_all

FLOW, SCRIPT, MEDIA = "flow", "script", "media"


@dataclass(frozen=True)
class Reference:
    """A file a flow names: what it is (flow, script or media) and its path in the flows' folder
    (``outside`` when the path leaves it)."""

    kind: str
    path: str
    outside: bool = False


def references(text: str, path: str) -> list[Reference]:
    """The files the flow at ``path`` (in the flows' folder) names; none when it is not YAML (the reader
    will say why)."""
    try:
        documents = parse_all(text)
    except YamlError:
        return []
    found: list[Reference] = []
    folder = posixpath.dirname(path)
    for kind, name in (pair for document in documents if document is not None for pair in _named(document)):
        if "${" in name or not name:
            continue
        if posixpath.isabs(name) or name.startswith("~") or "\\" in name:
            found.append(Reference(kind, name, outside=True))
            continue
        resolved = posixpath.normpath(posixpath.join(folder, name))
        outside = resolved == ".." or resolved.startswith("../")
        found.append(Reference(kind, resolved, outside))
    return found


def _named(node: Node) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    stack = [node]
    visited: set[int] = set()  # an anchor used twice is one node: walk it once
    while stack:
        current = stack.pop()
        if id(current) in visited:
            continue
        visited.add(id(current))
        if current.kind == "seq":
            stack.extend(current.value)
            continue
        if current.kind != "map":
            continue
        for key, value in current.pairs:
            name = key.value
            if name in ("runFlow", "retry", "runScript"):
                kind = SCRIPT if name == "runScript" else FLOW
                if value.kind == "scalar" and value.value:
                    found.append((kind, str(value.value)))
                elif value.kind == "map" and (file := value.get("file")) is not None and file.value:
                    found.append((kind, str(file.value)))
            elif name == "addMedia":
                files = value.get("files") if value.kind == "map" else value
                if files is not None and files.kind == "seq":
                    found.extend(
                        (MEDIA, str(item.value))
                        for item in files.value
                        if item.kind == "scalar" and item.value
                    )
            stack.append(value)
    return found
