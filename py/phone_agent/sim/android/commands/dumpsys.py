"""`dumpsys`: window focus, activities, battery, Wi-Fi, Bluetooth, input method, display."""

from __future__ import annotations

import zlib

from ....device.shell_result import ShellResult
from .. import apps
from ..contract import AndroidPhone, FileStore
from ..props import DENSITY, SCREEN_HEIGHT, SCREEN_WIDTH
from ..screens.widgets import NAV_Y
from .base import fail, ok
from .devloop import dumpsys_dropbox, dumpsys_notification, dumpsys_package
from .system_services import dumpsys_location


def _hash(text: str) -> str:
    return f"{zlib.crc32(text.encode()):08x}"[1:]


def _focus_lines(phone: AndroidPhone) -> tuple[str, str]:
    package, activity = phone.focused_activity()
    task = zlib.crc32(package.encode()) % 90 + 10
    window = f"Window{{{_hash(package + activity)} u0 {package}/{activity}}}"
    record = (
        f"ActivityRecord{{{_hash(activity)} u0 {package}/{apps.short_activity(package, activity)} t{task}}}"
    )
    return window, record


# An app window's flags as WindowManager.LayoutParams prints them; SECURE is FLAG_SECURE.
APP_WINDOW_FLAGS = (
    "LAYOUT_IN_SCREEN LAYOUT_INSET_DECOR SPLIT_TOUCH HARDWARE_ACCELERATED DRAWS_SYSTEM_BAR_BACKGROUNDS"
)


def _app_windows(phone: AndroidPhone) -> list[str]:
    """The windows above the system bars, top first: the keyboard, the permission dialog, the app
    (each with its attributes, where FLAG_SECURE shows as ``SECURE`` in ``fl=``)."""
    out: list[str] = []
    number = 2
    package, activity = phone.focused_activity()
    if phone.keyboard_height():
        out += [
            f"  Window #{number} Window{{{_hash('ime')} u0 InputMethod}}:",
            "    mAttrs={(0,0)(fillxwrap) gr=BOTTOM CENTER_VERTICAL sim={adjust=pan} ty=INPUT_METHOD "
            "fmt=TRANSPARENT",
            "      fl=NOT_FOCUSABLE LAYOUT_IN_SCREEN SPLIT_TOUCH HARDWARE_ACCELERATED "
            "DRAWS_SYSTEM_BAR_BACKGROUNDS",
            "    isOnScreen=true isVisible=true",
        ]
        number += 1
    screen = phone.top_screen()
    owner = phone.current if screen is not None and not phone.showing_recents else None
    if owner is not None and screen is not None:
        if (package, activity) != apps.screen_activity_of(owner, screen):  # the dialog over the app
            out += [
                f"  Window #{number} Window{{{_hash(package + activity)} u0 {package}/{activity}}}:",
                "    mAttrs={(0,0)(wrapxwrap) sim={adjust=pan} ty=BASE_APPLICATION fmt=TRANSLUCENT",
                f"      fl=DIM_BEHIND {APP_WINDOW_FLAGS}",
                "    isOnScreen=true isVisible=true",
            ]
            number += 1
            package, activity = apps.screen_activity_of(owner, screen)
    secure = " SECURE" if getattr(phone, "secure_windows", list)() else ""
    out += [
        f"  Window #{number} Window{{{_hash(package + activity)} u0 {package}/{activity}}}:",
        "    mDisplayId=0 rootTaskId=12 mSession=Session{5f6a7b8 4321:u0a10123}"
        f" mClient=android.os.BinderProxy@{_hash(package)}",
        f"    mOwnerUid=10123 showForAllUsers=false package={package} appop=NONE",
        "    mAttrs={(0,0)(fillxfill) sim={adjust=resize forwardNavigation} ty=BASE_APPLICATION "
        "fmt=TRANSLUCENT wanim=0x10302fe",
        f"      fl={APP_WINDOW_FLAGS}{secure}",
        "    isOnScreen=true isVisible=true",
    ]
    return out


