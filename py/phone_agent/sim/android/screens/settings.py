"""Settings: the main list, Network & internet (Wi-Fi), Connected devices (Bluetooth), About phone,
Security & privacy, and the screen lock's "Re-enter your PIN" (a FLAG_SECURE window, as Android's
ConfirmLockPassword is)."""

from __future__ import annotations

from .. import apps
from ..contract import AndroidPhone, Screen
from ..ui import Paint, SimulatedView
from .registry import screen_layout
from .widgets import (
    NAV_Y,
    PRIMARY,
    TEXT2,
    WHITE,
    W,
    app_window,
    label,
    list_row,
    page_title,
    text_field,
    view,
)

PIN_FIELD_ID = "com.android.settings:id/password_entry"


@screen_layout("settings/main", title="Settings")
@screen_layout("settings/network", title="Network & internet")
@screen_layout("settings/connected", title="Connected devices")
@screen_layout("settings/about", title="About phone")
@screen_layout("settings/security", title="Security & privacy")
def settings_screen(phone: AndroidPhone, screen: Screen) -> SimulatedView:
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
            ("Security & privacy", "Screen lock, app security", "settings/security", (52, 168, 83), "L"),
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
    elif screen.name == "settings/security":
        page_title(root, "Security & privacy", sub_page=True)
        list_row(root, 440, "Screen lock", "PIN", action="open:settings/confirm_pin")
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


@screen_layout("settings/confirm_pin", title="Screen lock", secure=True)
def confirm_pin_screen(phone: AndroidPhone, screen: Screen) -> SimulatedView:
    """ConfirmLockPassword: the PIN field in the middle, Cancel and Next at the bottom (under the
    keyboard once it is up: the window does not resize)."""
    root = app_window(apps.SETTINGS)
    root.add(
        label(
            (60, 420, 1020, 540), "Re-enter your PIN", size=64, rid="com.android.settings:id/sud_layout_title"
        )
    )
    root.add(
        label(
            (60, 560, 1020, 640),
            "Enter your PIN to continue",
            size=40,
            fg=TEXT2,
            rid="com.android.settings:id/sud_layout_description",
        )
    )
    dots = "•" * len(phone.drafts.get(PIN_FIELD_ID, ""))  # a password field shows (and reports) dots
    field = text_field((140, 900, 940, 1040), PIN_FIELD_ID, dots, "PIN", focused=screen.focus == PIN_FIELD_ID)
    if field is not None:
        field.password = True
        root.add(field)
    bottom = NAV_Y - 40
    for rid, text, x1, x2, action in (
        ("cancel_button", "Cancel", 40, 400, "back"),
        ("next_button", "Next", W - 400, W - 40, "back"),
    ):
        root.add(
            view(
                "android.widget.Button",
                (x1, bottom - 130, x2, bottom),
                paint=Paint(
                    kind="button",
                    bg=PRIMARY if rid == "next_button" else None,
                    fg=WHITE if rid == "next_button" else PRIMARY,
                    size=42,
                    radius=65,
                    align="center",
                ),
                text=text,
                resource_id=f"com.android.settings:id/{rid}",
                clickable=True,
                focusable=True,
                action=action,
            )
        )
    return root
