"""Settings: the main list, Network & internet (Wi-Fi), Connected devices (Bluetooth), About phone."""

from __future__ import annotations

from .. import apps
from ..contract import AndroidPhone, Screen
from ..ui import SimulatedView
from .registry import screen_layout
from .widgets import app_window, list_row, page_title


@screen_layout("settings/main", title="Settings")
@screen_layout("settings/network", title="Network & internet")
@screen_layout("settings/connected", title="Connected devices")
@screen_layout("settings/about", title="About phone")
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
