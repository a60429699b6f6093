"""The checks a dump must pass, measured: what the tests assert over the corpus and the bench prints.

For one dump, read as list_elements reads it (``read_ui_dump``, then ``ScreenSnapshot.from_nodes``
with no size given, so the screen comes from the windows): the elements listed; the labelled clickable
nodes on screen and how many of them are listed; elements whose centre lies outside their own visible
part; elements whose own locator finds exactly them (and, where a flow's selector can say it, whose
locator as a selector finds their node first); the time it took.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from phone_agent.adb.ui_dump import read_ui_dump
from phone_agent.flows.recorder import locator_selector
from phone_agent.flows.selectors import UiScreen, find
from phone_agent.tools.locators import ScreenSnapshot, parse_target
from phone_agent.tools.screen_elements import inner_text, own_label, visible_center
from tests.ui_corpus.shapes import Dump


@dataclass
class Figures:
    """What one dump (or a corpus, summed) measured."""

    dumps: int = 0
    elements: int = 0
    labelled_clickable: int = 0
    covered: int = 0
    centres_wrong: list[str] = field(default_factory=list)
    locators_exact: int = 0
    locators_other: list[str] = field(default_factory=list)
    selectors: int = 0
    selectors_exact: int = 0
    parse_ms: list[float] = field(default_factory=list)
    sizes_wrong: list[str] = field(default_factory=list)

    def add(self, other: Figures) -> None:
        for name, value in other.__dict__.items():
            mine = getattr(self, name)
            setattr(self, name, mine + value)


def _key(node) -> tuple:
    return (node.class_name, node.resource_id, node.text, node.content_desc, node.bounds)


def check(dump: Dump) -> tuple[Figures, ScreenSnapshot]:
    started = time.perf_counter()
    tree = read_ui_dump(dump.xml)
    snapshot = ScreenSnapshot.from_nodes(tree.nodes)
    elapsed = (time.perf_counter() - started) * 1000
    figures = Figures(dumps=1, elements=len(snapshot.elements), parse_ms=[elapsed])
    if (snapshot.width, snapshot.height) != (dump.width, dump.height):
        figures.sizes_wrong.append(f"{dump.name}: {snapshot.width}x{snapshot.height}")
    listed = {_key(element.node) for element in snapshot.elements if element.node is not None}
    for node in tree.nodes:
        touchable = node.clickable or node.long_clickable or node.checkable
        if not touchable or visible_center(node.bounds, snapshot.width, snapshot.height) is None:
            continue
        if not (own_label(node) or inner_text(node)):
            continue
        figures.labelled_clickable += 1
        figures.covered += _key(node) in listed
    screen = UiScreen(tree.nodes, snapshot.width, snapshot.height)
    for element in snapshot.elements:
        box = element.bounds
        x, y = element.center
        inside = max(box.left, 0) <= x <= min(box.right, snapshot.width) and max(box.top, 0) <= y <= min(
            box.bottom, snapshot.height
        )
        if not inside:
            figures.centres_wrong.append(f"{dump.name}: {element.line()}")
        found = parse_target(element.locator).find(snapshot)
        if len(found) == 1 and found[0] is element:
            figures.locators_exact += 1
        else:
            figures.locators_other.append(f"{dump.name}: {element.locator} finds {len(found)}")
        selector = locator_selector(element.locator)
        if selector is not None:
            figures.selectors += 1
            matched = find(selector, screen)
            figures.selectors_exact += bool(matched) and matched[0] is element.node
    return figures, snapshot
