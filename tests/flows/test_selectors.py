"""Maestro's selector keys that need more than a text or an id: traits (text, square, long-text) and an
index given as text (Maestro reads ``index`` as a string, so ``${N}`` works), matched on a UI tree."""

from __future__ import annotations

import pytest

from phone_agent.device.interface import Bounds, UiNode
from phone_agent.flows.selectors import UiScreen, find
from phone_agent.flows.variables import StepFailed


def screen() -> UiScreen:
    children = [
        UiNode(Bounds(0, 100, 100, 200), text="Square"),
        UiNode(Bounds(0, 300, 400, 400), text="x" * 201),
        UiNode(Bounds(0, 500, 400, 600), content_desc="no text"),
    ]
    return UiScreen([UiNode(Bounds(0, 0, 1080, 2400), children=children), *children])


def test_traits_choose_as_maestro_does():
    assert [node.text for node in find({"traits": ["square"]}, screen())] == ["Square"]
    assert [len(node.text) for node in find({"traits": ["long-text"]}, screen())] == [201]
    assert len(find({"traits": ["text"]}, screen())) == 2
    assert find({"traits": ["text", "square"]}, screen())[0].text == "Square"


def test_an_index_given_as_text_picks_and_a_wrong_one_fails_the_step():
    assert find({"traits": ["text"], "index": "1"}, screen())[0].text == "x" * 201
    assert find({"traits": ["text"], "index": 5}, screen()) == []
    with pytest.raises(StepFailed, match="index must be a number"):
        find({"index": "second"}, screen())
