"""The launcher: the home screen with the app icons, and recents (a card per task, most recent first)."""

from __future__ import annotations

from .. import apps
from ..contract import AndroidPhone
from ..ui import Paint, SimulatedView
from .registry import screen_title
from .widgets import BG, TEXT2, WALLPAPER, WHITE, W, app_window, label, view


def home_screen(phone: AndroidPhone) -> SimulatedView:
    root = app_window(apps.LAUNCHER, WALLPAPER)
    root.paint = Paint(kind="wallpaper", bg=WALLPAPER)
    root.add(label((60, 220, 1020, 300), "Phone Agent Sim", size=60, fg=WHITE))
    root.add(label((60, 300, 1020, 360), "Pixel 7 - Android 14 (simulated)", size=36, fg=(200, 210, 225)))
    table = getattr(phone, "apps", apps.APPS)
    added = [p for p, app in table.items() if p not in apps.APPS and app.launchable]  # `pm install`ed
    icons = [p for p in apps.HOME_APPS if p in table] + added
    first = 1400 - max(0, (len(icons) + 3) // 4 - 2) * 320  # more than two rows grow upwards
    grid = view(
        "android.view.ViewGroup", (0, first - 20, W, 2040), resource_id=f"{apps.LAUNCHER}:id/workspace"
    )
    assert grid is not None
    root.add(grid)
    for i, package in enumerate(icons):
        app = table[package]
        x, top = (i % 4) * 270, first + (i // 4) * 320
        grid.add(
            view(
                "android.widget.TextView",
                (x + 15, top, x + 255, top + 290),
                paint=Paint(kind="app_icon", bg=app.color, fg=WHITE, size=38, label=app.glyph),
                text=app.label,
                content_desc=app.label,
                clickable=True,
                focusable=True,
                long_clickable=True,
                action=f"launch:{package}",
            )
        )
    return root


def recents_screen(phone: AndroidPhone) -> SimulatedView:
    root = app_window(apps.LAUNCHER, (45, 47, 52))
    tasks = [p for p in phone.recents if p in phone.tasks][:4]
    if not tasks:
        root.add(label((0, 1100, W, 1200), "No recent items", size=48, fg=WHITE, align="center"))
        return root
    for i, package in enumerate(tasks):
        app = getattr(phone, "apps", apps.APPS)[package]
        top = 200 + i * 470
        card = view(
            "android.widget.FrameLayout",
            (90, top, 990, top + 430),
            paint=Paint(kind="card", bg=BG, radius=40),
            resource_id=f"{apps.LAUNCHER}:id/snapshot",
            content_desc=app.label,
            clickable=True,
            focusable=True,
            long_clickable=True,
            action=f"recent:{package}",
        )
        assert card is not None
        root.add(card)
        card.add(
            view(
                "android.widget.ImageView",
                (130, top + 30, 230, top + 130),
                paint=Paint(kind="circle", bg=app.color, fg=WHITE, size=48, label=app.glyph),
                resource_id=f"{apps.LAUNCHER}:id/icon",
                content_desc=app.label,
            )
        )
        card.add(label((260, top + 45, 950, top + 115), app.label, size=48, bold=True))
        card.add(
            label((130, top + 180, 950, top + 250), screen_title(phone.tasks[package][-1]), size=44, fg=TEXT2)
        )
    root.add(
        view(
            "android.widget.Button",
            (380, 2120, 700, 2230),
            paint=Paint(kind="button", bg=(70, 72, 80), fg=WHITE, size=40, radius=55, align="center"),
            text="Clear all",
            resource_id=f"{apps.LAUNCHER}:id/clear_all",
            clickable=True,
            focusable=True,
            action="clear_recents",
        )
    )
    return root
