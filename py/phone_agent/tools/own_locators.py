"""Each element's own locator: the shortest locator that finds exactly that element on its screen.

In this order: its text, description or id alone when no other element shares it (the shortest of
those); else its role or class alone when it is the only one; else one of those with ``index=`` (its
place among the elements that share it, in reading order; the shortest such). An element with no
text, description or id still gets one (its role or class and its place). The counts mirror what
``locators`` matches (``text=`` exactly, ``id=`` with or without its package, ``class=`` by short
or full name), so a locator chosen here finds its element there; a test holds the two together.
Pure: O(elements).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ..flows.locator_syntax import INDEX_KEY, Clause, format_clauses


@dataclass(frozen=True)
class LocatorKeys:
    """What of an element its locator may name (text already as screen text; "" for a password)."""

    text: str
    desc: str
    resource_id: str
    class_name: str
    role: str


def short_id(resource_id: str) -> str:
    """``com.app:id/title`` → ``title`` (the part ``id=`` may be written with)."""
    return resource_id.split(":id/", 1)[1] if ":id/" in resource_id else resource_id


def id_forms(resource_id: str) -> set[str]:
    """Every value ``id=…`` may be written with to match this resource id."""
    if not resource_id:
        return set()
    forms = {resource_id, short_id(resource_id)}
    if ":" in resource_id:
        forms.add(resource_id.rsplit(":", 1)[1])
    return forms


def short_class(class_name: str) -> str:
    return class_name.rsplit(".", 1)[-1]


def _clauses_for(keys: LocatorKeys) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """The element's own clauses: first what identifies it (text, desc, id by short and full form),
    then what only classifies it (role, class)."""
    naming: list[tuple[str, str]] = []
    if keys.text:
        naming.append(("text", keys.text))
    if keys.desc:
        naming.append(("desc", keys.desc))
    if keys.resource_id:
        short = short_id(keys.resource_id)
        naming.append(("id", short))
        if short != keys.resource_id:
            naming.append(("id", keys.resource_id))
    kinds = [("role", keys.role)]
    if keys.class_name:
        kinds.append(("class", short_class(keys.class_name)))
    return naming, kinds


def own_locators(elements: list[LocatorKeys]) -> list[str]:
    """For each element (in reading order), the shortest locator that finds exactly it."""
    groups: dict[tuple[str, str], list[int]] = defaultdict(list)
    for position, keys in enumerate(elements):
        if keys.text:
            groups["text", keys.text].append(position)
        if keys.desc:
            groups["desc", keys.desc].append(position)
        for form in id_forms(keys.resource_id):
            groups["id", form].append(position)
        groups["role", keys.role].append(position)
        if keys.class_name:
            classes = {short_class(keys.class_name), keys.class_name}
            for name in classes:
                groups["class", name].append(position)
    places: dict[tuple[str, str], dict[int, int]] = {}
    found: list[str] = []
    for position, keys in enumerate(elements):
        naming, kinds = _clauses_for(keys)
        unique = [format_clauses([Clause(*pair)]) for pair in naming if len(groups[pair]) == 1]
        if not unique:
            unique = [format_clauses([Clause(*pair)]) for pair in kinds if len(groups[pair]) == 1]
        if unique:
            found.append(min(unique, key=len))
            continue
        indexed = []
        for pair in (*naming, *kinds):
            if pair not in places:
                places[pair] = {member: place for place, member in enumerate(groups[pair])}
            place = places[pair].get(position)
            if place is not None:
                indexed.append(format_clauses([Clause(*pair), Clause(INDEX_KEY, str(place))]))
        found.append(min(indexed, key=len))
    return found
