"""`dumpsys`: the focused window and activity, as Android reports them."""

from __future__ import annotations

import re

from tests.sim_android.conftest import Harness


def test_dumpsys_window_names_the_focused_activity(h: Harness) -> None:
    home = h.out("dumpsys", "window")
    assert re.search(r"mCurrentFocus=Window\{\w+ u0 com\.google\.android\.apps\.nexuslauncher/", home)
    h.out("am", "start", "-n", "com.android.settings/.Settings")
    for section in ("window", "window windows"):
        text = h.out("dumpsys", *section.split())
        assert re.search(
            r"mCurrentFocus=Window\{\w+ u0 com\.android\.settings/com\.android\.settings\.Settings\}", text
        )
        assert re.search(r"mFocusedApp=ActivityRecord\{\w+ u0 com\.android\.settings/\.Settings t\d+\}", text)
