"""A strict reader of the YAML that Maestro flows are written in, keeping each node's line and column.

Pyodide's PyYAML wheel is not part of the vendored Pyodide (the npm package carries no wheels), so the
page reads flows with this module instead, and so does CPython: one reader, one set of messages. It
reads the part of YAML flows use — documents split by ``---``, block mappings and sequences (``- key:
value`` items included), flow collections (``{id: x}``, ``[a, b]``), plain, single- and double-quoted
scalars, ``|`` and ``>`` block scalars and comments — and refuses the rest (anchors, aliases, tags,
complex keys) with a ``YamlError`` naming the line and column, never guessing. Pure: text in, nodes out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

_INT = re.compile(r"[-+]?[0-9]+")
_FLOAT = re.compile(r"[-+]?([0-9]+\.[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "0": "\0", '"': '"', "\\": "\\", "/": "/", " ": " ", "e": "\x1b"}


class YamlError(ValueError):
    """Text that is not the YAML flows are written in; ``line`` and ``column`` count from 1."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(f"line {line}, column {column}: {message}")
        self.reason = message
        self.line = line
        self.column = column


@dataclass
class Node:
    """One YAML node: ``kind`` is ``scalar`` (``value`` a str, ``quoted`` whether it was), ``seq`` (a
    list of nodes) or ``map`` (``pairs``: key nodes and value nodes in order)."""

    kind: str
    line: int
    column: int
    value: Any = None
    quoted: bool = False
    pairs: list[tuple[Node, Node]] = field(default_factory=list)

    def python(self) -> Any:
        """The node as plain Python: str, int, float, bool, None, list or dict (YAML's core schema)."""
        if self.kind == "seq":
            return [item.python() for item in self.value]
        if self.kind == "map":
            return {str(key.python()): value.python() for key, value in self.pairs}
        return scalar_value(self.value, self.quoted)

    def get(self, key: str) -> Node | None:
        for name, value in self.pairs:
            if name.value == key:
                return value
        return None


def scalar_value(text: str | None, quoted: bool) -> Any:
    """A scalar as YAML's core schema reads it: quoted text stays text; plain true/false, null, numbers."""
    if text is None:
        return None
    if quoted:
        return text
    if text in ("true", "True", "TRUE"):
        return True
    if text in ("false", "False", "FALSE"):
        return False
    if text in ("", "~", "null", "Null", "NULL"):
        return None
    if _INT.fullmatch(text):
        return int(text)
    if _FLOAT.fullmatch(text):
        return float(text)
    return text


@dataclass
class _Line:
    number: int  # 1-based
    indent: int
    text: str  # the content after the indent, comment removed, right-stripped


def _strip_comment(text: str) -> str:
    """The line without its comment (a ``#`` at the start or after a space, outside quotes)."""
    quote = ""
    escaped = False
    for index, char in enumerate(text):
        if quote:
            if escaped:
                escaped = False
            elif char == "\\" and quote == '"':
                escaped = True
            elif char == quote:
                quote = ""
        elif char in "'\"" and (index == 0 or text[index - 1] in " \t[{,:-"):
            quote = char
        elif char == "#" and (index == 0 or text[index - 1] in " \t"):
            return text[:index].rstrip()
    return text.rstrip()


def split_documents(text: str) -> list[list[tuple[int, str]]]:
    """The text's documents (split at ``---`` lines), each as (line number, raw line) pairs."""
    documents: list[list[tuple[int, str]]] = [[]]
    for number, raw in enumerate(text.replace("\r\n", "\n").replace("\r", "\n").split("\n"), 1):
        if raw.startswith("\t") or (raw.strip() and "\t" in raw[: len(raw) - len(raw.lstrip())]):
            raise YamlError("a tab in the indentation (YAML indents with spaces)", number, 1)
        if re.fullmatch(r"---(\s+#.*)?\s*", raw):
            documents.append([])
            continue
        if re.fullmatch(r"\.\.\.\s*", raw):
            continue
        documents[-1].append((number, raw))
    return documents