def _dumpsys_window(phone: AndroidPhone, section: str) -> str:
    window, record = _focus_lines(phone)
    out = []
    if section in ("", "windows", "w"):
        out += [
            "WINDOW MANAGER WINDOWS (dumpsys window windows)",
            f"  Window #0 Window{{{_hash('nav')} u0 NavigationBar0}}:",
            "    mDisplayId=0 rootTaskId=1 mSession=Session{1c2d3e4 1234:u0a10101}"
            " mClient=android.os.BinderProxy@a1b2c3",
            "    mOwnerUid=10101 showForAllUsers=true package=com.android.systemui appop=NONE",
            f"  Window #1 Window{{{_hash('status')} u0 StatusBar}}:",
            "    mDisplayId=0 rootTaskId=1 mSession=Session{1c2d3e4 1234:u0a10101}"
            " mClient=android.os.BinderProxy@d4e5f6",
            "    mOwnerUid=10101 showForAllUsers=true package=com.android.systemui appop=NONE",
            *_app_windows(phone),
            f"    mActivityRecord={record}",
            "",
        ]
    if section in ("", "displays", "d", "windows", "w"):
        out += [
            "WINDOW MANAGER DISPLAY CONTENTS (dumpsys window displays)",
            "  Display: mDisplayId=0 (organized) rootTasks=3",
            f"    init={SCREEN_WIDTH}x{SCREEN_HEIGHT} {DENSITY}dpi cur={SCREEN_WIDTH}x{SCREEN_HEIGHT}"
            f" app={SCREEN_WIDTH}x{NAV_Y} rng=1080x1017-2400x2337",
            "    deferred=false mLayoutNeeded=false mTouchExcludeRegion=SkRegion()",
            "",
        ]
    out += [
        "  mGlobalConfiguration={1.0 ?mcc?mnc [en_US] ldltr sw411dp w411dp h914dp 420dpi nrml long port"
        " finger -keyb/v/h -nav/h}",
        "  mHasPermanentDpad=false",
        "  mTopFocusedDisplayId=0",
        f"  mInputMethodWindow=Window{{{_hash('ime')} u0 InputMethod}}",
        f"  mCurrentFocus={window}",
        f"  mFocusedApp={record}",
    ]
    return "\n".join(out) + "\n"


def dumpsys(phone: AndroidPhone, args: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
    service = args[0] if args else ""
    section = args[1] if len(args) > 1 else ""
    if service == "window":
        return ok(_dumpsys_window(phone, section))
    if service == "activity":
        _, record = _focus_lines(phone)
        return ok(
            "ACTIVITY MANAGER ACTIVITIES (dumpsys activity activities)\n"
            "Display #0 (activities from top to bottom):\n"
            f"  mResumedActivity: {record}\n"
            f"  ResumedActivity: {record}\n"
            f"  mFocusedApp={record}\n"
        )
    if service == "battery":
        return ok(
            "Current Battery Service state:\n  AC powered: false\n  USB powered: true\n"
            "  Wireless powered: false\n"
            f"  status: 2\n  health: 2\n  present: true\n  level: {phone.battery}\n  scale: 100\n"
            "  voltage: 4123\n  temperature: 285\n  technology: Li-ion\n"
        )
    if service == "wifi":
        return ok("Wi-Fi is enabled\n" if phone.wifi else "Wi-Fi is disabled\n")
    if service == "bluetooth_manager":
        return ok(
            f"Bluetooth Status\n  enabled: {str(phone.bluetooth).lower()}\n"
            f"  state: {'ON' if phone.bluetooth else 'OFF'}\n"
        )
    if service == "input_method":
        shown = str(bool(phone.keyboard_height())).lower()
        return ok(f"Input Method Manager Service state:\n  mCurMethodId={phone.ime}\n  mInputShown={shown}\n")
    if service == "display":
        # The screen is drawn in portrait only; a rotation locked by settings is reported as Android
        # would (set_orientation's `settings put system user_rotation`).
        locked = phone.get_setting("system", "accelerometer_rotation") == "0"
        rotation = phone.get_setting("system", "user_rotation") if locked else "0"
        rotation = rotation if rotation in ("0", "1", "2", "3") else "0"
        return ok(
            '  mBaseDisplayInfo=DisplayInfo{"Built-in Screen", displayId 0, '
            f"real {SCREEN_WIDTH} x {SCREEN_HEIGHT}, "
            f"rotation {rotation}, state ON, density {DENSITY}}}\n"
        )
    if service in DEVLOOP_SERVICES:
        return DEVLOOP_SERVICES[service](phone, args[1:])
    if service in ("", "-l"):
        return ok("Currently running services:\n" + "".join(f"  {s}\n" for s in DUMPSYS_SERVICES))
    return fail(f"Can't find service: {service}\n", 0)


DEVLOOP_SERVICES = {
    "dropbox": dumpsys_dropbox,
    "location": dumpsys_location,
    "notification": dumpsys_notification,
    "package": dumpsys_package,
}
DUMPSYS_SERVICES = sorted(
    [
        "activity",
        "battery",
        "bluetooth_manager",
        "display",
        "input_method",
        "wifi",
        "window",
        *DEVLOOP_SERVICES,
    ]
)
