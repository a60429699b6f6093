"""The fixed interfaces of the virtual phone: towards the shell that calls it, and towards its own parts.

The device-side shell (outside this package) parses command lines, runs its own
built-ins, and hands every Android command (`getprop`, `input`, `am`, …) to
`VirtualPhone.run` with the command's stdin and the virtual file system as a
`FileStore`.

Inside the package, the command handlers and the screen layouts see the phone as
an `AndroidPhone` (which `VirtualPhone` is), so they depend on this module and
not on the phone that runs them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .ui import SimulatedView

__all__ = ["AndroidPhone", "FileStore", "Screen"]


class FileStore(Protocol):
    """The slice of the virtual file system the Android commands need."""

    def read_file(self, path: str) -> bytes:
        """Raise FileNotFoundError or IsADirectoryError like open() does."""
        ...

    def write_file(self, path: str, data: bytes) -> None:
        """Raise FileNotFoundError when the parent directory is missing."""
        ...


@dataclass
class Screen:
    """One activity instance on a task's back stack."""

    name: str
    arg: str = ""
    focus: str | None = None  # resource-id of the focused text field


class AndroidPhone(Protocol):
    """What the Android commands and the screen layouts read and change of the phone (VirtualPhone)."""

    serial: str
    props: dict[str, str]
    clock: Callable[[], str]
    hostile_tree: str | None  # tests: the UI dump sent instead of the screen's
    battery: int
    version: int
    processes: dict[int, str]
    process_stoppers: dict[int, Callable[[], None]]
    wifi: bool
    bluetooth: bool
    settings: dict[str, dict[str, str]]
    ime: str
    tasks: dict[str, list[Screen]]
    recents: list[str]
    current: str | None
    showing_recents: bool
    conversations: dict[str, list[dict[str, str]]]
    conversation_order: list[str]
    drafts: dict[str, str]
    sent: list[dict[str, str]]
    catalog_scroll: int
    clipboard: str
    app_state: dict[str, str]  # what an app keeps besides drafts (Login Demo's error line)
    pointer_down: tuple[float, float, float] | None
    permissions: dict[str, str]  # --realistic: package → its answer to the permission dialog
    apps: dict[str, Any]  # installed packages (apps.App): the built-in ones and those `pm install` added
    dev: Any  # devloop_state.DevState: logs, dropbox, notifications, shade, permissions

    def clock_text(self) -> str: ...
    def keyboard_height(self) -> int: ...
    def asking_permission(self) -> bool: ...
    def top_screen(self) -> Screen | None: ...
    def focused_activity(self) -> tuple[str, str]: ...
    def windows(self) -> list[SimulatedView]: ...
    def screenshot_png(self) -> bytes: ...
    def screenshot_raw(self) -> bytes: ...
    def launch(self, package: str) -> None: ...
    def start_screen(self, package: str, screen: Screen) -> None: ...
    def push(self, screen: Screen) -> None: ...
    def back(self) -> None: ...
    def home(self) -> None: ...
    def toggle_recents(self) -> None: ...
    def force_stop(self, package: str) -> None: ...
    def set_wifi(self, on: bool) -> None: ...
    def set_bluetooth(self, on: bool) -> None: ...
    def get_setting(self, namespace: str, key: str) -> str | None: ...
    def put_setting(self, namespace: str, key: str, value: str) -> None: ...
    def all_settings(self, namespace: str) -> dict[str, str]: ...
    def tap(self, x: float, y: float) -> None: ...
    def swipe(
        self, x1: float, y1: float, x2: float, y2: float, duration_ms: int, *, followed: bool = False
    ) -> None: ...
    def type_text(self, text: str) -> bool: ...
    def delete_back(self) -> None: ...
    def clear_field(self) -> None: ...
    def enter(self) -> None: ...
    def contact_for(self, address: str) -> str | None: ...
