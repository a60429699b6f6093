"""Every dump of the corpus read as list_elements reads it: no crash, the screen's true size from its
windows (never the first node), every labelled clickable element listed, every centre inside its
element, every element's own locator finding exactly it (and the flows' selector made of it finding
its node), each window's kind, the texts a person reads (as screen text); hostile trees read in part
with a note, fast."""

from __future__ import annotations

import pytest

from phone_agent.adb.ui_dump import read_ui_dump
from phone_agent.tools.locators import ScreenSnapshot
from tests.ui_corpus.checks import Figures, check
from tests.ui_corpus.screens import DUMPS, HOSTILE


@pytest.mark.parametrize("dump", DUMPS, ids=[dump.name for dump in DUMPS])
def test_each_dump_is_listed_whole_and_every_locator_finds_its_element(dump) -> None:
    figures, snapshot = check(dump)
    assert not figures.sizes_wrong, figures.sizes_wrong
    assert figures.covered == figures.labelled_clickable
    assert not figures.centres_wrong, figures.centres_wrong[:5]
    assert not figures.locators_other, figures.locators_other[:5]
    assert figures.locators_exact == figures.elements > 0
    texts = {element.text for element in snapshot.elements}
    assert set(dump.texts) <= texts, set(dump.texts) - texts
    if dump.windows:
        assert tuple(window.kind for window in snapshot.windows) == dump.windows


def test_over_the_whole_corpus_the_targets_hold() -> None:
    total = Figures()
    for dump in DUMPS:
        total.add(check(dump)[0])
    assert total.covered / total.labelled_clickable >= 0.995
    assert not total.centres_wrong
    assert total.locators_exact / total.elements >= 0.98
    assert total.selectors_exact / total.selectors >= 0.95, (total.selectors_exact, total.selectors)


def test_a_keyboard_is_a_window_of_its_own_and_covers_what_lies_under_it() -> None:
    dump = next(d for d in DUMPS if d.name == "chat-keyboard")
    snapshot = check(dump)[1]
    assert snapshot.keyboard is not None and snapshot.keyboard.top == 1440
    keys = [element for element in snapshot.elements if element.window == "keyboard"]
    assert [key.desc for key in keys] == list("qwertyuiop")
    assert all(key.line().endswith("in keyboard") for key in keys)
    send = next(element for element in snapshot.elements if element.desc == "Send")
    assert send.window == "app" and not snapshot.under_keyboard(send)


@pytest.mark.parametrize("dump", HOSTILE, ids=[dump.name for dump in HOSTILE])
def test_a_hostile_tree_is_read_in_part_with_a_note(dump) -> None:
    # How fast is the bench's (bench/bench_ui_corpus.py): a test never asserts on time.
    tree = read_ui_dump(dump.xml)
    snapshot = ScreenSnapshot.from_nodes(tree.nodes)
    assert tree.note and "left out" in tree.note
    assert all(element.locator for element in snapshot.elements)  # a deep tree may leave none
