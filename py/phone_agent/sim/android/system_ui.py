"""What the realistic phone's system draws over the apps (a part of ``VirtualPhone``): the soft keyboard,
the runtime permission dialog, FLAG_SECURE windows, and the picture the display shows of them.

The default phone has none of it but the secure window (a property of the screen, not of a cost): its
keyboard never shows and no app asks for a permission. The windows themselves are laid out in
``screens/system_windows.py``.
"""

from __future__ import annotations

from collections.abc import Callable

from PIL import Image

from . import render
from .contract import Screen
from .motion import Motion
from .screens import system_windows
from .ui import SimulatedView


class SystemWindows:
    """The keyboard, the permission dialog and secure windows, for ``VirtualPhone`` to inherit."""

    motion: Motion | None
    ime: str
    current: str | None
    showing_recents: bool
    version: int
    keyboard_shown: bool
    permission_prompt: str | None
    permissions: dict[str, str]
    _changed: Callable[[], None]
    _focused_screen: Callable[[], Screen | None]
    windows: Callable[[], list[SimulatedView]]

    def keyboard_visible(self) -> bool:
        """Whether the soft keyboard is up (--realistic: a text field took focus, Back not pressed)."""
        return self.keyboard_shown and self._focused_screen() is not None and not self.asking_permission()

    def keyboard_height(self) -> int:
        """How many pixels above the navigation bar the keyboard covers now (it slides in)."""
        if self.motion is None or not self.keyboard_visible():
            return 0
        return system_windows.ime_height(self.ime, self.motion.ime_fraction())

    def asking_permission(self) -> bool:
        """Whether the permission dialog shows (over the app that asks, while it is in front)."""
        return (
            self.permission_prompt is not None
            and self.permission_prompt == self.current
            and (not self.showing_recents)
        )

    def _ask_permission(self, package: str, cold: bool) -> None:
        """--realistic: the asking app's first launch (and each cold one until answered) asks."""
        if self.motion is not None and cold and package == system_windows.ASKING_APP:
            if self.permissions.get(package) not in ("granted", "once", "denied_twice"):
                self.permission_prompt = package

    def answer_permission(self, answer: str) -> None:
        """A button of the permission dialog: granted, once (until the app stops) or denied (asked
        again at the next launch; denied twice, Android stops asking: ``denied_twice``)."""
        if self.permission_prompt is not None:
            if answer == "denied" and self.permissions.get(self.permission_prompt) == "denied":
                answer = "denied_twice"
            self.permissions[self.permission_prompt] = answer
            self.permission_prompt = None
            self._changed()

    def secure_windows(self) -> list[SimulatedView]:
        """The windows on screen with FLAG_SECURE."""
        return [window for window in self.windows() if window.secure]

    def compose(self, image: Image.Image) -> Image.Image:
        """The picture the display shows for the windows drawn in ``image``: a FLAG_SECURE window is
        black (as SurfaceFlinger captures it for screencap and scrcpy); a transition blends."""
        image = _blacken_secure(image, self.windows())
        return image if self.motion is None else self.motion.compose(image)

    @staticmethod
    def picture(windows: list[SimulatedView]) -> Image.Image:
        """``windows`` drawn as a capture shows them (secure ones black)."""
        return _blacken_secure(render.render(windows), windows)


def _blacken_secure(image: Image.Image, windows: list[SimulatedView]) -> Image.Image:
    """Black where a secure window is, the windows above it drawn again (a copy when any is)."""
    lowest = next((i for i, window in enumerate(windows) if window.secure), None)
    if lowest is None:
        return image
    image = image.copy()
    image.paste((0, 0, 0), windows[lowest].bounds)
    render.draw_windows(image, windows[lowest + 1 :])
    return image
