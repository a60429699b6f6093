"""The display: the app in front (or the launcher) under the status and navigation bars."""

from __future__ import annotations

from phone_agent.sim.android.apps import CAMERA, SETTINGS
from phone_agent.sim.android.phone import VirtualPhone
from phone_agent.sim.android.screens import build
from phone_agent.sim.android.screens.widgets import TEXT, WHITE


def bars_are_light(phone: VirtualPhone) -> bool:
    """Whether the status bar draws light icons (as over a dark screen)."""
    _content, status, _nav = build(phone)
    return status.children[0].paint.fg == WHITE


def test_three_windows_bottom_to_top_the_content_then_the_status_bar_then_the_navigation_bar():
    content, status, nav = build(VirtualPhone())
    assert content.package == "com.google.android.apps.nexuslauncher"
    assert status.resource_id == "com.android.systemui:id/status_bar"
    assert nav.resource_id == "com.android.systemui:id/navigation_bar_frame"


def test_the_launcher_and_dark_apps_get_light_bars_and_light_apps_dark_ones():
    phone = VirtualPhone()
    assert bars_are_light(phone)
    phone.launch(SETTINGS)
    assert not bars_are_light(phone)
    assert build(phone)[1].children[0].paint.fg == TEXT
    phone.launch(CAMERA)
    assert bars_are_light(phone)
    phone.toggle_recents()
    assert bars_are_light(phone)
