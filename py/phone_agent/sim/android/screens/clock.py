"""Clock: the time, large."""

from __future__ import annotations

from .. import apps
from ..contract import AndroidPhone, Screen
from ..ui import SimulatedView
from .registry import screen_layout
from .widgets import W, app_window, label, page_title


@screen_layout("clock/main", title="Clock")
def clock_screen(phone: AndroidPhone, screen: Screen) -> SimulatedView:
    root = app_window(apps.CLOCK)
    page_title(root, "Clock", sub_page=False)
    root.add(
        label(
            (0, 800, W, 1000),
            phone.clock_text(),
            size=180,
            align="center",
            rid=f"{apps.CLOCK}:id/digital_clock",
        )
    )
    return root
