"""Screen layouts: build the node tree of whatever the phone shows now.

Every screen is laid out in absolute pixels of a 1080x2400 display: a status
bar (0-110), the app's content, and the three-button navigation bar
(2274-2400). The tree built here is drawn by render.py, hit-tested by taps and
dumped by `uiautomator dump`, so all three agree by construction.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from . import apps
from .data import CATALOG_ITEMS
from .fonts import ellipsize, line_height, text_width, wrap
from .props import SCREEN_HEIGHT, SCREEN_WIDTH
from .ui import Color, Paint, Rect, SimulatedView, intersect

if TYPE_CHECKING:
    from .phone import VirtualPhone

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

ITEM_H = 200
CATALOG_VIEW: Rect = (0, 340, W, NAV_Y)
COMPOSE_ID = "com.google.android.apps.messaging:id/compose_message_text"
URL_BAR_ID = "com.android.chrome:id/url_bar"
DARK_SCREENS = {"home", "recents", "camera/main"}


@dataclass
class Screen:
    """One activity instance on a task's back stack."""

    name: str
    arg: str = ""
    focus: str | None = None  # resource-id of the focused text field


def catalog_max_scroll() -> int:
    return max(0, len(CATALOG_ITEMS) * ITEM_H - (CATALOG_VIEW[3] - CATALOG_VIEW[1]))


def screen_title(screen: Screen) -> str:
    """The title a screen shows (used by recents cards too)."""
    titles = {
        "settings/main": "Settings",
        "settings/network": "Network & internet",
        "settings/connected": "Connected devices",
        "settings/about": "About phone",
        "messages/list": "Messages",
        "catalog/list": "Catalog",
        "clock/main": "Clock",
        "camera/main": "Camera",
    }
    if screen.name == "messages/thread":
        return screen.arg
    if screen.name == "catalog/item":
        return f"Item {int(screen.arg):02d}"
    if screen.name == "browser/page":
        return (urlsplit(screen.arg).hostname or screen.arg) if screen.arg else "New tab"
    return titles.get(screen.name, screen.name)


# --- small constructors -------------------------------------------------------


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


# --- system bars ----------------------------------------------------------------


def status_bar(phone: VirtualPhone, dark: bool) -> SimulatedView:
    fg = WHITE if dark else TEXT
    bar = SimulatedView(
        cls="android.widget.FrameLayout",
        bounds=(0, 0, W, STATUS_H),
        package="com.android.systemui",
        resource_id="com.android.systemui:id/status_bar",
    )
    bar.add(label((50, 20, 260, 95), phone.clock_text(), size=42, fg=fg, rid="com.android.systemui:id/clock"))
    battery = f"{phone.battery}%"
    bar.add(
        view(
            "android.widget.ImageView",
            (985, 32, 1035, 82),
            paint=Paint(kind="battery", fg=fg),
            resource_id="com.android.systemui:id/battery",
            content_desc=f"Battery {phone.battery} percent.",
        )
    )
    bar.add(
        label(
            (860, 20, 975, 95),
            battery,
            size=38,
            fg=fg,
            align="right",
            rid="com.android.systemui:id/battery_percentage_view",
        )
    )
    x = 790
    if phone.wifi:
        bar.add(
            view(
                "android.widget.ImageView",
                (x, 30, x + 60, 86),
                paint=Paint(kind="wifi", fg=fg),
                resource_id="com.android.systemui:id/wifi_signal",
                content_desc="Wifi signal full.",
            )
        )
        x -= 70
    if phone.bluetooth:
        bar.add(
            view(
                "android.widget.ImageView",
                (x + 10, 30, x + 50, 86),
                paint=Paint(kind="bluetooth", fg=fg),
                resource_id="com.android.systemui:id/bluetooth",
                content_desc="Bluetooth on.",
            )
        )
    return bar


def nav_bar(dark: bool) -> SimulatedView:
    fg = WHITE if dark else (60, 60, 67)
    bar = SimulatedView(
        cls="android.widget.FrameLayout",
        bounds=(0, NAV_Y, W, H),
        package="com.android.systemui",
        resource_id="com.android.systemui:id/navigation_bar_frame",
        paint=Paint(bg=None if dark else (240, 240, 244)),
    )
    for x, name, desc in ((190, "back", "Back"), (460, "home", "Home"), (730, "recent_apps", "Overview")):
        bar.add(
            view(
                "android.widget.ImageView",
                (x, NAV_Y, x + 160, H),
                paint=Paint(kind=f"nav_{name}", fg=fg),
                resource_id=f"com.android.systemui:id/{name}",
                content_desc=desc,
                clickable=True,
                focusable=True,
                long_clickable=name != "back",
                action={"back": "back", "home": "home", "recent_apps": "recents"}[name],
            )
        )
    return bar


