"""VirtualPhone: the state of the simulated Android phone and the entry point
through which the device-side shell runs Android commands on it.

The phone is a launcher plus one task (back stack of screens) per started app,
like Android's activity manager: HOME shows the launcher and keeps the tasks,
BACK pops the current task and leaves the app at its root, recents lists the
tasks most recent first. Every change bumps `version`; the node tree, the
image and its encodings are cached per (version, clock) so screenshots taken
in a loop cost nothing while the screen stays the same.
"""

from __future__ import annotations

import contextlib
import copy
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any
from urllib.parse import quote_plus, urlsplit

from PIL import Image

from ...device.shell_result import ShellResult
from . import apps, commands, render, screens
from .commands.system_services import SystemServices
from .contract import FileStore, Screen
from .data import CONTACTS, INITIAL_MESSAGES
from .devloop_state import DevState
from .motion import Motion
from .props import device_props
from .screens import COMPOSE_ID, URL_BAR_ID, system_windows
from .settings_provider import SettingsProvider
from .system_ui import SystemWindows
from .ui import SimulatedView, find_scrollable, hit_test

if TYPE_CHECKING:
    from ..realistic import RealisticProfile

log = logging.getLogger(__name__)

TOUCH_SLOP = 24  # pixels a finger may move and still tap
LONG_PRESS_MS = 500


def _utc_clock() -> str:
    return time.strftime("%H:%M", time.gmtime())


