"""The YAML that Maestro flows are written in, read by ruamel.yaml (a maintained, pure-Python YAML 1.2
library; the page loads its wheel from its own origin) into ``Node`` trees that keep each node's line and
column, so that every error a flow gets names where it stands.

Only the composing step of ruamel.yaml is used (no Python objects are constructed from the text, so no tag
can run code); anchors, aliases and merge keys (``<<: *defaults``) are resolved here as YAML defines them.
Pure: text in, nodes out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


class YamlError(ValueError):
    """Text that is not YAML; ``line`` and ``column`` count from 1."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(f"line {line}, column {column}: {message}")
        self.reason = message
        self.line = line
        self.column = column


_TAG = "tag:yaml.org,2002:"


@dataclass
class Node:
    """One YAML node: ``kind`` is ``scalar`` (``value`` its text, or None for null; ``quoted`` when it was
    written quoted or as a block, so it is text whatever it says), ``seq`` (``value`` a list of nodes) or
    ``map`` (``pairs``: key and value nodes in order)."""

    kind: str
    line: int
    column: int
    value: Any = None
    quoted: bool = False
    pairs: list[tuple[Node, Node]] = field(default_factory=list)
    tag: str = ""

    def python(self) -> Any:
        """The node as plain Python: str, int, float, bool, None, list or dict."""
        if self.kind == "seq":
            return [item.python() for item in self.value]
        if self.kind == "map":
            return {str(key.python()): value.python() for key, value in self.pairs}
        return scalar_value(self)

    def get(self, key: str) -> Node | None:
        found = None
        for name, value in self.pairs:
            if name.value == key:
                found = value  # the last one wins, as Maestro's reader (Jackson) has it
        return found

    @property
    def is_null(self) -> bool:
        return self.kind == "scalar" and self.value is None


def scalar_value(node: Node) -> Any:
    """A scalar as YAML 1.2's core schema reads it: quoted text stays text; plain true/false, null,
    numbers become what they say."""
    if node.value is None:
        return None
    if node.quoted:
        return node.value
    text = node.value
    kind = node.tag[len(_TAG) :] if node.tag.startswith(_TAG) else "str"
    if kind == "bool":
        return text.lower() == "true"
    if kind == "int":
        try:
            return int(text.replace("_", ""), 0)
        except ValueError:
            return text
    if kind == "float":
        try:
            number = float(text.replace("_", "").replace(".inf", "inf").replace(".nan", "nan"))
        except ValueError:
            return text
        return number if math.isfinite(number) or "inf" in text or "nan" in text.lower() else text
    return text


def parse_all(text: str) -> list[Node | None]:
    """Every document of ``text`` (None for an empty one); YamlError where it is not YAML."""
    from ruamel.yaml import YAML  # imported when a flow is first read, not when the page boots
    from ruamel.yaml.error import MarkedYAMLError, YAMLError

    reader = YAML(typ="safe", pure=True)
    try:
        composed = list(reader.compose_all(text))
    except MarkedYAMLError as exc:
        raise _located(exc, text) from None
    except YAMLError as exc:
        raise YamlError(str(exc).strip() or "not YAML", 1, 1) from None
    except RecursionError:
        raise YamlError("the YAML nests too deep", 1, 1) from None
    documents: list[Node | None] = []
    for composed_node in composed:
        node = _convert(composed_node, {})
        documents.append(None if node.is_null else node)
    return documents


def _located(exc: Any, text: str) -> YamlError:
    """ruamel's error, placed where a person looks for the mistake: a quote never closed at its opening
    quote, a ``{``/``[`` never closed at the end of the last line written, else where ruamel stopped."""
    problem, context = str(exc.problem or ""), str(exc.context or "")
    mark = exc.problem_mark or exc.context_mark
    line, column = (mark.line + 1, mark.column + 1) if mark is not None else (1, 1)
    at_end = "stream end" in problem or "end of stream" in problem
    if at_end and "quoted scalar" in context and exc.context_mark is not None:
        where = exc.context_mark
        return YamlError(
            "this quoted string is not closed (its closing quote is missing)",
            where.line + 1,
            where.column + 1,
        )
    if at_end and ("flow mapping" in context or "flow sequence" in context):
        lines = text.replace("\r\n", "\n").split("\n")
        last = max((index for index, content in enumerate(lines) if content.strip()), default=0)
        bracket = "{" if "mapping" in context else "["
        return YamlError(f"the {bracket} is not closed", last + 1, len(lines[last]) + 1)
    if "\t" in problem or "'\\t'" in problem:
        return YamlError("a tab in the indentation (YAML indents with spaces)", line, column)
    return YamlError(" ".join(part for part in (problem, context) if part) or str(exc), line, column)


def _convert(raw: Any, seen: dict[int, Node], active: set[int] | None = None) -> Node:
    """ruamel's node as ours; an alias is the node its anchor named (converted once). An alias inside the
    very node it names (a loop) is refused: a flow is a tree."""
    active = set() if active is None else active
    known = seen.get(id(raw))
    if id(raw) in active:
        mark = raw.start_mark
        raise YamlError("an alias refers to a node that holds it (a loop)", mark.line + 1, mark.column + 1)
    if known is not None:
        return known
    line, column = raw.start_mark.line + 1, raw.start_mark.column + 1
    tag = str(raw.tag or "")
    kind = type(raw).__name__
    if kind == "ScalarNode":
        null = tag == _TAG + "null" and not raw.style
        node = Node("scalar", line, column, None if null else str(raw.value), bool(raw.style), tag=tag)
    else:
        active.add(id(raw))
        if kind == "SequenceNode":
            node = Node("seq", line, column, [_convert(item, seen, active) for item in raw.value], tag=tag)
        else:
            node = Node("map", line, column, tag=tag)
            node.pairs = _pairs(raw.value, seen, active)
        active.discard(id(raw))
    seen[id(raw)] = node
    return node


def _pairs(
    raw_pairs: list[tuple[Any, Any]], seen: dict[int, Node], active: set[int]
) -> list[tuple[Node, Node]]:
    """A mapping's pairs, with ``<<`` merge keys resolved (the mapping's own keys win)."""
    own: list[tuple[Node, Node]] = []
    merged: list[tuple[Node, Node]] = []
    for raw_key, raw_value in raw_pairs:
        key = _convert(raw_key, seen, active)
        value = _convert(raw_value, seen, active)
        if key.kind == "scalar" and key.tag == _TAG + "merge":
            sources = value.value if value.kind == "seq" else [value]
            for source in sources:
                if source.kind != "map":
                    raise YamlError(
                        "a merge key (<<) takes a mapping or a list of them", source.line, source.column
                    )
                merged.extend(source.pairs)
            continue
        own.append((key, value))
    names = {key.value for key, _ in own}
    for key, value in merged:
        if key.value not in names:
            names.add(key.value)
            own.append((key, value))
    return own
