"""The corpus's screens (``DUMPS``), each written here with ``shapes``: see shapes.py for what they cover."""

from __future__ import annotations

from phone_agent.adb.ui_dump import MAX_TREE_NODES
from tests.ui_corpus.shapes import (
    GBOARD,
    NNBSP,
    SETTINGS_ROWS,
    STATUS,
    Dump,
    N,
    app_window,
    gesture_strip,
    n,
    nav_bar,
    render,
    settings_rows,
    status_bar,
)

SETTINGS = "com.android.settings"


def settings(width: int, height: int, *, order: str, style: str = "u2", rows: int = 10) -> Dump:
    """Settings' list with the system bars, the windows in the ``order`` given (s: status, a: app,
    n: navigation bar, g: gesture strip)."""
    nav_top = height - 126
    app = app_window(
        SETTINGS,
        (0, 0, width, height),
        n("TextView", (60, 150, width - 60, 260), text="Settings", rid=f"{SETTINGS}:id/collapsing_toolbar"),
        n("ImageButton", (width - 160, 160, width - 40, 260), desc="Search settings", clickable=True),
        settings_rows(width, 300, SETTINGS_ROWS[:rows], SETTINGS, switch_at=frozenset({2, 5})),
    )
    parts = {
        "s": status_bar(width, 80, f"3:17{NNBSP}PM"),
        "a": app,
        "n": nav_bar(width, nav_top, height),
        "g": gesture_strip(width, height),
    }
    kinds = {"s": "system", "a": "app", "n": "system", "g": "system"}
    return Dump(
        f"settings-{width}x{height}-{order}",
        render([parts[key] for key in order], style=style),
        width,
        height,
        tuple(kinds[key] for key in order),
        ("3:17 PM", "Connected devices", "Bluetooth, pairing"),
    )


def landscape() -> Dump:
    width, height = 2400, 1080
    app = app_window(
        "com.example.maps",
        (0, 0, width, height),
        n(
            "EditText",
            (120, 60, 1200, 180),
            text="Search here",
            rid="com.example.maps:id/search_omnibox",
            clickable=True,
            focusable=True,
        ),
        n("ImageButton", (2200, 800, 2330, 930), desc="Directions", clickable=True),
        n("View", (0, 0, 2274, 1080), desc="Map", clickable=True, long_clickable=True),
    )
    nav = n(
        "FrameLayout",
        (2274, 0, 2400, 1080),
        *[
            n("ImageView", (2274, y, 2400, y + 300), desc=label, clickable=True, rid=f"{STATUS}:id/{rid}")
            for y, (rid, label) in zip(
                (90, 390, 690), (("recent_apps", "Overview"), ("home", "Home"), ("back", "Back")), strict=True
            )
        ],
        pkg=STATUS,
    )
    strip = n(
        "FrameLayout", (0, 0, width, 60), n("TextView", (30, 5, 160, 55), text=f"11:05{NNBSP}AM"), pkg=STATUS
    )
    return Dump(
        "maps-landscape",
        render([strip, nav, app], rotation=1),
        width,
        height,
        ("system", "system", "app"),
        ("11:05 AM", "Search here"),
    )


def keyboard_up() -> Dump:
    width, height = 1080, 2400
    pkg = "com.example.chat"
    app = app_window(
        pkg,
        (0, 0, width, height),
        n("TextView", (40, 120, 1040, 220), text="Léa Dupont", rid=f"{pkg}:id/toolbar_title"),
        n("TextView", (300, 1000, 1040, 1100), text="À demain 👋", rid=f"{pkg}:id/message_text"),
        n("TextView", (300, 1100, 1040, 1150), text=f"3:17{NNBSP}PM", rid=f"{pkg}:id/message_time"),
        n(
            "EditText",
            (40, 1300, 900, 1400),
            text="",
            rid=f"{pkg}:id/compose",
            clickable=True,
            focusable=True,
            focused=True,
            hint="Message",
        ),
        n("ImageButton", (920, 1300, 1040, 1400), desc="Send", rid=f"{pkg}:id/send", clickable=True),
    )
    keys = [
        n("Button", (x * 108, 1700, x * 108 + 108, 1850), desc=letter, clickable=True)
        for x, letter in enumerate("qwertyuiop")
    ]
    ime = n(
        "FrameLayout",
        (0, 1440, width, 2274),
        n("FrameLayout", (0, 1440, width, 2274), *keys, rid=f"{GBOARD}:id/keyboard_holder"),
        pkg=GBOARD,
    )
    return Dump(
        "chat-keyboard",
        render([app, ime, status_bar(width), nav_bar(width, 2274, height)]),
        width,
        height,
        ("app", "keyboard", "system", "system"),
        ("À demain 👋", "3:17 PM"),
    )


