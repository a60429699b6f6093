"""Elements of the phone's screen as the tools address them: refs (``@e12``) and locators (``text=…``).

A ``ScreenSnapshot`` (``screen_elements``) is one UI tree turned into the elements worth addressing,
in reading order, each with a ref valid for that screen only and its own locator. A locator picks
elements of any snapshot: one clause (``text=``, ``textContains=``, ``id=``, ``desc=``,
``descContains=``, ``class=``, ``role=``) or several joined by ``;`` in the flows' vocabulary —
``index=`` (0-based, in reading order), and relations to another locator in parentheses: ``childOf``,
``containsChild``, ``containsDescendants`` (its place in the tree) and ``below``, ``above``,
``leftOf``, ``rightOf`` (its place on the screen, nearest first). Text is compared as screen text
(``device.screen_text``): ``text=3:17 PM`` finds ``3:17\u202fPM``. How a locator is written is
``locator_syntax``. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from ..device.screen_text import folded, screen_text
from ..device.windows import INPUT_METHOD_PACKAGES, is_input_method
from ..flows.locator_syntax import (
    INDEX_KEY,
    LOCATOR_KEYS,
    RELATION_KEYS,
    ROLES,
    Clause,
    SyntaxProblem,
    format_clauses,
    parse_clauses,
)
from .screen_elements import MAX_LABEL_CHARS, Element, ScreenSnapshot, role_of

__all__ = [
    "FORMS",
    "INPUT_METHOD_PACKAGES",
    "LOCATOR_KEYS",
    "MAX_LABEL_CHARS",
    "REF_PATTERN",
    "RELATION_KEYS",
    "ROLES",
    "Element",
    "LocatorError",
    "ScreenSnapshot",
    "Target",
    "is_input_method",
    "parse_target",
    "role_of",
]

REF_PATTERN = re.compile(r"@e([1-9][0-9]{0,5})")
_SIDES = ("below", "above", "leftOf", "rightOf")


class LocatorError(ValueError):
    """A target that is neither a ref nor a locator; the message says what the forms are."""


@dataclass(frozen=True)
class Target:
    """A parsed target: a ref (``@e12``) or a locator — its first clause (``key`` = ``value``) and the
    clauses after it (``more``)."""

    ref: str | None = None
    key: str = ""
    value: str = ""
    more: tuple[Clause, ...] = ()
    inner: tuple[Clause, ...] = ()  # the first clause's locator, when it is a relation
    written: str = field(default="", compare=False)

    def __str__(self) -> str:
        if self.ref is not None:
            return self.ref
        return self.written or format_clauses(self.clauses)

    @property
    def clauses(self) -> tuple[Clause, ...]:
        return (Clause(self.key, self.value, self.inner), *self.more)

    def matches(self, element: Element) -> bool:
        """Whether ``element`` has what the locator's plain clauses ask (relations and index aside)."""
        return all(_plain(clause)(element) for clause in self.clauses if clause.key in LOCATOR_KEYS)

    def find(self, snapshot: ScreenSnapshot) -> list[Element]:
        """The locator's matches, in reading order (nearest first after ``below``/``above``/``leftOf``/
        ``rightOf``); ``text=`` falls back to a case-insensitive match when nothing matches exactly."""
        return find_elements(self.clauses, snapshot)


def _text_is(value: str) -> Callable[[Element], bool]:
    wanted = screen_text(value)
    return lambda element: element.text == wanted


def _plain(clause: Clause) -> Callable[[Element], bool]:
    return _MATCHERS[clause.key](clause.value)


def _id_is(value: str) -> Callable[[Element], bool]:
    """``id=`` with or without the package: ``com.app:id/name``, ``name``, or ``android:id/name``."""

    def match(element: Element) -> bool:
        rid = element.resource_id
        return bool(rid) and (rid == value or rid.endswith(f":id/{value}") or rid.endswith(f":{value}"))

    return match


def _contains(attribute: str) -> Callable[[str], Callable[[Element], bool]]:
    def make(value: str) -> Callable[[Element], bool]:
        wanted = folded(value)
        return lambda element: wanted in folded(getattr(element, attribute))

    return make


def _desc_is(value: str) -> Callable[[Element], bool]:
    wanted = screen_text(value)
    return lambda element: element.desc == wanted


def _class_is(value: str) -> Callable[[Element], bool]:
    return lambda element: value in (element.class_name, element.class_name.rsplit(".", 1)[-1])


# What each locator key compares (the same keys as LOCATOR_KEYS, in its order).
_MATCHERS: dict[str, Callable[[str], Callable[[Element], bool]]] = {
    "text": _text_is,
    "textContains": _contains("text"),
    "id": _id_is,
    "desc": _desc_is,
    "descContains": _contains("desc"),
    "class": _class_is,
    "role": lambda value: lambda element: element.role == value,
}


