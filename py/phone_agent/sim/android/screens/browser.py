"""Chrome: the address bar and a simulated page for the address."""

from __future__ import annotations

from urllib.parse import urlsplit

from .. import apps
from ..contract import AndroidPhone, Screen
from ..fonts import ellipsize, line_height, wrap
from ..ui import Paint, SimulatedView
from .registry import screen_layout, screen_title
from .widgets import DIVIDER, NAV_Y, TEXT2, WHITE, W, app_window, label, text_field, view

URL_BAR_ID = "com.android.chrome:id/url_bar"


def page_title_of(screen: Screen) -> str:
    return (urlsplit(screen.arg).hostname or screen.arg) if screen.arg else "New tab"


@screen_layout("browser/page", title=page_title_of)
def browser_page(phone: AndroidPhone, screen: Screen) -> SimulatedView:
    root = app_window(apps.CHROME, WHITE)
    focused = screen.focus == URL_BAR_ID
    shown = phone.drafts.get("url", "") if focused else screen.arg
    root.add(
        text_field((40, 130, 1040, 250), URL_BAR_ID, shown, "Search or type URL", focused=focused, size=40)
    )
    page = view(
        "android.webkit.WebView",
        (0, 280, W, NAV_Y),
        paint=Paint(kind="divider_top", fg=DIVIDER),
        text=screen_title(screen),
    )
    assert page is not None
    root.add(page)
    if screen.arg:
        heading = urlsplit(screen.arg).hostname or screen.arg
        body = f"This page is simulated by the phone. Address: {screen.arg}"
    else:
        heading, body = "New tab", "Type a web address in the bar above."
    page.add(label((60, 340, 1020, 440), ellipsize(heading, 64, 960), size=64, bold=True))
    lines = wrap(body, 40, 960)
    page.add(
        label((60, 480, 1020, 480 + line_height(40) * len(lines)), body, size=40, fg=TEXT2, kind="multiline")
    )
    return root