# --- the launcher ---------------------------------------------------------------------


def home_screen() -> SimulatedView:
    root = app_window(apps.LAUNCHER, WALLPAPER)
    root.paint = Paint(kind="wallpaper", bg=WALLPAPER)
    root.add(label((60, 220, 1020, 300), "Phone Agent Sim", size=60, fg=WHITE))
    root.add(label((60, 300, 1020, 360), "Pixel 7 - Android 14 (simulated)", size=36, fg=(200, 210, 225)))
    grid = view("android.view.ViewGroup", (0, 1380, W, 2040), resource_id=f"{apps.LAUNCHER}:id/workspace")
    assert grid is not None
    root.add(grid)
    for i, package in enumerate(apps.HOME_APPS):
        app = apps.APPS[package]
        x, top = (i % 4) * 270, 1400 + (i // 4) * 320
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


def recents_screen(phone: VirtualPhone) -> SimulatedView:
    root = app_window(apps.LAUNCHER, (45, 47, 52))
    tasks = [p for p in phone.recents if p in phone.tasks][:4]
    if not tasks:
        root.add(label((0, 1100, W, 1200), "No recent items", size=48, fg=WHITE, align="center"))
        return root
    for i, package in enumerate(tasks):
        app = apps.APPS[package]
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


# --- Settings -----------------------------------------------------------------------------


def settings_screen(phone: VirtualPhone, screen: Screen) -> SimulatedView:
    root = app_window(apps.SETTINGS)
    if screen.name == "settings/main":
        page_title(root, "Settings", sub_page=False)
        rows = [
            (
                "Network & internet",
                "Wi-Fi is on" if phone.wifi else "Wi-Fi is off",
                "settings/network",
                (26, 115, 232),
                "N",
            ),
            ("Connected devices", "Bluetooth, pairing", "settings/connected", (30, 142, 62), "B"),
            ("About phone", phone.props["ro.product.model"], "settings/about", (95, 99, 104), "i"),
        ]
        for i, (title, summary, target, color, glyph) in enumerate(rows):
            list_row(root, 360 + i * 220, title, summary, action=f"open:{target}", icon=color, glyph=glyph)
    elif screen.name == "settings/network":
        page_title(root, "Network & internet", sub_page=True)
        summary = "Connected to PhoneAgent-WiFi" if phone.wifi else "Off"
        list_row(root, 440, "Wi-Fi", summary, action="toggle:wifi", switch=phone.wifi)
    elif screen.name == "settings/connected":
        page_title(root, "Connected devices", sub_page=True)
        list_row(
            root,
            440,
            "Bluetooth",
            "On" if phone.bluetooth else "Off",
            action="toggle:bluetooth",
            switch=phone.bluetooth,
        )
    else:
        page_title(root, "About phone", sub_page=True)
        rows = [
            ("Device name", phone.props["ro.product.model"]),
            ("Model", phone.props["ro.product.model"]),
            ("Android version", phone.props["ro.build.version.release"]),
            ("Serial number", phone.serial),
            ("Build number", phone.props["ro.build.display.id"]),
        ]
        for i, (title, value) in enumerate(rows):
            list_row(root, 440 + i * 200, title, value, action=None, height=200)
    return root


# --- Messages -------------------------------------------------------------------------------

MSG = apps.MESSAGES


def avatar(box: Rect, name: str) -> SimulatedView | None:
    hue = sum(map(ord, name)) % 5
    colors = [(26, 115, 232), (30, 142, 62), (217, 48, 37), (161, 66, 244), (230, 124, 35)]
    return view(
        "android.widget.ImageView",
        box,
        paint=Paint(kind="circle", bg=colors[hue], fg=WHITE, size=52, label=name[:1]),
        resource_id=f"{MSG}:id/conversation_icon",
    )


def messages_list(phone: VirtualPhone) -> SimulatedView:
    root = app_window(MSG)
    page_title(root, "Messages", sub_page=False)
    for i, name in enumerate(phone.conversation_order):
        top = 340 + i * 220
        last = phone.conversations[name][-1] if phone.conversations[name] else None
        snippet = "" if last is None else ("You: " if last["from"] == "me" else "") + last["text"]
        row = view(
            "android.widget.LinearLayout",
            (0, top, W, top + 220),
            resource_id=f"{MSG}:id/swipeableContainer",
            clickable=True,
            focusable=True,
            long_clickable=True,
            action=f"conversation:{name}",
        )
        assert row is not None
        root.add(row)
        row.add(avatar((50, top + 50, 170, top + 170), name))
        row.add(
            label(
                (210, top + 45, 1020, top + 110), name, size=46, bold=True, rid=f"{MSG}:id/conversation_name"
            )
        )
        row.add(
            label(
                (210, top + 118, 1020, top + 172),
                ellipsize(snippet, 38, 810),
                size=38,
                fg=TEXT2,
                rid=f"{MSG}:id/conversation_snippet",
            )
        )
    return root


def messages_thread(phone: VirtualPhone, screen: Screen) -> SimulatedView:
    root = app_window(MSG)
    back_button(root)
    name = screen.arg
    root.add(avatar((170, 145, 270, 245), name))
    root.add(label((300, 140, 1020, 250), name, size=52, rid=f"{MSG}:id/conversation_title"))
    area = view(
        "androidx.recyclerview.widget.RecyclerView",
        (0, 290, W, 2080),
        resource_id=f"{MSG}:id/messages_list",
        paint=Paint(kind="divider_top", fg=DIVIDER),
    )
    assert area is not None
    root.add(area)
    bottom = 2060
    bubbles: list[SimulatedView] = []
    for message in reversed(phone.conversations.get(name, [])):
        lines = wrap(message["text"], 42, 700)
        width = max(text_width(line, 42) for line in lines) + 64
        height = len(lines) * line_height(42) + 44
        top = bottom - height
        if top < 310:
            break
        mine = message["from"] == "me"
        x1 = W - 40 - width if mine else 40
        node = view(
            "android.widget.TextView",
            (x1, top, x1 + width, bottom),
            paint=Paint(
                kind="bubble",
                bg=PRIMARY if mine else BUBBLE_THEM,
                fg=WHITE if mine else TEXT,
                size=42,
                radius=44,
                pad=32,
            ),
            text=message["text"],
            resource_id=f"{MSG}:id/message_text",
            long_clickable=True,
        )
        assert node is not None
        bubbles.append(node)
        bottom = top - 20
    for node in reversed(bubbles):
        area.add(node)
    draft = phone.drafts.get(name, "")
    root.add(
        text_field(
            (40, 2100, 880, 2240), COMPOSE_ID, draft, "Text message", focused=screen.focus == COMPOSE_ID
        )
    )
    root.add(
        view(
            "android.widget.ImageButton",
            (900, 2100, 1040, 2240),
            paint=Paint(kind="send", bg=PRIMARY if draft else (190, 196, 205), fg=WHITE),
            resource_id=f"{MSG}:id/send_message_button_icon",
            content_desc="Send SMS",
            clickable=True,
            enabled=bool(draft),
            focusable=True,
            action="send",
        )
    )
    return root


# --- Catalog ------------------------------------------------------------------------------------

CAT = apps.CATALOG


def catalog_list(phone: VirtualPhone) -> SimulatedView:
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


def catalog_item(screen: Screen) -> SimulatedView:
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


# --- Chrome, Clock, Camera ---------------------------------------------------------------------


def browser_page(phone: VirtualPhone, screen: Screen) -> SimulatedView:
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


def clock_screen(phone: VirtualPhone) -> SimulatedView:
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


def camera_screen() -> SimulatedView:
    root = app_window(apps.CAMERA, (0, 0, 0))
    root.add(label((0, 1100, W, 1180), "Camera preview is not available", size=44, fg=WHITE, align="center"))
    return root


def build(phone: VirtualPhone) -> list[SimulatedView]:
    """The windows on screen, bottom to top: the app (or launcher), status bar, nav bar."""
    screen = phone.top_screen()
    if phone.showing_recents:
        content, name = recents_screen(phone), "recents"
    elif screen is None:
        content, name = home_screen(), "home"
    else:
        name = screen.name
        if name.startswith("settings/"):
            content = settings_screen(phone, screen)
        elif name == "messages/list":
            content = messages_list(phone)
        elif name == "messages/thread":
            content = messages_thread(phone, screen)
        elif name == "catalog/list":
            content = catalog_list(phone)
        elif name == "catalog/item":
            content = catalog_item(screen)
        elif name == "browser/page":
            content = browser_page(phone, screen)
        elif name == "clock/main":
            content = clock_screen(phone)
        else:
            content = camera_screen()
    dark = name in DARK_SCREENS
    return [content, status_bar(phone, dark), nav_bar(dark)]


def screen_activity_of(package: str, screen: Screen) -> tuple[str, str]:
    """(package, activity) of a screen on a task, as dumpsys reports the focus."""
    app = apps.APPS[package]
    for activity, name in app.screens.items():
        if name == screen.name:
            return package, activity
    return package, app.main_activity
