"""The packages installed on the simulated phone and their activities."""

from __future__ import annotations

from dataclasses import dataclass, field

from .contract import Screen
from .ui import Color

LAUNCHER = "com.google.android.apps.nexuslauncher"
LAUNCHER_ACTIVITY = "com.google.android.apps.nexuslauncher.NexusLauncherActivity"
SETTINGS = "com.android.settings"
MESSAGES = "com.google.android.apps.messaging"
CATALOG = "com.phoneagent.catalog"
CHROME = "com.android.chrome"
CLOCK = "com.google.android.deskclock"
CAMERA = "com.google.android.GoogleCamera"
ADB_KEYBOARD = "com.android.adbkeyboard"
ADB_KEYBOARD_IME = "com.android.adbkeyboard/.AdbIME"
GBOARD_IME = "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME"


@dataclass(frozen=True)
class App:
    """An installed package; `screens` maps its activities to screens of the UI."""

    package: str
    label: str
    main_activity: str = ""  # empty: no launcher icon
    third_party: bool = False
    color: Color = (90, 90, 90)
    glyph: str = ""
    screens: dict[str, str] = field(default_factory=dict)

    @property
    def launchable(self) -> bool:
        return bool(self.main_activity)


APPS: dict[str, App] = {
    app.package: app
    for app in [
        App(
            SETTINGS,
            "Settings",
            "com.android.settings.Settings",
            color=(66, 103, 178),
            glyph="S",
            screens={
                "com.android.settings.Settings": "settings/main",
                "com.android.settings.Settings$NetworkDashboardActivity": "settings/network",
                "com.android.settings.Settings$WifiSettingsActivity": "settings/network",
                "com.android.settings.Settings$ConnectedDeviceDashboardActivity": "settings/connected",
                "com.android.settings.Settings$BluetoothSettingsActivity": "settings/connected",
                "com.android.settings.Settings$MyDeviceInfoActivity": "settings/about",
                "com.android.settings.Settings$SecurityDashboardActivity": "settings/security",
                "com.android.settings.password.ConfirmLockPassword$InternalActivity": "settings/confirm_pin",
            },
        ),
        App(
            MESSAGES,
            "Messages",
            "com.google.android.apps.messaging.ui.ConversationListActivity",
            color=(26, 115, 232),
            glyph="M",
            screens={
                "com.google.android.apps.messaging.ui.ConversationListActivity": "messages/list",
                "com.google.android.apps.messaging.ui.conversation.ConversationActivity": "messages/thread",
            },
        ),
        App(
            CATALOG,
            "Catalog",
            "com.phoneagent.catalog.MainActivity",
            third_party=True,
            color=(230, 124, 35),
            glyph="C",
            screens={
                "com.phoneagent.catalog.MainActivity": "catalog/list",
                "com.phoneagent.catalog.ItemActivity": "catalog/item",
            },
        ),
        App(
            CHROME,
            "Chrome",
            "com.google.android.apps.chrome.Main",
            color=(52, 168, 83),
            glyph="G",
            screens={"com.google.android.apps.chrome.Main": "browser/page"},
        ),
        App(
            CLOCK,
            "Clock",
            "com.android.deskclock.DeskClock",
            color=(95, 99, 104),
            glyph="T",
            screens={"com.android.deskclock.DeskClock": "clock/main"},
        ),
        App(
            CAMERA,
            "Camera",
            "com.android.camera.CameraLauncher",
            color=(217, 48, 37),
            glyph="O",
            screens={"com.android.camera.CameraLauncher": "camera/main"},
        ),
        App(ADB_KEYBOARD, "ADB Keyboard", third_party=True),
        App("ca.zgrs.clipper", "Clipper", third_party=True),
        App(LAUNCHER, "Pixel Launcher"),
        App("com.android.systemui", "System UI"),
        App("com.google.android.inputmethod.latin", "Gboard"),
        App("com.android.shell", "Shell"),
        App("com.android.providers.settings", "Settings Storage"),
        App("com.android.phone", "Phone Services"),
        App("com.android.bluetooth", "Bluetooth"),
        App("android", "Android System"),
    ]
}

HOME_APPS = [SETTINGS, MESSAGES, CATALOG, CHROME, CLOCK, CAMERA]


def short_activity(package: str, activity: str) -> str:
    """`.Settings` for an activity inside its package, as Android prints it."""
    return activity[len(package) :] if activity.startswith(package + ".") else activity


def screen_activity_of(package: str, screen: Screen) -> tuple[str, str]:
    """(package, activity) of a screen on a task, as dumpsys reports the focus."""
    app = APPS[package]
    for activity, name in app.screens.items():
        if name == screen.name:
            return package, activity
    return package, app.main_activity
