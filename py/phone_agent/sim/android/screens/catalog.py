"""Catalog (a third-party app): a scrollable list of items and an item's details."""

from __future__ import annotations

from .. import apps
from ..contract import AndroidPhone, Screen
from ..data import CATALOG_ITEMS
from ..fonts import line_height, wrap
from ..ui import Paint, Rect, SimulatedView
from .registry import screen_layout
from .widgets import DIVIDER, NAV_Y, TEXT2, W, app_window, back_button, label, view

CAT = apps.CATALOG
ITEM_H = 200
CATALOG_VIEW: Rect = (0, 340, W, NAV_Y)


def catalog_max_scroll() -> int:
    return max(0, len(CATALOG_ITEMS) * ITEM_H - (CATALOG_VIEW[3] - CATALOG_VIEW[1]))


@screen_layout("catalog/list", title="Catalog")
def catalog_list(phone: AndroidPhone, screen: Screen) -> SimulatedView:
    root = app_window(CAT)
    root.add(label((60, 150, 1020, 260), "Catalog", size=64, rid=f"{CAT}:id/title"))
    root.add(
        label((60, 262, 1020, 318), f"{len(CATALOG_ITEMS)} items", size=36, fg=TEXT2, rid=f"{CAT}:id/count")
    )
    viewport = CATALOG_VIEW
    lst = view(
        "androidx.recyclerview.widget.RecyclerView",
        viewport,
        resource_id=f"{CAT}:id/list",
        scrollable=True,
        focusable=True,
        paint=Paint(kind="divider_top", fg=DIVIDER),
    )
    assert lst is not None
    lst.clip = True
    root.add(lst)
    first = phone.catalog_scroll // ITEM_H
    for index in range(first, len(CATALOG_ITEMS)):
        item = CATALOG_ITEMS[index]
        top = viewport[1] + index * ITEM_H - phone.catalog_scroll
        if top >= viewport[3]:
            break
        row = view(
            "android.widget.LinearLayout",
            (0, top, W, top + ITEM_H),
            clip_to=viewport,
            paint=Paint(kind="divider_bottom", fg=DIVIDER),
            resource_id=f"{CAT}:id/item",
            clickable=True,
            focusable=True,
            action=f"item:{item.number}",
        )
        if row is None:
            continue
        lst.add(row)
        row.add(
            label(
                (60, top + 40, 1020, top + 102),
                item.title,
                size=46,
                rid=f"{CAT}:id/item_title",
                clip_to=viewport,
            )
        )
        row.add(
            label(
                (60, top + 110, 1020, top + 160),
                item.subtitle,
                size=36,
                fg=TEXT2,
                rid=f"{CAT}:id/item_subtitle",
                clip_to=viewport,
            )
        )
    return root


def item_title(screen: Screen) -> str:
    return f"Item {int(screen.arg):02d}"


@screen_layout("catalog/item", title=item_title)
def catalog_item(phone: AndroidPhone, screen: Screen) -> SimulatedView:
    root = app_window(CAT)
    item = CATALOG_ITEMS[int(screen.arg) - 1]
    back_button(root)
    root.add(label((60, 290, 1020, 400), f"Item {item.number:02d}", size=64, rid=f"{CAT}:id/title"))
    root.add(label((60, 460, 1020, 540), item.name, size=56, bold=True, rid=f"{CAT}:id/name"))
    root.add(label((60, 570, 1020, 630), f"Price: {item.price}", size=44, rid=f"{CAT}:id/price"))
    root.add(label((60, 650, 1020, 710), f"In stock: {item.stock}", size=44, rid=f"{CAT}:id/stock"))
    lines = wrap(item.description, 40, 960)
    root.add(
        label(
            (60, 760, 1020, 760 + line_height(40) * len(lines)),
            item.description,
            size=40,
            fg=TEXT2,
            rid=f"{CAT}:id/description",
            kind="multiline",
        )
    )
    return root