class VirtualPhone(SystemWindows, SettingsProvider):
    """A small Android 14 phone: settings, apps, screens and a screen stack."""

    def __init__(self, *, serial: str = "PHAGSIM0001", realistic: RealisticProfile | None = None) -> None:
        self.serial = serial
        # --realistic: a real phone's costs, animations, keyboard, dialog (motion.py); None: instant.
        self.motion: Motion | None = Motion(self, realistic) if realistic is not None else None
        self.props: dict[str, str] = device_props(serial)
        self.clock: Callable[[], str] = _utc_clock  # tests may pin the status-bar time
        # A hostile phone (tests): the UI dump it sends instead of its screen's, e.g. 100,000 levels deep.
        self.hostile_tree: str | None = None
        self.battery = 87
        self._lock = threading.RLock()
        self.version = 0
        self.processes: dict[int, str] = {}  # pid → name of what runs besides Android (`ps`)
        self.process_stoppers: dict[int, Callable[[], None]] = {}  # pid → how `kill` ends it
        self._cache_key: tuple[int, str] | None = None
        # Told (in the thread that changed it) after every change of what is on screen: the scrcpy
        # stream encodes at once instead of finding the change at its next look.
        self.change_listeners: list[Callable[[], None]] = []
        self._cache: dict[str, Any] = {}
        self._reset_state()

    # --- the interface the shell uses ---------------------------------------------

    def command_names(self) -> frozenset[str]:
        """The Android commands `run` handles."""
        return frozenset(commands.HANDLERS)

    def run(self, argv: list[str], stdin: bytes, fs: FileStore) -> ShellResult:
        """Run one Android command (argv[0] is one of command_names())."""
        handler = commands.HANDLERS.get(argv[0]) if argv else None
        if handler is None:
            name = argv[0] if argv else ""
            message = f"/system/bin/sh: {name}: inaccessible or not found\n"
            return ShellResult(stderr=message.encode(), exit_code=127)

        def locked_run() -> ShellResult:
            with self._lock:
                try:
                    return handler(self, list(argv[1:]), stdin, fs)
                except Exception as exc:  # a bug here must not take the adbd connection down
                    log.exception("%s failed", argv[0])
                    message = f"Exception occurred while executing '{argv[0]}':\n{exc!r}\n"
                    return ShellResult(stderr=message.encode(), exit_code=255)

        return locked_run() if self.motion is None else self.motion.run(list(argv), locked_run)

    def state(self) -> dict[str, Any]:
        """A JSON-able snapshot of what tests and the control endpoint check.

        Keys: screen ("home", "recents", or the name of an app's screen as declared
        in screens/: "settings/main", "messages/thread", "catalog/list", …),
        screen_arg (the thread's contact, the item number, the page URL, else ""),
        package and activity (the focused window, as dumpsys reports it), wifi,
        bluetooth, focused_field (resource-id or None), focused_text (None when no
        field has focus), messages ({contact: [{"from": "me"|"them", "text"}]}),
        sent ([{"to", "text"}] in order), drafts (unsent text per contact),
        catalog_scroll (pixels), recents (packages, most recent first), back_stack
        (screens of the app in front), clipboard, app_state (what an app keeps besides drafts, e.g.
        Login Demo's "login.error"), ime, version (bumped by every change).
        """
        with self._lock:
            screen = self.top_screen()
            if self.showing_recents:
                name, arg = "recents", ""
            elif screen is None:
                name, arg = "home", ""
            else:
                name, arg = screen.name, screen.arg
            package, activity = self.focused_activity()
            field = None if screen is None or self.showing_recents else screen.focus
            return {
                "screen": name,
                "screen_arg": arg,
                "package": package,
                "activity": activity,
                "wifi": self.wifi,
                "bluetooth": self.bluetooth,
                "focused_field": field,
                "focused_text": None if field is None or screen is None else self._field_text(screen),
                "messages": copy.deepcopy(self.conversations),
                "sent": copy.deepcopy(self.sent),
                "drafts": {k: v for k, v in self.drafts.items() if k != "url" and v},
                "catalog_scroll": self.catalog_scroll,
                "recents": [p for p in self.recents if p in self.tasks],
                "back_stack": [s.name for s in self.tasks.get(self.current, [])] if self.current else [],
                "clipboard": self.clipboard,
                "app_state": dict(self.app_state),
                "ime": self.ime,
                "keyboard": self.keyboard_visible(),
                "permission_dialog": self.permission_prompt if self.asking_permission() else None,
                "permissions": dict(self.permissions),
                "secure": bool(self.secure_windows()),
                "version": self.version,
                **self.system.snapshot(),  # location (the test provider's), media (the scanned files)
            }

    def reset(self) -> None:
        """Back to the home screen, default settings and the initial messages."""
        with self._lock:
            self._reset_state()

    @contextlib.contextmanager
    def locked(self, *, wait: bool = True) -> Iterator[bool]:
        """Hold the phone as an Android command does while it runs (to change it from outside one);
        yields True. With ``wait=False`` it does not wait for another thread that holds it: it yields
        False at once, holding nothing."""
        if not self._lock.acquire(blocking=wait):
            yield False
            return
        try:
            yield True
        finally:
            self._lock.release()

    def set_clipboard(self, text: str) -> None:
        """Put ``text`` on the clipboard (a change: listeners are told)."""
        self.clipboard = text
        self._changed()

    # --- state ----------------------------------------------------------------------

    def _reset_state(self) -> None:
        self.wifi = True
        self.bluetooth = False
        self.settings: dict[str, dict[str, str]] = {
            "global": {
                "adb_enabled": "1",
                "airplane_mode_on": "0",
                "device_name": self.props["ro.product.model"],
                "development_settings_enabled": "1",
                "stay_on_while_plugged_in": "0",
            },
            "secure": {
                "android_id": "a1b2c3d4e5f60718",
                "enabled_input_methods": f"{apps.GBOARD_IME}:{apps.ADB_KEYBOARD_IME}",
            },
            "system": {"font_scale": "1.0", "screen_brightness": "128", "screen_off_timeout": "60000"},
        }
        # A real phone types with Gboard; the default phone has ADBKeyBoard selected, as a test rig does.
        self.ime = apps.GBOARD_IME if self.motion is not None else apps.ADB_KEYBOARD_IME
        self.tasks: dict[str, list[Screen]] = {}
        self.recents: list[str] = []
        self.current: str | None = None
        self.showing_recents = False
        self.conversations: dict[str, list[dict[str, str]]] = copy.deepcopy(INITIAL_MESSAGES)
        self.conversation_order: list[str] = list(INITIAL_MESSAGES)
        self.drafts: dict[str, str] = {}
        self.sent: list[dict[str, str]] = []
        self.catalog_scroll = 0
        self.clipboard = ""
        self.app_state: dict[str, str] = {}
        self.pointer_down: tuple[float, float, float] | None = None  # `input motionevent DOWN`
        self._launching: str | None = None  # "cold" or "warm" while an app is being brought up
        # --realistic only: the soft keyboard is up; the app whose permission dialog shows; answers.
        self.keyboard_shown = False
        self.permission_prompt: str | None = None
        self.permissions: dict[str, str] = {}  # package → granted, once, denied
        if self.motion is not None:  # a reset is not an animation: nothing moves after it
            self.motion.reset()
            self._shown_key = self._screen_key()
        self.apps: dict[str, apps.App] = dict(apps.APPS)  # the built-in apps and those `pm install` added
        self.dev = DevState()  # logs, dropbox, notifications, shade, permissions (devloop_state.py)
        self.system = SystemServices()  # location providers, app-ops, media store (system_services.py)
        self._changed()

    def _changed(self) -> None:
        if self.motion is not None:
            self._animate_change()
        self.version += 1
        for listener in list(self.change_listeners):
            listener()

    def _screen_key(self) -> tuple[object, ...]:
        top = self.top_screen()
        return (self.showing_recents, self.current, top.name if top else None, top.arg if top else None)

    def _animate_change(self) -> None:
        """--realistic: a change to another screen is a transition (after the app's launch, if one
        started), from the picture shown before it."""
        assert self.motion is not None
        key, launch = self._screen_key(), self._launching
        self._launching = None
        if key == getattr(self, "_shown_key", key):
            self._shown_key = key
            return
        self._shown_key = key
        self.keyboard_shown = False  # another screen: the keyboard goes with the field that had focus
        # The screen before the change, drawn from its windows (kept in the cache of the version
        # before this one, when anything looked at it): what the transition fades from.
        tree = self._cache.get("tree") if self._cache_key and self._cache_key[0] == self.version else None
        self.motion.start_transition(self.picture(tree) if tree else None, launch)

    def animation_frame(self) -> None:
        """One step of a running animation (motion.py): a new picture."""
        self._changed()

    def set_scroll(self, value: int) -> None:
        """Where the animated list stands now (motion.py moves it)."""
        self.catalog_scroll = value

    def clock_text(self) -> str:
        return self.clock()

    def top_screen(self) -> Screen | None:
        """The screen of the app in front, or None on the home screen."""
        if self.current is None or self.current not in self.tasks:
            return None
        return self.tasks[self.current][-1]

    def focused_activity(self) -> tuple[str, str]:
        screen = self.top_screen()
        if self.showing_recents or screen is None:
            return apps.LAUNCHER, apps.LAUNCHER_ACTIVITY
        if self.asking_permission():
            return system_windows.PERMISSION_PACKAGE, system_windows.PERMISSION_ACTIVITY
        return apps.screen_activity_of(self.current or "", screen)

    # --- what is on screen (cached per version and clock) -------------------------------

    def _cached(self, what: str, make: Callable[[], Any]) -> Any:
        key = (self.version, self.clock_text())
        if key != self._cache_key:
            self._cache_key, self._cache = key, {}
        if what not in self._cache:
            self._cache[what] = make()
        return self._cache[what]

    def windows(self) -> list[SimulatedView]:
        """The node trees on screen now, bottom to top."""
        with self._lock:
            return self._cached("tree", lambda: screens.build(self))

    def screenshot(self) -> Image.Image:
        with self._lock:
            image = self._cached("image", lambda: render.render(self.windows()))
            return self._cached("shown", lambda: self.compose(image))

    def screenshot_png(self) -> bytes:
        with self._lock:
            return self._cached("png", lambda: render.encode_png(self.screenshot()))

    def screenshot_raw(self) -> bytes:
        with self._lock:
            return self._cached("raw", lambda: render.encode_raw(self.screenshot()))

    # --- navigation ----------------------------------------------------------------------

    def launch(self, package: str) -> None:
        """Bring the app's task to the front, starting it at its main screen if needed."""
        app = self.apps[package]
        self._launching = "warm" if package in self.tasks else "cold"
        self._ask_permission(package, cold=package not in self.tasks)
        if package not in self.tasks:
            name = app.screens[app.main_activity]
            self.tasks[package] = [Screen(name, app.main_activity if name == "apk/main" else "")]
        self.dev.app_started(package)
        self._to_front(package)

    def _to_front(self, package: str) -> None:
        self.showing_recents = False
        self.current = package
        if package in self.recents:
            self.recents.remove(package)
        self.recents.insert(0, package)
        self._changed()

    def push(self, screen: Screen) -> None:
        """Start an activity on top of the current app's task."""
        if self.current is None:
            return
        top = self.tasks[self.current][-1]
        if (top.name, top.arg) != (screen.name, screen.arg):
            self.tasks[self.current].append(screen)
        self._changed()

    def start_screen(self, package: str, screen: Screen) -> None:
        """Open a screen of an app (an intent naming a non-main activity or carrying data).

        A fresh task holds just that screen, so BACK from it leaves the app, as
        when Android starts one activity into a new task.
        """
        self._launching = "warm" if package in self.tasks else "cold"
        self._ask_permission(package, cold=package not in self.tasks)
        if package not in self.tasks:
            self.tasks[package] = [screen]
            self._to_front(package)
        else:
            self._to_front(package)
            self.push(screen)

    def back(self) -> None:
        if self.asking_permission():  # Back on the dialog is "Don't allow"
            self.answer_permission("denied")
            return
        if self.keyboard_visible():  # Back hides the keyboard; the field keeps its focus
            self.keyboard_shown = False
            self._changed()
            return
        if self.dev.shade or self.dev.dialog:  # BACK closes the shade or the dialog first
            self.dev.shade = self.dev.dialog = None
        elif self.showing_recents:
            self.showing_recents = False
        elif self.current is not None:
            stack = self.tasks[self.current]
            if len(stack) > 1:
                stack.pop()
            else:
                stack[-1].focus = None
                self.current = None  # Android 12+: back at the root moves the task behind
        self._changed()

    def home(self) -> None:
        self.dev.shade = self.dev.dialog = None
        self.showing_recents = False
        self.current = None
        self._changed()

    def toggle_recents(self) -> None:
        self.showing_recents = not self.showing_recents
        self._changed()

    def force_stop(self, package: str) -> None:
        self.dev.started.discard(package)
        self.tasks.pop(package, None)
        if self.permissions.get(package) == "once":  # "Only this time" lasts until the app stops
            del self.permissions[package]
        if package in self.recents:
            self.recents.remove(package)
        if package == apps.CATALOG:
            self.catalog_scroll = 0
        if self.current == package:
            self.current = None
        self._changed()

    def clear_recents(self) -> None:
        for package in list(self.tasks):
            self.force_stop(package)
        self.showing_recents = False
        self.current = None
        self._changed()

    # --- touch -------------------------------------------------------------------------------

    def tap(self, x: float, y: float) -> None:
        node = hit_test(self.windows(), x, y)
        if node is not None and node.enabled and node.action:
            self._act(node.action)

    def long_press(self, x: float, y: float) -> None:
        """Only text fields react (they take focus); elsewhere a long press changes nothing."""
        node = hit_test(self.windows(), x, y)
        if (
            node is not None
            and node.enabled
            and node.long_clickable
            and (node.action or "").startswith("focus:")
        ):
            self._act(node.action or "")

    def swipe(
        self, x1: float, y1: float, x2: float, y2: float, duration_ms: int, *, followed: bool = False
    ) -> None:
        """A touch from (x1, y1) to (x2, y2) over ``duration_ms``: a tap, a long press, or a scroll of
        the list under it (--realistic: animated, then a fling; ``followed``: the list already
        followed the finger, as scrcpy's live touches move it)."""
        if abs(x2 - x1) < TOUCH_SLOP and abs(y2 - y1) < TOUCH_SLOP:
            if duration_ms >= LONG_PRESS_MS:
                self.long_press(x1, y1)
            else:
                self.tap(x1, y1)
            return
        node = find_scrollable(self.windows(), x1, y1)
        if node is not None and node.resource_id == f"{apps.CATALOG}:id/list":
            if self.motion is not None:  # the list follows the finger, then flings
                limit = screens.catalog_max_scroll()
                self.motion.start_scroll(self.catalog_scroll, y1 - y2, duration_ms, limit, followed=followed)
                return
            scroll = min(max(0, self.catalog_scroll + round(y1 - y2)), screens.catalog_max_scroll())
            if scroll != self.catalog_scroll:
                self.catalog_scroll = scroll
                self._changed()

    def follow_finger(self, x0: float, y0: float, x: float, y: float, origin: int) -> None:
        """--realistic: a finger moving on the list (down at (x0, y0), now at (x, y)) drags it."""
        if self.motion is None or abs(y - y0) < TOUCH_SLOP:
            return
        node = find_scrollable(self.windows(), x0, y0)
        if node is not None and node.resource_id == f"{apps.CATALOG}:id/list":
            self.motion.scroll = None  # a finger on the list stops its fling
            self.set_scroll(min(max(0, origin + round(y0 - y)), screens.catalog_max_scroll()))
            self.motion.touched()
            self._changed()

    def _act(self, action: str) -> None:
        verb, _, arg = action.partition(":")
        screen = self.top_screen()
        if verb == "launch":
            self.launch(arg)
        elif verb == "open":
            self.push(Screen(arg))
        elif verb == "conversation":
            self.push(Screen("messages/thread", arg))
        elif verb == "item":
            self.push(Screen("catalog/item", arg))
        elif verb == "back":
            self.back()
        elif verb == "home":
            self.home()
        elif verb == "recents":
            self.toggle_recents()
        elif verb == "recent":
            self._to_front(arg)
        elif verb == "clear_recents":
            self.clear_recents()
        elif verb == "toggle":
            if arg == "wifi":
                self.set_wifi(not self.wifi)
            else:
                self.set_bluetooth(not self.bluetooth)
        elif verb == "focus" and screen is not None:
            if screen.focus != arg and arg == URL_BAR_ID:
                self.drafts["url"] = ""  # Chrome selects the address; typing replaces it
            screen.focus = arg
            if self.motion is not None and not self.keyboard_shown:  # the keyboard slides in
                self.keyboard_shown = True
                self.motion.show_ime()
            self._changed()
        elif verb == "permission":
            self.answer_permission(arg)
        elif verb == "send":
            self.send_message()
        elif verb.startswith("dev."):
            self.dev_action(verb[4:])
        elif verb in screens.ACTIONS:  # an app's own (Login Demo's sign_in …)
            screens.ACTIONS[verb](self, arg)

    def pinch(self, x: float, y: float, scale: float) -> None:
        """Two fingers spread (scale > 1) or closed about (x, y): the camera zooms (1x to 10x)."""
        self.dev.log("D", "ScaleGestureDetector", f"pinch at ({x:.0f},{y:.0f}) scale {scale:.2f}")
        if self.current == apps.CAMERA and not self.showing_recents and not self.dev.shade:
            self.dev.zoom = round(min(10.0, max(1.0, self.dev.zoom * scale)), 1)
        self._changed()

    def dev_action(self, verb: str) -> None:
        """The developer-loop screens' buttons: Crash Demo's "Crash now", the crash dialog's."""
        if verb == "crash" and self.current is not None:
            package = self.current
            self.force_stop(package)
            self.dev.crash(package, self.apps[package].label)
        elif verb == "dialog":
            self.dev.dialog = None
        self._changed()

    # --- keyboard ------------------------------------------------------------------------------

    def _focused_screen(self) -> Screen | None:
        screen = self.top_screen()
        if self.showing_recents or screen is None or screen.focus is None:
            return None
        return screen

    def _draft_key(self, screen: Screen) -> str:
        if screen.focus == COMPOSE_ID:
            return screen.arg
        return "url" if screen.focus == URL_BAR_ID else screen.focus or ""

    def _field_text(self, screen: Screen) -> str:
        return self.drafts.get(self._draft_key(screen), "") if screen.focus else ""

    def type_text(self, text: str) -> bool:
        """Insert text into the focused field; False when no field has focus."""
        screen = self._focused_screen()
        if screen is None:
            return False
        key = self._draft_key(screen)
        self.drafts[key] = self.drafts.get(key, "") + text
        self._changed()
        return True

    def delete_back(self) -> None:
        screen = self._focused_screen()
        if screen is not None:
            key = self._draft_key(screen)
            if self.drafts.get(key):
                self.drafts[key] = self.drafts[key][:-1]
                self._changed()

    def clear_field(self) -> None:
        screen = self._focused_screen()
        if screen is not None and self.drafts.get(self._draft_key(screen)):
            self.drafts[self._draft_key(screen)] = ""
            self._changed()

    def enter(self) -> None:
        """ENTER in the message field sends (Messages' "Enter is send"); in the address bar it loads."""
        screen = self._focused_screen()
        if screen is None:
            return
        if screen.focus == COMPOSE_ID:
            self.send_message()
        elif screen.focus in screens.FIELD_ENTER:
            self._act(screens.FIELD_ENTER[screen.focus])
        elif screen.focus == URL_BAR_ID:
            typed = self.drafts.pop("url", "").strip()
            screen.focus = None
            if typed:
                self.push(Screen("browser/page", self.url_for(typed)))
            self._changed()

    @staticmethod
    def url_for(typed: str) -> str:
        if urlsplit(typed).scheme in ("http", "https", "about", "file"):
            return typed
        if " " not in typed and "." in typed:
            return "https://" + typed
        return "https://www.google.com/search?q=" + quote_plus(typed)

    def send_message(self) -> None:
        screen = self.top_screen()
        if screen is None or screen.name != "messages/thread" or self.showing_recents:
            return
        contact = screen.arg
        text = self.drafts.get(contact, "")
        if not text.strip():
            return
        self.conversations.setdefault(contact, []).append({"from": "me", "text": text})
        self.sent.append({"to": contact, "text": text})
        self.drafts[contact] = ""
        if contact in self.conversation_order:
            self.conversation_order.remove(contact)
        self.conversation_order.insert(0, contact)
        self._changed()

    def contact_for(self, address: str) -> str | None:
        """The contact a `sms:`/`smsto:` address or a name refers to."""
        wanted = address.replace(" ", "").replace("-", "")
        for name, number in CONTACTS.items():
            if wanted in (number, name.replace(" ", "")) or (wanted and number.endswith(wanted)):
                return name
        return None
