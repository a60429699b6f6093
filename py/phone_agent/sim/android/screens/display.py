"""What the display shows: the app in front (or the launcher) under the status and navigation bars."""

from __future__ import annotations

from ..contract import AndroidPhone
from ..ui import SimulatedView
from .launcher import home_screen, recents_screen
from .registry import SCREENS
from .system_bars import nav_bar, status_bar
from .system_windows import ime_window, permission_dialog


def build(phone: AndroidPhone) -> list[SimulatedView]:
    """The windows on screen, bottom to top: the app (or launcher), a permission dialog, the soft
    keyboard, status bar, nav bar (the dialog and the keyboard only on the realistic phone)."""
    screen = phone.top_screen()
    if phone.showing_recents:
        content, dark = recents_screen(phone), True
    elif screen is None:
        content, dark = home_screen(), True
    else:
        spec = SCREENS[screen.name]
        content, dark = spec.layout(phone, screen), spec.dark
        content.secure = spec.secure
    windows = [content]
    if phone.asking_permission():
        windows.append(permission_dialog(phone))
    keyboard = phone.keyboard_height()
    if keyboard:
        windows.append(ime_window(phone, keyboard))
    return [*windows, status_bar(phone, dark), nav_bar(dark)]