def parse_document(raw_lines: list[tuple[int, str]]) -> Node | None:
    """One document's node (None when it holds nothing but comments and blank lines)."""
    return _Reader(raw_lines).document()


def parse_all(text: str) -> list[Node | None]:
    """Every document of ``text`` (YamlError on the first thing that is not flow YAML)."""
    return [parse_document(lines) for lines in split_documents(text)]


class _Reader:
    def __init__(self, raw_lines: list[tuple[int, str]]) -> None:
        self.raw = raw_lines
        self.lines: list[_Line] = []
        for number, raw in raw_lines:
            content = _strip_comment(raw)
            stripped = content.lstrip(" ")
            if stripped:
                self.lines.append(_Line(number, len(content) - len(stripped), stripped))
        self.position = 0
        self._raw_by_number = dict(raw_lines)

    def document(self) -> Node | None:
        if not self.lines:
            return None
        first = self.lines[0]
        node = self.block(first.indent)
        if self.position < len(self.lines):
            extra = self.lines[self.position]
            raise YamlError(
                "this line is not part of the structure above it (check its indentation)",
                extra.number,
                extra.indent + 1,
            )
        return node

    # -- blocks ---------------------------------------------------------------------------------

    def current(self) -> _Line | None:
        return self.lines[self.position] if self.position < len(self.lines) else None

    def block(self, indent: int) -> Node:
        line = self.current()
        assert line is not None
        if line.text == "-" or line.text.startswith("- "):
            return self.sequence(line.indent)
        if self._mapping_key(line) is not None:
            return self.mapping(line.indent)
        return self.lone_scalar(line)

    def sequence(self, indent: int) -> Node:
        first = self.current()
        assert first is not None
        node = Node("seq", first.number, first.indent + 1, value=[])
        while (line := self.current()) is not None and line.indent == indent:
            if not (line.text == "-" or line.text.startswith("- ")):
                break
            rest = line.text[1:].lstrip(" ")
            if not rest:
                self.position += 1
                after = self.current()
                if after is not None and after.indent > indent:
                    node.value.append(self.block(after.indent))
                else:
                    node.value.append(Node("scalar", line.number, line.indent + 2, value=None))
                continue
            # "- rest": read rest as if it stood on its own line at its own column.
            column = line.indent + (len(line.text) - len(rest))
            self.lines[self.position] = _Line(line.number, column, rest)
            node.value.append(self.block(column))
        line = self.current()
        if line is not None and line.indent > indent:
            raise YamlError("unexpected indentation", line.number, line.indent + 1)
        return node

    def _mapping_key(self, line: _Line) -> tuple[Node, str] | None:
        """(the key node, the text after ``key:``) when the line starts a mapping entry."""
        text = line.text
        if text[0] in "'\"":
            key_text, end = self.quoted(text, 0, line)
            if text[end : end + 1] == ":" and (end + 1 == len(text) or text[end + 1] == " "):
                key = Node("scalar", line.number, line.indent + 1, value=key_text, quoted=True)
                return key, text[end + 1 :].strip()
            return None
        if text[0] in "[{&*!|>%@`":
            return None
        match = re.match(r"([^:#]|:(?! |$))*?:( |$)", text)
        if match is None:
            return None
        key_text = text[: match.end()].rstrip()[:-1].rstrip()
        return Node("scalar", line.number, line.indent + 1, value=key_text), text[match.end() :].strip()

    def mapping(self, indent: int) -> Node:
        first = self.current()
        assert first is not None
        node = Node("map", first.number, first.indent + 1)
        seen: dict[str, int] = {}
        while (line := self.current()) is not None and line.indent == indent:
            entry = self._mapping_key(line)
            if entry is None:
                raise YamlError("expected `key: value` here", line.number, line.indent + 1)
            key, rest = entry
            if key.value in seen:
                raise YamlError(
                    f"the key {key.value!r} is given twice (first on line {seen[key.value]})",
                    line.number,
                    line.indent + 1,
                )
            seen[key.value] = line.number
            column = (
                line.indent + len(line.text) - len(rest) + 1 if rest else line.indent + len(line.text) + 1
            )
            self.position += 1
            node.pairs.append((key, self.value(rest, line, column, indent)))
        line = self.current()
        if line is not None and line.indent > indent:
            raise YamlError("unexpected indentation", line.number, line.indent + 1)
        return node

    def value(self, rest: str, line: _Line, column: int, indent: int) -> Node:
        """The value after ``key:`` on ``line`` (``rest``), or on the lines below it."""
        if not rest:
            after = self.current()
            if after is not None and after.indent > indent:
                return self.block(after.indent)
            if (
                after is not None
                and after.indent == indent
                and (after.text == "-" or after.text.startswith("- "))
            ):
                return self.sequence(indent)
            return Node("scalar", line.number, column, value=None)
        return self.inline(rest, line, column, indent)

    def inline(self, rest: str, line: _Line, column: int, indent: int) -> Node:
        if rest[0] in "&*!":
            raise YamlError("anchors, aliases and tags are not supported in flows", line.number, column)
        if rest[0] in "|>":
            return self.block_scalar(rest, line, column, indent)
        if rest[0] in "[{":
            text = rest
            # A flow collection may run over several lines: join them until it closes.
            while not _balanced(text) and (after := self.current()) is not None and after.indent > indent:
                text += " " + after.text
                self.position += 1
            node, end = _FlowParser(text, line.number, column).parse()
            if text[end:].strip():
                raise YamlError("unexpected text after the closing bracket", line.number, column + end)
            return node
        if rest[0] in "'\"":
            text, end = self.quoted(rest, 0, line, column)
            if rest[end:].strip():
                raise YamlError("unexpected text after the closing quote", line.number, column + end)
            return Node("scalar", line.number, column, value=text, quoted=True)
        if re.match(r"([^:#]|:(?! |$))*?:( |$)", rest) and not rest.startswith(("http:", "https:")):
            raise YamlError(
                "a mapping cannot start on the line of its key; put it on the next line, indented",
                line.number,
                column,
            )
        words = [rest]
        while (
            (after := self.current()) is not None
            and after.indent > indent
            and self._mapping_key(after) is None
        ):
            words.append(after.text)  # a plain scalar folded over several lines
            self.position += 1
        return Node("scalar", line.number, column, value=" ".join(words))

    def lone_scalar(self, line: _Line) -> Node:
        self.position += 1
        return self.inline(line.text, line, line.indent + 1, line.indent)

    def block_scalar(self, rest: str, line: _Line, column: int, indent: int) -> Node:
        match = re.fullmatch(r"([|>])([-+]?)", rest)
        if match is None:
            raise YamlError(
                f"unsupported block scalar header {rest!r} (use | or >, optionally with - or +)",
                line.number,
                column,
            )
        style, chomp = match.groups()
        # Raw lines below the key, blank ones included, while more indented than the key.
        pieces: list[str] = []
        number = line.number + 1
        block_indent: int | None = None
        while number in self._raw_by_number:
            raw = self._raw_by_number[number]
            stripped = raw.lstrip(" ")
            if stripped:
                here = len(raw) - len(stripped)
                if here <= indent:
                    break
                block_indent = here if block_indent is None else block_indent
                if here < block_indent:
                    break
                pieces.append(raw[block_indent:].rstrip("\n"))
            else:
                pieces.append("")
            number += 1
        while self.position < len(self.lines) and self.lines[self.position].number < number:
            self.position += 1
        while pieces and not pieces[-1] and chomp != "+":
            pieces.pop()
        if style == "|":
            text = "\n".join(pieces)
        else:
            text = re.sub(r"(?<!\n)\n(?!\n)", " ", "\n".join(pieces)).replace("\n\n", "\n")
        if chomp != "-" and text:
            text += "\n"
        return Node("scalar", line.number, column, value=text, quoted=True)

    def quoted(self, text: str, start: int, line: _Line, column: int | None = None) -> tuple[str, int]:
        return read_quoted(text, start, line.number, column if column is not None else line.indent + 1)


