"""The phone as tools: ``DEVICE_TOOLS``, every device action in the catalog's order.

Each entry is a ``ToolSpec`` — name, description, strict input schema, output schema, read-only or
not, time limit — and its handler, declared side by side in the module of its family: ``screen``
(list_elements, get_screen_info, set_orientation), ``gestures`` (tap, long_press, swipe, scroll_to),
``text_keys`` (type_text, press_key), ``named_secrets`` (type_secret), ``apps`` (open_app, stop_app,
open_url, list_apps, get_current_app), ``waits`` (wait_for), and the developer's loop: ``packages``
(install_app, uninstall_app, clear_app_data, set_permission), ``logs`` (read_logs, list_crashes,
get_crash), ``files`` (push_file, pull_file, list_files), ``clipboard``, ``notifications``,
``multitouch`` (pinch) and ``recording``; how a target names an element is ``targets``. From these
entries come the MCP tools, the WebMCP tools, the page agent's function-calling actions, the page's
live-view controls and ``docs/tools.md``. Every failure is a ``ToolError`` with a code and a remedy;
every wait is bounded. Pure: the phone is reached only through the ``Device`` interface.
"""

from __future__ import annotations

from .apps import GET_CURRENT_APP, LIST_APPS, OPEN_APP, OPEN_URL, STOP_APP
from .clipboard import GET_CLIPBOARD, SET_CLIPBOARD
from .files import LIST_FILES, PULL_FILE, PUSH_FILE
from .gestures import LONG_PRESS, SCROLL_TO, SWIPE, TAP
from .logs import GET_CRASH, LIST_CRASHES, READ_LOGS
from .multitouch import PINCH
from .named_secrets import TYPE_SECRET
from .notifications import LIST_NOTIFICATIONS, OPEN_NOTIFICATIONS
from .packages import CLEAR_APP_DATA, INSTALL_APP, SET_PERMISSION, UNINSTALL_APP
from .recording import START_RECORDING, STOP_RECORDING
from .screen import GET_SCREEN_INFO, LIST_ELEMENTS, SET_ORIENTATION
from .spec import ToolSpec
from .text_keys import PRESS_KEY, TYPE_TEXT
from .waits import WAIT_FOR

# The catalog's order: the tool lists, docs/tools.md and the tests follow it.
DEVICE_TOOLS: tuple[ToolSpec, ...] = (
    LIST_ELEMENTS,
    TAP,
    LONG_PRESS,
    SWIPE,
    SCROLL_TO,
    TYPE_TEXT,
    TYPE_SECRET,
    PRESS_KEY,
    OPEN_APP,
    STOP_APP,
    OPEN_URL,
    LIST_APPS,
    GET_CURRENT_APP,
    WAIT_FOR,
    GET_SCREEN_INFO,
    SET_ORIENTATION,
    # The developer's loop: apps, logs and crashes, files, clipboard and notifications, pinch, recording.
    INSTALL_APP,
    UNINSTALL_APP,
    CLEAR_APP_DATA,
    SET_PERMISSION,
    READ_LOGS,
    LIST_CRASHES,
    GET_CRASH,
    PUSH_FILE,
    PULL_FILE,
    LIST_FILES,
    GET_CLIPBOARD,
    SET_CLIPBOARD,
    LIST_NOTIFICATIONS,
    OPEN_NOTIFICATIONS,
    PINCH,
    START_RECORDING,
    STOP_RECORDING,
)