def permission_dialog() -> Dump:
    width, height = 1080, 2340
    app = app_window(
        "com.example.camera", (0, 0, width, height), n("TextView", (40, 200, 1040, 300), text="Camera")
    )
    pc = "com.google.android.permissioncontroller"
    dialog = n(
        "FrameLayout",
        (63, 830, 1017, 1560),
        n(
            "TextView",
            (120, 900, 960, 1050),
            text="Allow Camera to take pictures and record video?",
            rid=f"{pc}:id/permission_message",
        ),
        n(
            "Button",
            (120, 1150, 960, 1270),
            text="While using the app",
            rid=f"{pc}:id/permission_allow_foreground_only_button",
            clickable=True,
        ),
        n(
            "Button",
            (120, 1280, 960, 1400),
            text="Only this time",
            rid=f"{pc}:id/permission_allow_one_time_button",
            clickable=True,
        ),
        n(
            "Button",
            (120, 1410, 960, 1530),
            text="Don’t allow",
            rid=f"{pc}:id/permission_deny_button",
            clickable=True,
        ),
        pkg=pc,
    )
    return Dump(
        "permission-dialog",
        render([status_bar(width), app, dialog, nav_bar(width, 2214, height)]),
        width,
        height,
        ("system", "app", "dialog", "system"),
        ("Don’t allow", "Only this time"),
    )


def messages_list(width: int = 720, height: int = 1600) -> Dump:
    """Conversation rows: a clickable row with no text, an avatar with no label, a name, a snippet and
    a time (the same ids in every row, some names repeated)."""
    pkg = "com.google.android.apps.messaging"
    names = ["Маша", "王小明", "أحمد", "Maša", "Team 🚀", "Маша", "田中さん", "+1 650-555-0100"]
    rows = []
    for i, name in enumerate(names):
        y = 200 + i * 160
        rows.append(
            n(
                "LinearLayout",
                (0, y, width, y + 160),
                n("ImageView", (24, y + 30, 124, y + 130), rid=f"{pkg}:id/conversation_icon", clickable=True),
                n("TextView", (150, y + 20, 560, y + 70), text=name, rid=f"{pkg}:id/conversation_name"),
                n(
                    "TextView",
                    (150, y + 80, 560, y + 130),
                    text=f"\u2068{name}\u2069: ok",
                    rid=f"{pkg}:id/conversation_snippet",
                ),
                n(
                    "TextView",
                    (580, y + 20, 700, y + 70),
                    text=f"{1 + i}:0{i}{NNBSP}PM",
                    rid=f"{pkg}:id/conversation_timestamp",
                ),
                rid=f"{pkg}:id/swipeableContainer",
                clickable=True,
                long_clickable=True,
            )
        )
    app = app_window(
        pkg,
        (0, 0, width, height),
        n("TextView", (30, 80, 690, 180), text="Messages"),
        n(
            "androidx.recyclerview.widget.RecyclerView",
            (0, 200, width, 1480),
            *rows,
            rid=f"{pkg}:id/conversation_list",
            scrollable=True,
        ),
        n(
            "Button",
            (400, 1380, 690, 1460),
            text="Start chat",
            rid=f"{pkg}:id/start_chat_fab",
            clickable=True,
        ),
    )
    return Dump(
        "messages-rows",
        render([app, status_bar(width, 48), nav_bar(width, 1500, height)], style="u2"),
        width,
        height,
        ("app", "system", "system"),
        ("Маша", "王小明", "1:00 PM"),
    )


