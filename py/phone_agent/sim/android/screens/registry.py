"""The screens of the apps, each declared once, where it is laid out.

An app's module declares each of its screens with ``@screen_layout(name, title=…, dark=…)`` on the function
that builds its node tree; the display (``display.build``), the recents cards (``screen_title``) and the
phone find it here by name. Which activity opens a screen is the app's manifest, in ``apps.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..contract import AndroidPhone, Screen
from ..ui import SimulatedView

Layout = Callable[[AndroidPhone, Screen], SimulatedView]
Title = str | Callable[[Screen], str]


@dataclass(frozen=True)
class ScreenSpec:
    """One screen of an app: its name (``app/page``), how it is laid out, its title, its darkness."""

    name: str
    layout: Layout
    title: Title
    dark: bool = False  # a dark screen gets light status and navigation bar icons
    secure: bool = False  # its window has FLAG_SECURE: captures show it black, the UI tree still reads


SCREENS: dict[str, ScreenSpec] = {}


def screen_layout(
    name: str, *, title: Title | None = None, dark: bool = False, secure: bool = False
) -> Callable[[Layout], Layout]:
    """Declare the decorated layout as the screen ``name`` (its title defaults to the name)."""

    def declare(layout: Layout) -> Layout:
        if name in SCREENS:
            raise ValueError(f"screen {name!r} is declared twice")
        SCREENS[name] = ScreenSpec(name, layout, name if title is None else title, dark, secure)
        return layout

    return declare


def screen_title(screen: Screen) -> str:
    """The title a screen shows (used by recents cards too)."""
    spec = SCREENS.get(screen.name)
    if spec is None:
        return screen.name
    return spec.title(screen) if callable(spec.title) else spec.title