def _filter(clause: Clause, elements: list[Element]) -> list[Element]:
    match = _plain(clause)
    found = [element for element in elements if match(element)]
    if not found and clause.key == "text":
        wanted = folded(clause.value)
        found = [element for element in elements if element.text.casefold() == wanted]
    return found


def _node_ids(elements: list[Element]) -> set[int]:
    return {id(element.node) for element in elements if element.node is not None}


def _related(clause: Clause, found: list[Element], snapshot: ScreenSnapshot) -> list[Element]:
    """``found`` kept where it stands in the relation ``clause`` names to what its locator finds."""
    others = find_elements(clause.inner, snapshot)
    if clause.key == "childOf":
        inside = _node_ids(others)
        return [
            e
            for e in found
            if e.node is not None and any(id(up) in inside for up in snapshot.ancestors(e.node))
        ]
    if clause.key == "containsChild":
        wanted = _node_ids(others)
        return [
            e for e in found if e.node is not None and any(id(child) in wanted for child in e.node.children)
        ]
    holders: set[int] = set()  # containsDescendants: every ancestor of what the locator finds
    for other in others:
        if other.node is not None:
            holders.update(id(up) for up in snapshot.ancestors(other.node))
    return [e for e in found if e.node is not None and id(e.node) in holders]


def _beside(key: str, anchor: Element, found: list[Element]) -> list[Element]:
    """``found`` on the ``key`` side of ``anchor``, nearest first (centre to centre)."""
    a = anchor.bounds
    keep = {
        "below": lambda b: b.top >= a.bottom - 1,
        "above": lambda b: b.bottom <= a.top + 1,
        "leftOf": lambda b: b.right <= a.left + 1,
        "rightOf": lambda b: b.left >= a.right - 1,
    }[key]
    ax, ay = anchor.center
    kept = [element for element in found if element is not anchor and keep(element.bounds)]
    return sorted(kept, key=lambda e: (e.center[0] - ax) ** 2 + (e.center[1] - ay) ** 2)


def find_elements(clauses: tuple[Clause, ...] | list[Clause], snapshot: ScreenSnapshot) -> list[Element]:
    """The elements of ``snapshot`` that a locator's clauses find, in the order ``index`` counts them."""
    found = list(snapshot.elements)
    for clause in clauses:
        if clause.key in LOCATOR_KEYS:
            found = _filter(clause, found)
    for clause in clauses:
        if clause.key in RELATION_KEYS and clause.key not in _SIDES and found:
            found = _related(clause, found, snapshot)
    for clause in clauses:
        if clause.key in _SIDES and found:
            anchors = find_elements(clause.inner, snapshot)
            found = _beside(clause.key, anchors[0], found) if anchors else []
    for clause in clauses:
        if clause.key == INDEX_KEY:
            index = int(clause.value)
            found = found[index : index + 1]
    return found


FORMS = (
    "a ref from list_elements (@e12), or a locator: text=…, textContains=…, id=…, desc=…, "
    "descContains=…, class=…, role=… (button, input, switch, checkbox, list, image, text); clauses "
    "joined by ; narrow it: index=N (0-based), childOf=(…), containsChild=(…), "
    "containsDescendants=(…), below=(…), above=(…), leftOf=(…), rightOf=(…)"
)


def parse_target(text: str) -> Target:
    """``@e12`` or a locator; LocatorError naming the forms otherwise."""
    if not isinstance(text, str):
        raise LocatorError(f"a target must be a string: {FORMS}")
    stripped = text.strip()
    if stripped.startswith("@"):
        if REF_PATTERN.fullmatch(stripped) is None:
            raise LocatorError(f"{stripped!r} is not a ref; refs look like @e12. A target is {FORMS}")
        return Target(ref=stripped)
    key, sep, _ = stripped.partition("=")
    if not sep or key.strip() not in (*LOCATOR_KEYS, *RELATION_KEYS):
        raise LocatorError(f"{text!r} is not a target. A target is {FORMS}")
    try:
        clauses = parse_clauses(stripped)
    except SyntaxProblem as exc:
        if "needs a value" in str(exc) or "is not a role" in str(exc):
            raise LocatorError(str(exc)) from None
        raise LocatorError(f"{stripped!r} is not a locator: {exc}. A target is {FORMS}") from None
    first = next((clause for clause in clauses if clause.key in LOCATOR_KEYS), clauses[0])
    rest = tuple(clause for clause in clauses if clause is not first)
    return Target(key=first.key, value=first.value, more=rest, inner=first.inner, written=stripped)
