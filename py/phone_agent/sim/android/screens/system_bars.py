"""The system bars over every screen: the status bar (clock, Wi-Fi, Bluetooth, battery) and the
three-button navigation bar."""

from __future__ import annotations

from ..contract import AndroidPhone
from ..fonts import missing_fonts
from ..ui import Paint, SimulatedView
from .widgets import NAV_Y, STATUS_H, TEXT, WHITE, H, W, label, view


def status_bar(phone: AndroidPhone, dark: bool) -> SimulatedView:
    fg = WHITE if dark else TEXT
    bar = SimulatedView(
        cls="android.widget.FrameLayout",
        bounds=(0, 0, W, STATUS_H),
        package="com.android.systemui",
        resource_id="com.android.systemui:id/status_bar",
    )
    bar.add(label((50, 20, 260, 95), phone.clock_text(), size=42, fg=fg, rid="com.android.systemui:id/clock"))
    missing = missing_fonts()
    if missing:  # what it cannot draw shows as boxes: say so where a person looks
        bar.add(
            view(
                "android.widget.TextView",
                (270, 20, 700, 95),
                paint=Paint(kind="text", fg=fg, size=30),
                text="Fonts missing: run scripts/setup",
                resource_id="com.android.systemui:id/font_notice",
                content_desc=f"Text in these scripts draws as boxes: {'; '.join(missing)}.",
            )
        )
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
