"""What the display shows: the app in front (or the launcher) under the status and navigation bars."""

from __future__ import annotations

from ..contract import AndroidPhone
from ..ui import SimulatedView
from .devloop import INSTALLED_APP_SCREEN, installed_app_screen, overlays
from .launcher import home_screen, recents_screen
from .registry import SCREENS
from .system_bars import nav_bar, status_bar
from .system_windows import ime_window, permission_dialog


def build(phone: AndroidPhone) -> list[SimulatedView]:
    """The windows on screen, bottom to top: the app (or launcher), a crash dialog, a permission
    dialog, the soft keyboard, status bar, nav bar, the notification shade (the permission dialog and
    the keyboard only on the realistic phone)."""
    screen = phone.top_screen()
    if phone.showing_recents:
        content, dark = recents_screen(phone), True
    elif screen is None:
        content, dark = home_screen(phone), True
    elif screen.name == INSTALLED_APP_SCREEN:
        content, dark = installed_app_screen(phone, screen), False
    else:
        spec = SCREENS[screen.name]
        content, dark = spec.layout(phone, screen), spec.dark
        content.secure = spec.secure
    below, above = overlays(phone)
    windows = [content, *below]
    if phone.asking_permission():
        windows.append(permission_dialog(phone))
    keyboard = phone.keyboard_height()
    if keyboard:
        windows.append(ime_window(phone, keyboard))
    return [*windows, status_bar(phone, dark), nav_bar(dark), *above]
