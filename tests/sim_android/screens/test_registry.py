"""The screen registry: each screen is declared once, where it is laid out, with its title and darkness."""

from __future__ import annotations

import pytest

from phone_agent.sim.android.apps import APPS, CLOCK
from phone_agent.sim.android.contract import Screen
from phone_agent.sim.android.phone import VirtualPhone
from phone_agent.sim.android.screens import build
from phone_agent.sim.android.screens.registry import SCREENS, screen_layout, screen_title
from phone_agent.sim.android.screens.widgets import WHITE, app_window, label
from phone_agent.sim.android.ui import SimulatedView


def test_every_activity_of_every_app_opens_a_declared_screen():
    targets = {name for app in APPS.values() for name in app.screens.values()}
    assert targets and targets <= set(SCREENS)
    assert set(SCREENS) == targets  # and no declared screen is out of every app's reach


@pytest.mark.parametrize(
    ("screen", "title"),
    [
        (Screen("settings/about"), "About phone"),
        (Screen("messages/list"), "Messages"),
        (Screen("messages/thread", "Zhang San"), "Zhang San"),
        (Screen("catalog/item", "7"), "Item 07"),
        (Screen("browser/page"), "New tab"),
        (Screen("browser/page", "https://example.com/a?b=c"), "example.com"),
        (Screen("nowhere/else"), "nowhere/else"),
    ],
)
def test_a_screens_title_is_the_one_it_was_declared_with(screen, title):
    assert screen_title(screen) == title


def test_a_name_cannot_be_declared_twice():
    before = dict(SCREENS)
    with pytest.raises(ValueError, match="declared twice"):
        screen_layout("clock/main")(lambda phone, screen: app_window(CLOCK))
    assert SCREENS == before


def test_a_new_screen_is_one_declaration_that_the_display_and_recents_then_know():
    def probe(phone, screen: Screen) -> SimulatedView:
        root = app_window(CLOCK)
        root.add(label((0, 500, 1080, 600), f"probe {screen.arg}"))
        return root

    screen_layout("clock/probe", title="Probe", dark=True)(probe)
    try:
        phone = VirtualPhone()
        phone.launch(CLOCK)
        phone.push(Screen("clock/probe", "42"))
        content, status, _nav = build(phone)
        assert "probe 42" in [node.text for node in content.walk()]
        assert status.children[0].paint.fg == WHITE  # dark: light status bar icons
        assert screen_title(phone.tasks[CLOCK][-1]) == "Probe"
    finally:
        del SCREENS["clock/probe"]
