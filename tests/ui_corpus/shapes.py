"""A corpus of UI dumps written for these tests, in the shapes real phones write them.

Each ``Dump`` is a screen as ``uiautomator dump`` or the hierarchy server would give it, built here
(none copied from anywhere): several windows in the orders real dumps list them (status bar, navigation
bar or gesture strip first), repeated list rows, elements with no label, ``NAF`` nodes, a WebView,
password fields, Chinese, Japanese, Arabic with bidi marks, Cyrillic and emoji, Android 14's narrow
no-break space in times, landscape and many screen sizes, a soft keyboard and a dialog over an app, odd
attributes (an ``index`` that is not a number, missing or broken bounds, extra attributes, a wrapper
element), and deep and wide trees. ``DUMPS`` is the list; each says its true screen size and what a
reader must find in it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from xml.sax.saxutils import quoteattr

NNBSP = "\u202f"
STATUS, NAV = "com.android.systemui", "com.android.systemui"
GBOARD = "com.google.android.inputmethod.latin"
FLAGS = (
    "checkable",
    "checked",
    "clickable",
    "enabled",
    "focusable",
    "focused",
    "scrollable",
    "long-clickable",
    "password",
    "selected",
)


@dataclass
class N:
    """A node to write: its class, bounds (x1, y1, x2, y2), children and attributes."""

    cls: str
    box: tuple[int, int, int, int]
    children: list[N] = field(default_factory=list)
    text: str = ""
    rid: str = ""
    desc: str = ""
    pkg: str = ""
    attrs: dict[str, str] = field(default_factory=dict)  # flags ("clickable": "true") and odd extras


def n(cls: str, box: tuple[int, int, int, int], *children: N, pkg: str = "", **attrs: object) -> N:
    """``n("TextView", (0, 0, 10, 10), text="Hi", clickable=True)``: a short class gets android.widget."""
    full = cls if "." in cls else f"android.widget.{cls}"
    own = {key: str(attrs.pop(key)) for key in ("text", "rid", "desc") if key in attrs}
    flags = {
        key.replace("_", "-"): ("true" if value else "false") if isinstance(value, bool) else str(value)
        for key, value in attrs.items()
    }
    return N(
        full, box, list(children), own.get("text", ""), own.get("rid", ""), own.get("desc", ""), pkg, flags
    )


def _open_tag(node: N, index: int, package: str, style: str) -> str:
    attrs = dict(node.attrs)
    pairs: list[tuple[str, str]] = []
    if attrs.pop("NAF", "") == "true":
        pairs.append(("NAF", "true"))
    pairs.append(("index", attrs.pop("index", str(index))))
    pairs += [("text", node.text), ("resource-id", node.rid), ("class", node.cls), ("package", package)]
    pairs.append(("content-desc", node.desc))
    for flag in FLAGS:
        default = "true" if flag == "enabled" else "false"
        value = attrs.pop(flag, default)
        if value != "omit":
            pairs.append((flag, value))
    bounds = attrs.pop("bounds", f"[{node.box[0]},{node.box[1]}][{node.box[2]},{node.box[3]}]")
    if bounds != "omit":
        pairs.append(("bounds", bounds))
    if style == "u2":  # the hierarchy server's extra attributes
        pairs += [("drawing-order", str(index + 1)), ("hint", attrs.pop("hint", "")), ("display-id", "0")]
    pairs += list(attrs.items())
    return "<node " + " ".join(f"{key}={quoteattr(value)}" for key, value in pairs)


def render(windows: list[N], *, rotation: int = 0, style: str = "dump", wrapper: str = "") -> str:
    """The XML of ``windows`` (top-level nodes, in the order given), without recursion."""
    out = ["<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>", f'<hierarchy rotation="{rotation}">']
    stack: list[tuple[N | str, int, str]] = [
        (window, i, window.pkg) for i, window in reversed(list(enumerate(windows)))
    ]
    if wrapper:
        out.append(f"<{wrapper}>")
    while stack:
        item, index, package = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        package = item.pkg or package
        tag = _open_tag(item, index, package, style)
        if not item.children:
            out.append(tag + " />")
            continue
        out.append(tag + ">")
        stack.append(("</node>", 0, package))
        stack += [(child, i, package) for i, child in reversed(list(enumerate(item.children)))]
    if wrapper:
        out.append(f"</{wrapper}>")
    out.append("</hierarchy>")
    return "".join(out)


@dataclass(frozen=True)
class Dump:
    """One dump of the corpus: its XML, the true screen size, and what must be found in it."""

    name: str
    xml: str
    width: int
    height: int
    windows: tuple[str, ...] = ()  # the window kinds, in the dump's order, when the shape is about them
    texts: tuple[str, ...] = ()  # element texts that must be listed (as screen text)
    partial: bool = False  # a hostile tree: read in part, with a note


# ----- pieces ------------------------------------------------------------------------------------------


def status_bar(width: int, height: int = 80, clock: str = "9:41") -> N:
    return n(
        "FrameLayout",
        (0, 0, width, height),
        n("TextView", (40, 10, 160, height - 10), text=clock, rid=f"{STATUS}:id/clock"),
        n(
            "ImageView",
            (width - 200, 16, width - 150, height - 16),
            desc="Wifi signal full.",
            rid=f"{STATUS}:id/wifi_signal",
        ),
        n(
            "ImageView",
            (width - 120, 16, width - 40, height - 16),
            desc="Battery 76 percent.",
            rid=f"{STATUS}:id/battery",
        ),
        pkg=STATUS,
        rid=f"{STATUS}:id/status_bar_container",
    )


def nav_bar(width: int, top: int, bottom: int) -> N:
    third = width // 3
    buttons = [("back", "Back"), ("home", "Home"), ("recent_apps", "Overview")]
    return n(
        "FrameLayout",
        (0, top, width, bottom),
        *[
            n(
                "ImageView",
                (i * third, top, (i + 1) * third, bottom),
                desc=label,
                rid=f"{NAV}:id/{rid}",
                clickable=True,
            )
            for i, (rid, label) in enumerate(buttons)
        ],
        pkg=NAV,
        rid=f"{NAV}:id/navigation_bar_frame",
    )


def gesture_strip(width: int, height: int) -> N:
    return n(
        "FrameLayout",
        (0, height - 48, width, height),
        n(
            "View",
            (width // 2 - 100, height - 30, width // 2 + 100, height - 18),
            rid=f"{NAV}:id/home_handle",
        ),
        pkg=NAV,
    )


def settings_rows(
    width: int, top: int, rows: list[tuple[str, str]], pkg: str, switch_at: frozenset[int] = frozenset()
) -> N:
    """A RecyclerView of Settings rows: each a clickable LinearLayout with no text of its own, holding an
    icon, a title and a summary (the same ids in every row), some with a switch."""
    items = []
    y = top
    for number, (title, summary) in enumerate(rows):
        parts = [
            n("ImageView", (40, y + 60, 120, y + 140), rid="android:id/icon"),
            n(
                "RelativeLayout",
                (160, y + 30, width - 200, y + 170),
                n("TextView", (160, y + 30, width - 200, y + 95), text=title, rid="android:id/title"),
                n("TextView", (160, y + 100, width - 200, y + 160), text=summary, rid="android:id/summary"),
            ),
        ]
        if number in switch_at:
            parts.append(
                n(
                    "LinearLayout",
                    (width - 180, y + 50, width - 40, y + 150),
                    n(
                        "Switch",
                        (width - 180, y + 50, width - 40, y + 150),
                        rid="android:id/switch_widget",
                        checkable=True,
                        checked=number % 2 == 0,
                        clickable=False,
                        focusable=True,
                    ),
                    rid="android:id/widget_frame",
                )
            )
        items.append(n("LinearLayout", (0, y, width, y + 200), *parts, clickable=True, focusable=True))
        y += 200
    return n(
        "androidx.recyclerview.widget.RecyclerView",
        (0, top, width, y),
        *items,
        rid=f"{pkg}:id/recycler_view",
        scrollable=True,
        focusable=True,
    )


def app_window(pkg: str, box: tuple[int, int, int, int], *children: N) -> N:
    content = n("FrameLayout", box, *children, rid="android:id/content")
    return n("FrameLayout", box, n("LinearLayout", box, content), pkg=pkg)


SETTINGS_ROWS = [
    ("Network & internet", "Mobile, Wi\u2011Fi, hotspot"),
    ("Connected devices", "Bluetooth, pairing"),
    ("Apps", "Assistant, recent apps, default apps"),
    ("Notifications", "Notification history, conversations"),
    ("Battery", "76%"),
    ("Storage", "34% used - 84.21 GB free"),
    ("Sound & vibration", "Volume, haptics, Do Not Disturb"),
    ("Display", "Dark theme, font size, brightness"),
    ("Wallpaper & style", "Colours, themed icons, app grid"),
    ("Accessibility", "Display, interaction, audio"),
]
