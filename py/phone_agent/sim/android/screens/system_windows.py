"""The system's windows over an app on the realistic phone: the soft keyboard (the IME window) and the
runtime permission dialog (the permission controller's GrantPermissionsActivity).

The keyboard covers the lower ~40 % of the screen above the navigation bar, as Gboard does on a Pixel;
its keys are drawn, not nodes (Gboard exposes none to uiautomator), and a touch on it never reaches the
app below. The dialog dims the app and asks as Android 14 asks for the camera.
"""

from __future__ import annotations

from .. import apps
from ..contract import AndroidPhone
from ..ui import Paint, SimulatedView
from .widgets import NAV_Y, TEXT, TEXT2, H, W, label, view

GBOARD = "com.google.android.inputmethod.latin"
IME_HEIGHT = 850  # with the navigation bar below it: the lower 40 % of a 2400-pixel screen
ADB_KEYBOARD_HEIGHT = 160  # ADBKeyBoard's own window: one line saying it is on
PERMISSION_PACKAGE = "com.google.android.permissioncontroller"
PERMISSION_ACTIVITY = "com.android.permissioncontroller.permission.ui.GrantPermissionsActivity"
PERMISSION_IDS = "com.android.permissioncontroller:id"  # the resources keep the AOSP package's name
# The one app that asks on its first launch, and what it asks for.
ASKING_APP = apps.CAMERA
PERMISSION_QUESTION = "Allow Camera to take pictures and record video?"
PERMISSION_BUTTONS = (
    ("permission_allow_foreground_only_button", "While using the app", "permission:granted"),
    ("permission_allow_one_time_button", "Only this time", "permission:once"),
    ("permission_deny_button", "Don't allow", "permission:denied"),
)


def ime_height(ime: str, fraction: float = 1.0) -> int:
    """How many pixels above the navigation bar the keyboard ``ime`` covers, ``fraction`` slid in."""
    full = ADB_KEYBOARD_HEIGHT if ime.startswith(apps.ADB_KEYBOARD) else IME_HEIGHT
    return round(full * fraction)


def ime_window(phone: AndroidPhone, height: int) -> SimulatedView:
    """The input method's window, ``height`` pixels tall, sitting on the navigation bar."""
    top = NAV_Y - height
    if phone.ime.startswith(apps.ADB_KEYBOARD):
        root = SimulatedView(
            cls="android.widget.FrameLayout",
            bounds=(0, top, W, NAV_Y),
            package=apps.ADB_KEYBOARD,
            paint=Paint(bg=(48, 48, 52)),
            action="ime",
        )
        root.add(label((0, top, W, NAV_Y), "ADB Keyboard {ON}", size=40, fg=(255, 255, 255), align="center"))
        return root
    root = SimulatedView(
        cls="android.widget.FrameLayout",
        bounds=(0, top, W, NAV_Y),
        package=GBOARD,
        resource_id=f"{GBOARD}:id/keyboard_holder",
        action="ime",  # a touch on the keyboard is the keyboard's
    )
    root.add(
        view(
            "android.view.View",
            (0, top, W, NAV_Y),
            paint=Paint(kind="keyboard", bg=(232, 234, 237), fg=TEXT, size=44),
            resource_id=f"{GBOARD}:id/keyboard_view",
            content_desc="Keyboard",
        )
    )
    return root


def permission_dialog(phone: AndroidPhone) -> SimulatedView:
    """The permission controller's dialog over the dimmed app."""
    root = SimulatedView(
        cls="android.widget.FrameLayout",
        bounds=(0, 0, W, H),
        package=PERMISSION_PACKAGE,
        paint=Paint(kind="scrim"),
        action="ime",  # outside the dialog a touch does nothing (the dialog is modal)
    )
    top, bottom = 760, 1640
    card = view(
        "android.widget.LinearLayout",
        (60, top, W - 60, bottom),
        paint=Paint(bg=(243, 237, 247), radius=56),
        resource_id=f"{PERMISSION_IDS}/grant_dialog",
    )
    assert card is not None
    root.add(card)
    card.add(
        view(
            "android.widget.ImageView",
            (W // 2 - 50, top + 60, W // 2 + 50, top + 160),
            paint=Paint(kind="circle", bg=(217, 48, 37), fg=(255, 255, 255), size=48, label="O"),
            resource_id=f"{PERMISSION_IDS}/permission_icon",
        )
    )
    question = label(
        (120, top + 190, W - 120, top + 380),
        PERMISSION_QUESTION,
        size=48,
        fg=TEXT,
        align="center",
        rid=f"{PERMISSION_IDS}/permission_message",
        kind="multiline",
    )
    card.add(question)
    y = top + 440
    for rid, text, action in PERMISSION_BUTTONS:
        card.add(
            view(
                "android.widget.Button",
                (120, y, W - 120, y + 130),
                paint=Paint(kind="button", bg=(232, 222, 248), fg=TEXT2, size=42, radius=65, align="center"),
                text=text,
                resource_id=f"{PERMISSION_IDS}/{rid}",
                clickable=True,
                focusable=True,
                action=action,
            )
        )
        y += 145
    return root