def webview_login() -> Dump:
    width, height = 1440, 3120
    pkg = "com.android.chrome"
    web = n(
        "android.webkit.WebView",
        (0, 300, width, 2900),
        n(
            "android.view.View",
            (0, 300, width, 2900),
            n("android.view.View", (100, 400, 1340, 520), text="Sign in"),
            n(
                "EditText",
                (100, 600, 1340, 740),
                text="",
                rid="username",
                clickable=True,
                focusable=True,
                hint="Email",
            ),
            n(
                "EditText",
                (100, 800, 1340, 940),
                text="••••••••",
                rid="password",
                clickable=True,
                password=True,
            ),
            n("android.view.View", (100, 1000, 600, 1080), text="Forgot password?", clickable=True),
            n("Button", (100, 1150, 1340, 1290), text="Sign in", clickable=True),
            n("android.view.View", (100, 1400, 1340, 1480), text="Create account", clickable=True),
            n("android.view.View", (100, 1600, 400, 1700), clickable=True),
        ),  # a link with no text
        desc="Login – Example",
        focusable=True,
        scrollable=True,
    )
    app = app_window(
        pkg,
        (0, 0, width, height),
        n(
            "EditText",
            (200, 150, 1240, 280),
            text="example.com/login",
            rid=f"{pkg}:id/url_bar",
            clickable=True,
        ),
        n(
            "ImageButton",
            (1260, 150, 1400, 280),
            desc="Customize and control Google Chrome",
            rid=f"{pkg}:id/menu_button",
            clickable=True,
        ),
        web,
    )
    return Dump(
        "webview-login",
        render([status_bar(width, 120), app, gesture_strip(width, height)]),
        width,
        height,
        ("system", "app", "system"),
        ("Forgot password?", "Create account"),
    )


def naf_and_odd() -> Dump:
    """NAF nodes, an index that is not a number, missing and broken bounds, extra attributes, a missing
    flag, and a wrapper element around the windows."""
    width, height = 1080, 1920
    pkg = "com.example.odd"
    app = app_window(
        pkg,
        (0, 0, width, height),
        n("ImageView", (20, 100, 140, 220), clickable=True, NAF="true"),
        n("ImageView", (160, 100, 280, 220), clickable=True, NAF="true", index="x"),
        n("TextView", (20, 300, 1060, 380), text="Odd   spacing\u00a0here ", index="1.0"),
        n("TextView", (20, 400, 1060, 480), text="No bounds", bounds="omit"),
        n("TextView", (20, 500, 1060, 580), text="Broken bounds", bounds="[20,500][1060]"),
        n("Button", (20, 600, 1060, 700), text="Enabled missing", clickable=True, enabled="omit"),
        n(
            "CheckBox",
            (20, 720, 1060, 820),
            text="Remember me",
            checkable=True,
            checked=True,
            clickable=True,
            tooltip="extra",
        ),
        n("TextView", (20, 840, 1060, 920), text="Zero\u200bwidth \u200fmarks\u200e"),
        n("Button", (-200, 950, 300, 1050), text="Half off screen", clickable=True),
        n("Button", (20, 2000, 1060, 2100), text="Below the screen", clickable=True),
    )
    return Dump(
        "odd-attributes",
        render([app], wrapper="window"),
        width,
        height,
        ("app",),
        ("Odd spacing here", "Zerowidth marks", "Remember me", "Half off screen"),
    )


