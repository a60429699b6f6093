"""The widget kit the screens are built from: the display's geometry, the palette, and small
constructors of views (labels, list rows, text fields, app windows) in absolute pixels."""

from __future__ import annotations

from ..props import SCREEN_HEIGHT, SCREEN_WIDTH
from ..ui import Color, Paint, Rect, SimulatedView, intersect

W, H = SCREEN_WIDTH, SCREEN_HEIGHT
STATUS_H = 110
NAV_Y = 2274

BG: Color = (250, 250, 252)
TEXT: Color = (28, 27, 31)
TEXT2: Color = (95, 99, 104)
PRIMARY: Color = (26, 115, 232)
WALLPAPER: Color = (28, 48, 78)
WHITE: Color = (255, 255, 255)
FIELD: Color = (235, 238, 243)
DIVIDER: Color = (224, 224, 228)
BUBBLE_THEM: Color = (232, 234, 237)


def view(
    cls: str, box: Rect, *, clip_to: Rect | None = None, paint: Paint | None = None, **attrs: object
) -> SimulatedView | None:
    """A node whose visible bounds are `box` clipped to `clip_to` (None if invisible)."""
    bounds = intersect(box, clip_to) if clip_to else box
    if bounds is None:
        return None
    node = SimulatedView(cls=cls, bounds=bounds, paint=paint, **attrs)  # type: ignore[arg-type]
    if bounds != box:
        node.box = box
    return node


def label(
    box: Rect,
    text: str,
    *,
    size: int = 40,
    fg: Color = TEXT,
    bold: bool = False,
    align: str = "left",
    rid: str = "",
    clip_to: Rect | None = None,
    kind: str = "text",
) -> SimulatedView | None:
    return view(
        "android.widget.TextView",
        box,
        clip_to=clip_to,
        paint=Paint(kind=kind, fg=fg, size=size, bold=bold, align=align),
        text=text,
        resource_id=rid,
    )


def app_window(package: str, bg: Color = BG) -> SimulatedView:
    return SimulatedView(
        cls="android.widget.FrameLayout", bounds=(0, 0, W, H), package=package, paint=Paint(bg=bg)
    )


def back_button(root: SimulatedView) -> None:
    root.add(
        view(
            "android.widget.ImageButton",
            (20, 130, 150, 260),
            paint=Paint(kind="arrow_back"),
            content_desc="Navigate up",
            clickable=True,
            focusable=True,
            action="back",
        )
    )


def page_title(root: SimulatedView, title: str, *, sub_page: bool) -> None:
    if sub_page:
        back_button(root)
        root.add(
            label((60, 290, 1020, 400), title, size=64, rid="com.android.settings:id/collapsing_toolbar")
        )
    else:
        root.add(label((60, 150, 1020, 300), title, size=72))


def list_row(
    root: SimulatedView,
    top: int,
    title: str,
    summary: str,
    *,
    action: str | None,
    height: int = 220,
    icon: Color | None = None,
    glyph: str = "",
    switch: bool | None = None,
    switch_id: str = "android:id/switch_widget",
) -> SimulatedView:
    row = view(
        "android.widget.LinearLayout",
        (0, top, W, top + height),
        clickable=action is not None,
        focusable=action is not None,
        action=action,
    )
    assert row is not None
    root.add(row)
    x = 60
    if icon is not None:
        cy = top + height // 2
        row.add(
            view(
                "android.widget.ImageView",
                (60, cy - 50, 160, cy + 50),
                paint=Paint(kind="circle", bg=icon, fg=WHITE, size=48, label=glyph),
                resource_id="android:id/icon",
            )
        )
        x = 200
    right = 840 if switch is not None else 1020
    row.add(label((x, top + 45, right, top + 110), title, size=48, rid="android:id/title"))
    if summary:
        row.add(label((x, top + 118, right, top + 172), summary, size=36, fg=TEXT2, rid="android:id/summary"))
    if switch is not None:
        cy = top + height // 2
        row.add(
            view(
                "android.widget.Switch",
                (860, cy - 45, 1020, cy + 45),
                paint=Paint(kind="switch"),
                resource_id=switch_id,
                checkable=True,
                checked=switch,
                clickable=True,
                focusable=True,
                action=action,
            )
        )
    return row


def text_field(
    box: Rect, rid: str, text: str, hint: str, *, focused: bool, size: int = 42, desc: str = ""
) -> SimulatedView | None:
    """An EditText; like Android, an empty field reports its hint as its text."""
    return view(
        "android.widget.EditText",
        box,
        paint=Paint(kind="edit", bg=FIELD, size=size, radius=(box[3] - box[1]) // 2, pad=40, label=hint),
        text=text or hint,
        resource_id=rid,
        content_desc=desc,
        clickable=True,
        focusable=True,
        focused=focused,
        long_clickable=True,
        action=f"focus:{rid}",
    )