def read_quoted(text: str, start: int, line: int, column: int) -> tuple[str, int]:
    """The quoted scalar at ``text[start]`` and the index after its closing quote."""
    quote = text[start]
    out: list[str] = []
    index = start + 1
    while index < len(text):
        char = text[index]
        if char == quote:
            if quote == "'" and text[index + 1 : index + 2] == "'":
                out.append("'")
                index += 2
                continue
            return "".join(out), index + 1
        if char == "\\" and quote == '"':
            code = text[index + 1 : index + 2]
            if code in _ESCAPES:
                out.append(_ESCAPES[code])
                index += 2
                continue
            if code in ("x", "u", "U"):
                size = {"x": 2, "u": 4, "U": 8}[code]
                digits = text[index + 2 : index + 2 + size]
                if len(digits) == size and all(c in "0123456789abcdefABCDEF" for c in digits):
                    out.append(chr(int(digits, 16)))
                    index += 2 + size
                    continue
            raise YamlError(f"unknown escape \\{code} in a double-quoted string", line, column + index)
        out.append(char)
        index += 1
    raise YamlError("this quoted string is not closed on its line", line, column + start)


def _balanced(text: str) -> bool:
    depth = 0
    quote = ""
    for char in text:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
    return depth <= 0


class _FlowParser:
    """``{a: b, c: [d, e]}`` and ``[a, b]`` on one (joined) line."""

    def __init__(self, text: str, line: int, column: int) -> None:
        self.text, self.line, self.column, self.index = text, line, column, 0

    def error(self, message: str) -> YamlError:
        return YamlError(message, self.line, self.column + self.index)

    def skip(self) -> None:
        while self.index < len(self.text) and self.text[self.index] == " ":
            self.index += 1

    def parse(self) -> tuple[Node, int]:
        node = self.node(inside="")
        return node, self.index

    def node(self, inside: str) -> Node:
        self.skip()
        if self.index >= len(self.text):
            raise self.error("the bracket is not closed")
        char = self.text[self.index]
        column = self.column + self.index
        if char == "{":
            return self.collection("map", "}", column)
        if char == "[":
            return self.collection("seq", "]", column)
        if char in "'\"":
            value, end = read_quoted(self.text, self.index, self.line, self.column)
            self.index = end
            return Node("scalar", self.line, column, value=value, quoted=True)
        if char in "&*!":
            raise self.error("anchors, aliases and tags are not supported in flows")
        stops = ",]}" if inside else ""
        start = self.index
        while self.index < len(self.text):
            here = self.text[self.index]
            if here in stops or (
                inside == "}"
                and here == ":"
                and self.text[self.index + 1 : self.index + 2] in (" ", ",", "}", "")
            ):
                break
            if inside == "]" and here == ":" and self.text[self.index + 1 : self.index + 2] == " ":
                break
            self.index += 1
        return Node("scalar", self.line, column, value=self.text[start : self.index].strip())

    def collection(self, kind: str, close: str, column: int) -> Node:
        node = Node(kind, self.line, column, value=[] if kind == "seq" else None)
        self.index += 1
        while True:
            self.skip()
            if self.index >= len(self.text):
                raise self.error(f"the {'{' if close == '}' else '['} is not closed")
            if self.text[self.index] == close:
                self.index += 1
                return node
            item = self.node(close)
            self.skip()
            if kind == "map":
                if self.text[self.index : self.index + 1] != ":":
                    raise self.error("expected `:` after the key")
                self.index += 1
                value = self.node(close)
                if any(existing.value == item.value for existing, _ in node.pairs):
                    raise self.error(f"the key {item.value!r} is given twice")
                node.pairs.append((item, value))
            else:
                node.value.append(item)
            self.skip()
            if self.index >= len(self.text):
                raise self.error(f"the {'{' if close == '}' else '['} is not closed")
            if self.text[self.index : self.index + 1] == ",":
                self.index += 1
            elif self.text[self.index : self.index + 1] != close:
                raise self.error(f"expected `,` or `{close}`")