def compose_grid() -> Dump:
    """A Compose screen: clickable Views with text only in their children, a grid of tiles with the same
    ids and repeated labels, and icon buttons with descriptions only."""
    width, height = 1080, 2400
    pkg = "com.example.shop"
    tiles = []
    for i in range(12):
        x, y = (i % 2) * 540, 400 + (i // 2) * 300
        label = ["Shoes", "Shirts", "Shoes", "Hats"][i % 4]
        tiles.append(
            n(
                "android.view.View",
                (x, y, x + 540, y + 300),
                n("android.view.View", (x + 20, y + 20, x + 520, y + 200), rid="tile_image"),
                n("TextView", (x + 20, y + 210, x + 520, y + 280), text=label),
                clickable=True,
                rid="tile",
            )
        )
    app = app_window(
        pkg,
        (0, 0, width, height),
        n(
            "android.view.View",
            (0, 100, width, 300),
            n("android.view.View", (20, 130, 160, 270), desc="Menu", clickable=True),
            n("TextView", (200, 150, 880, 250), text="Shop"),
            n("android.view.View", (920, 130, 1060, 270), desc="Cart, 2 items", clickable=True),
        ),
        n("android.view.View", (0, 400, width, 2200), *tiles, scrollable=True),
    )
    return Dump(
        "compose-grid",
        render([status_bar(width), app, nav_bar(width, 2274, height)]),
        width,
        height,
        ("system", "app", "system"),
        ("Shoes", "Hats"),
    )


def notification_shade() -> Dump:
    width, height = 1080, 2400
    rows = [
        n(
            "FrameLayout",
            (24, 600 + i * 240, 1056, 820 + i * 240),
            n("TextView", (200, 620 + i * 240, 1000, 680 + i * 240), text=app_name),
            n("TextView", (200, 690 + i * 240, 1000, 780 + i * 240), text=body),
            clickable=True,
            long_clickable=True,
            rid=f"{STATUS}:id/expandableNotificationRow",
        )
        for i, (app_name, body) in enumerate(
            [
                ("Gmail", "Your order has shipped"),
                ("Gmail", "Welcome!"),
                ("Calendar", f"Stand-up at 10:00{NNBSP}AM"),
            ]
        )
    ]
    shade = n(
        "FrameLayout",
        (0, 0, width, height),
        n(
            "ScrollView",
            (0, 0, width, 560),
            *[
                n(
                    "Switch",
                    (40 + i * 250, 200, 270 + i * 250, 420),
                    desc=tile,
                    checkable=True,
                    clickable=True,
                )
                for i, tile in enumerate(("Internet", "Bluetooth", "Do Not Disturb", "Flashlight"))
            ],
        ),
        *rows,
        pkg=STATUS,
        rid=f"{STATUS}:id/notification_panel",
    )
    return Dump(
        "notification-shade",
        render([shade]),
        width,
        height,
        ("system",),
        ("Your order has shipped", "Stand-up at 10:00 AM"),
    )


def single_window_dump() -> Dump:
    """An older phone's ``uiautomator dump``: one window, its root the whole screen."""
    width, height = 720, 1280
    app = app_window(
        "com.android.settings",
        (0, 0, width, height),
        settings_rows(width, 150, SETTINGS_ROWS[:5], "com.android.settings"),
    )
    return Dump(
        "single-window-720x1280", render([app], style="dump"), width, height, ("app",), ("Apps", "Battery")
    )


def tablet_split() -> Dump:
    """Two apps side by side on a tablet, the taskbar at the bottom."""
    width, height = 2560, 1600
    left = app_window(
        "com.example.notes",
        (0, 0, 1276, 1520),
        n("TextView", (40, 100, 1200, 200), text="Notes"),
        n("TextView", (40, 250, 1200, 330), text="Shopping list", clickable=True),
    )
    right = app_window(
        "com.android.chrome",
        (1284, 0, 2560, 1520),
        n("TextView", (1320, 100, 2500, 200), text="Shopping list – Search", clickable=True),
    )
    taskbar = n(
        "FrameLayout",
        (0, 1520, width, 1600),
        *[
            n("ImageView", (900 + i * 160, 1525, 1040 + i * 160, 1595), desc=name, clickable=True)
            for i, name in enumerate(("Phone", "Messages", "Chrome", "Camera"))
        ],
        pkg="com.google.android.apps.nexuslauncher",
    )
    return Dump(
        "tablet-split",
        render([left, right, taskbar, status_bar(width, 48)]),
        width,
        height,
        ("app", "app", "system", "system"),
        ("Shopping list",),
    )


def deep(levels: int) -> Dump:
    node = n("TextView", (0, 0, 100, 100), text="Bottom", clickable=True)
    for _ in range(levels):
        node = n("FrameLayout", (0, 0, 1080, 2400), node)
    node.pkg = "com.example.deep"
    return Dump(f"deep-{levels}", render([node]), 1080, 2400, (), (), partial=levels >= 500)


def wide(count: int) -> Dump:
    children = [
        n("TextView", (0, 100 + i % 2000, 1080, 101 + i % 2000), text=f"Row {i}", clickable=True)
        for i in range(count)
    ]
    root = n("FrameLayout", (0, 0, 1080, 2400), *children, pkg="com.example.wide")
    return Dump(f"wide-{count}", render([root]), 1080, 2400, (), (), partial=count >= MAX_TREE_NODES)


DUMPS: list[Dump] = [
    settings(1080, 2400, order="san"),
    settings(1080, 2400, order="nsa"),
    settings(1080, 2400, order="gas", style="dump"),
    settings(1440, 3120, order="sna"),
    settings(720, 1600, order="asn", rows=6),
    settings(1080, 1920, order="nas", style="dump"),
    settings(1600, 2560, order="sga"),
    settings(2208, 1840, order="sag", rows=8),
    landscape(),
    keyboard_up(),
    permission_dialog(),
    messages_list(),
    messages_list(1080, 2400),
    webview_login(),
    naf_and_odd(),
    compose_grid(),
    notification_shade(),
    single_window_dump(),
    tablet_split(),
    deep(300),
    wide(600),
]
HOSTILE: list[Dump] = [deep(10_000), deep(100_000), wide(50_000), wide(100_000)]
__all__ = ["DUMPS", "HOSTILE", "Dump", "N"]
