"""The developer-loop screens: the Crash Demo app, the one screen every app installed from an APK
shows, the camera's zoom label, and the system's overlays — the "keeps stopping" dialog and the
notification shade (notifications, or quick settings)."""

from __future__ import annotations

import time

from .. import apps
from ..contract import AndroidPhone, Screen
from ..devloop_state import Notification
from ..ui import Paint, SimulatedView
from .registry import screen_layout
from .widgets import BG, PRIMARY, TEXT, TEXT2, WHITE, H, W, app_window, label, page_title, view

SYSTEM_UI = "com.android.systemui"


def _button(box: tuple[int, int, int, int], text: str, action: str, rid: str) -> SimulatedView | None:
    return view(
        "android.widget.Button",
        box,
        paint=Paint(kind="button", bg=PRIMARY, fg=WHITE, size=44, radius=60, align="center"),
        text=text,
        resource_id=rid,
        clickable=True,
        focusable=True,
        action=action,
    )


@screen_layout("crashdemo/main", title="Crash Demo")
def crash_demo_screen(phone: AndroidPhone, screen: Screen) -> SimulatedView:
    package = "com.phoneagent.crashdemo"
    root = app_window(package)
    page_title(root, "Crash Demo", sub_page=False)
    root.add(label((60, 360, 1020, 520), "Press the button to make this app crash.", size=44, fg=TEXT2))
    root.add(_button((240, 1000, 840, 1150), "Crash now", "dev.crash", f"{package}:id/crash_now"))
    return root


INSTALLED_APP_SCREEN = "apk/main"  # not in the registry: no built-in app's manifest names it


def installed_app_screen(phone: AndroidPhone, screen: Screen) -> SimulatedView:
    package = phone.current or ""
    app = getattr(phone, "apps", {}).get(package)
    name = app.label if app is not None else package
    root = app_window(package)
    page_title(root, name, sub_page=False)
    root.add(label((60, 360, 1020, 440), package, size=40, fg=TEXT2, rid=f"{package}:id/package"))
    installed = phone.dev.installed.get(package)  # type: ignore[attr-defined]
    if installed is not None:
        version = f"Version {installed.version_name} ({installed.version_code})"
        root.add(label((60, 450, 1020, 530), version, size=40, fg=TEXT2, rid=f"{package}:id/version"))
    return root


def zoom_label(phone: AndroidPhone) -> SimulatedView | None:
    """The camera's zoom (1.0x until a pinch changes it)."""
    zoom = phone.dev.zoom  # type: ignore[attr-defined]
    return label(
        (0, 1900, W, 1980),
        f"Zoom {zoom:.1f}x",
        size=44,
        fg=WHITE,
        align="center",
        rid=f"{apps.CAMERA}:id/zoom",
    )


def overlays(phone: AndroidPhone) -> tuple[list[SimulatedView], list[SimulatedView]]:
    """Windows over the app (the crash dialog) and over the system bars (the shade)."""
    dev = phone.dev  # type: ignore[attr-defined]
    below: list[SimulatedView] = []
    above: list[SimulatedView] = []
    if dev.dialog:
        scrim = SimulatedView(
            cls="android.widget.FrameLayout",
            bounds=(0, 0, W, H),
            package="android",
            paint=Paint(bg=(60, 60, 64)),
            action="dev.none",
        )
        card = view(
            "android.widget.LinearLayout",
            (90, 900, 990, 1500),
            paint=Paint(kind="card", bg=BG, radius=40),
            resource_id="android:id/parentPanel",
        )
        assert card is not None
        scrim.add(card)
        card.add(
            label(
                (150, 960, 930, 1060),
                f"{dev.dialog} keeps stopping",
                size=52,
                bold=True,
                rid="android:id/alertTitle",
            )
        )
        for i, (text, action) in enumerate((("App info", "dev.dialog"), ("Close app", "dev.dialog"))):
            top = 1120 + i * 160
            card.add(
                view(
                    "android.widget.Button",
                    (150, top, 930, top + 130),
                    paint=Paint(kind="text", fg=TEXT, size=44),
                    text=text,
                    resource_id="android:id/aerr_app_info" if i == 0 else "android:id/aerr_close",
                    clickable=True,
                    focusable=True,
                    action=action,
                )
            )
        below.append(scrim)
    if dev.shade:
        above.append(_shade(phone, dev))
    return below, above


def _shade(phone: AndroidPhone, dev: object) -> SimulatedView:
    """The notification shade: the clock, the quick tiles and, pulled half way, the notifications."""
    root = SimulatedView(
        cls="android.widget.FrameLayout",
        bounds=(0, 0, W, H),
        package=SYSTEM_UI,
        paint=Paint(bg=(32, 33, 36)),
        resource_id=f"{SYSTEM_UI}:id/notification_panel",
        action="dev.none",
    )
    root.add(label((50, 40, 500, 120), phone.clock_text(), size=56, fg=WHITE, rid=f"{SYSTEM_UI}:id/clock"))
    tiles = [
        ("Internet", phone.wifi),
        ("Bluetooth", phone.bluetooth),
        ("Do Not Disturb", False),
        ("Flashlight", False),
        ("Auto-rotate", True),
        ("Battery Saver", False),
    ]
    shown = tiles if dev.shade == "settings" else tiles[:4]  # type: ignore[attr-defined]
    for i, (name, on) in enumerate(shown):
        root.add(_tile(40 + (i % 2) * 510, 160 + (i // 2) * 170, name, on))
    if dev.shade == "settings":  # type: ignore[attr-defined]
        return root
    top = 160 + 2 * 170 + 40
    notes = list(reversed(dev.notifications))  # type: ignore[attr-defined]
    if not notes:
        root.add(label((0, top + 40, W, top + 120), "No notifications", size=44, fg=WHITE, align="center"))
    for note in notes[:8]:
        root.add(_notification_card(phone, note, top))
        top += 240
    return root


def _tile(x: int, top: int, name: str, on: bool) -> SimulatedView:
    """One quick setting of the shade, on or off."""
    tile = view(
        "android.widget.Switch",
        (x, top, x + 490, top + 150),
        paint=Paint(
            kind="button",
            bg=(138, 180, 248) if on else (60, 64, 67),
            fg=TEXT if on else WHITE,
            size=40,
            radius=50,
            align="center",
        ),
        text=name,
        content_desc=name,
        checkable=True,
        checked=on,
        clickable=True,
        resource_id=f"{SYSTEM_UI}:id/tile",
        action="dev.none",
    )
    assert tile is not None
    return tile


def _notification_card(phone: AndroidPhone, note: Notification, top: int) -> SimulatedView:
    """One notification in the shade: its app and age, its title and its text."""
    card = view(
        "android.widget.FrameLayout",
        (40, top, W - 40, top + 220),
        paint=Paint(kind="card", bg=(48, 49, 52), radius=36),
        resource_id=f"{SYSTEM_UI}:id/expandableNotificationRow",
        clickable=True,
        action="dev.none",
    )
    assert card is not None
    app = getattr(phone, "apps", {}).get(note.package)
    ago = max(0, int(time.time() - note.posted) // 60)
    app_line = f"{app.label if app else note.package} · {ago}m"
    card.add(label((80, top + 20, W - 80, top + 70), app_line, size=32, fg=(189, 193, 198)))
    title_box, text_box = (80, top + 75, W - 80, top + 140), (80, top + 140, W - 80, top + 205)
    card.add(label(title_box, note.title, size=44, bold=True, fg=WHITE, rid="android:id/title"))
    card.add(label(text_box, note.text, size=40, fg=(232, 234, 237), rid="android:id/text"))
    return card
