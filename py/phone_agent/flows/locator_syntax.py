"""How a locator is written: ``text=Sign in``, or clauses joined by ``;`` in the flows' vocabulary —
``id=title; index=2``, ``role=switch; rightOf=(text=Wi-Fi)``, ``role=button;
containsDescendants=(text=Connected devices)``.

A clause is ``key=value``; a relation's value is a locator in parentheses. In a locator of one plain
clause the value is taken as written (``text=a;b`` is the text ``a;b``); where clauses are joined,
``\\;``, ``\\(``, ``\\)`` and ``\\\\`` stand for the character itself, and ``;`` ends a value only
before another ``key=``. ``parse_clauses`` reads a locator into ``Clause``s (``SyntaxProblem`` says
what is wrong), ``format_clauses`` writes clauses so that ``parse_clauses`` reads them back. What a
locator finds is ``locators``. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# What an element's own attributes are compared with, in the order the docs list them.
LOCATOR_KEYS = ("text", "textContains", "id", "desc", "descContains", "class", "role")
INDEX_KEY = "index"
# Relations to another locator, as Maestro's selectors name them.
RELATION_KEYS = ("childOf", "containsChild", "containsDescendants", "below", "above", "leftOf", "rightOf")
ALL_KEYS = (*LOCATOR_KEYS, INDEX_KEY, *RELATION_KEYS)
ROLES = ("button", "input", "switch", "checkbox", "list", "image", "text")
MAX_NESTING = 6
_KEY_AHEAD = re.compile(r"\s*(" + "|".join(ALL_KEYS) + r")\s*=")
_SPECIAL = "\\;()"


class SyntaxProblem(ValueError):
    """A locator that cannot be read; the message says what is wrong."""


@dataclass(frozen=True)
class Clause:
    """One clause: ``key=value``, or a relation with the locator it relates to (``inner``)."""

    key: str
    value: str = ""
    inner: tuple[Clause, ...] = ()


class _Scanner:
    def __init__(self, text: str) -> None:
        self.text, self.at = text, 0

    def skip_spaces(self) -> None:
        while self.at < len(self.text) and self.text[self.at].isspace():
            self.at += 1

    def peek(self) -> str:
        return self.text[self.at] if self.at < len(self.text) else ""

    def key(self) -> str:
        self.skip_spaces()
        start = self.at
        equals = self.text.find("=", start)
        if equals < 0:
            raise SyntaxProblem(f"{self.text[start:]!r} is not key=value")
        key = self.text[start:equals].strip()
        if key not in ALL_KEYS:
            raise SyntaxProblem(f"{key!r} is not a locator key")
        self.at = equals + 1
        return key

    def value(self, nested: bool, escapes: bool) -> str:
        """The value up to the next clause (``;`` before ``key=``), the end, or the ``)`` closing a
        nested locator; escapes read when ``escapes``."""
        out: list[str] = []
        depth = 0
        text = self.text
        while self.at < len(text):
            char = text[self.at]
            if escapes and char == "\\" and self.at + 1 < len(text) and text[self.at + 1] in _SPECIAL:
                out.append(text[self.at + 1])
                self.at += 2
                continue
            if char == ";" and _KEY_AHEAD.match(text, self.at + 1):
                break
            if nested and char == ")":
                if depth == 0:
                    break
                depth -= 1
            elif nested and char == "(":
                depth += 1
            out.append(char)
            self.at += 1
        return "".join(out).strip()


def _clauses(scanner: _Scanner, nesting: int, escapes: bool) -> list[Clause]:
    nested = nesting > 0
    if nesting > MAX_NESTING:
        raise SyntaxProblem(f"a locator nests at most {MAX_NESTING} levels")
    found: list[Clause] = []
    while True:
        key = scanner.key()
        if key in RELATION_KEYS:
            scanner.skip_spaces()
            if scanner.peek() != "(":
                raise SyntaxProblem(f"{key}= takes a locator in parentheses, e.g. {key}=(text=Wi-Fi)")
            scanner.at += 1
            inner = _clauses(scanner, nesting + 1, True)
            if scanner.peek() != ")":
                raise SyntaxProblem(f"the locator after {key}= is not closed with )")
            scanner.at += 1
            found.append(Clause(key, inner=tuple(inner)))
        else:
            found.append(Clause(key, scanner.value(nested, escapes)))
        scanner.skip_spaces()
        if scanner.peek() == ";":
            scanner.at += 1
            continue
        if scanner.peek() == "" or (nested and scanner.peek() == ")"):
            return found
        raise SyntaxProblem(f"unexpected {scanner.peek()!r} after {key}=")


def _check(clauses: list[Clause]) -> None:
    seen: set[str] = set()
    for clause in clauses:
        if clause.key in seen and clause.key != "containsDescendants":
            raise SyntaxProblem(f"{clause.key}= is given twice")
        seen.add(clause.key)
        if clause.key in RELATION_KEYS:
            _check(list(clause.inner))
            continue
        if not clause.value:
            raise SyntaxProblem(
                f"the locator {clause.key}= needs a value, e.g. {clause.key}={_EXAMPLES[clause.key]}"
            )
        if clause.key == "role" and clause.value not in ROLES:
            raise SyntaxProblem(f"role={clause.value} is not a role; the roles are {', '.join(ROLES)}")
        if clause.key == INDEX_KEY and not clause.value.isdigit():
            raise SyntaxProblem(f"index={clause.value} is not a number; index=0 is the first match")
    if seen and seen <= {INDEX_KEY}:
        raise SyntaxProblem("index= goes with another clause, e.g. text=OK; index=1")


_EXAMPLES = {
    "text": "Settings",
    "textContains": "sett",
    "id": "title",
    "desc": "Navigate up",
    "descContains": "navigate",
    "class": "EditText",
    "role": "button",
    INDEX_KEY: "0",
}


def parse_clauses(text: str) -> list[Clause]:
    """A locator's clauses (SyntaxProblem when it is not one). A single plain clause keeps its value as
    written; joined clauses read their escapes."""
    plain = _Scanner(text)
    clauses = _clauses(plain, 0, False)
    if len(clauses) > 1 or clauses[0].key in RELATION_KEYS:
        clauses = _clauses(_Scanner(text), 0, True)
    _check(clauses)
    return clauses


def _escaped(value: str, nested: bool) -> str:
    out = value.replace("\\", "\\\\").replace(";", "\\;")
    if nested:
        out = out.replace("(", "\\(").replace(")", "\\)")
    return out


def _format(clauses: tuple[Clause, ...] | list[Clause], nested: bool) -> str:
    parts = []
    for clause in clauses:
        if clause.key in RELATION_KEYS:
            parts.append(f"{clause.key}=({_format(clause.inner, True)})")
        else:
            parts.append(f"{clause.key}={_escaped(clause.value, nested)}")
    return "; ".join(parts)


def format_clauses(clauses: tuple[Clause, ...] | list[Clause]) -> str:
    """Clauses written as a locator that ``parse_clauses`` reads back to the same clauses."""
    if len(clauses) == 1 and clauses[0].key not in RELATION_KEYS:
        value = clauses[0].value
        simple = f"{clauses[0].key}={value}"
        if ";" not in value and value == value.strip() and value:
            return simple  # nothing in it can end the value early
        try:
            if parse_clauses(simple) == list(clauses):
                return simple
        except SyntaxProblem:
            pass
    return _format(clauses, False)
