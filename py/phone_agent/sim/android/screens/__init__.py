"""Screen layouts: build the node tree of whatever the phone shows now.

Every screen is laid out in absolute pixels of a 1080x2400 display: a status
bar (0-110), the app's content, and the three-button navigation bar
(2274-2400). The tree built here is drawn by render.py, hit-tested by taps and
dumped by `uiautomator dump`, so all three agree by construction.

``widgets`` is the kit; each app's module (``settings``, ``messages``, ``catalog``, ``browser``,
``clock``, ``camera``, ``login``) declares its screens into ``registry`` where it lays them out;
``launcher`` and ``system_bars`` are the system's own; ``display.build`` puts one screen together.
"""

from . import (  # noqa: F401 (they declare their screens)
    browser,
    camera,
    catalog,
    clock,
    devloop,
    login,
    messages,
    settings,
)
from .browser import URL_BAR_ID
from .catalog import catalog_max_scroll
from .display import build
from .messages import COMPOSE_ID
from .registry import ACTIONS, FIELD_ENTER, SCREENS, screen_title

__all__ = [
    "ACTIONS",
    "COMPOSE_ID",
    "FIELD_ENTER",
    "SCREENS",
    "URL_BAR_ID",
    "build",
    "catalog_max_scroll",
    "screen_title",
]
