"""Camera: a black screen with no preview."""

from __future__ import annotations

from .. import apps
from ..contract import AndroidPhone, Screen
from ..ui import SimulatedView
from .devloop import zoom_label
from .registry import screen_layout
from .widgets import WHITE, W, app_window, label


@screen_layout("camera/main", title="Camera", dark=True)
def camera_screen(phone: AndroidPhone, screen: Screen) -> SimulatedView:
    root = app_window(apps.CAMERA, (0, 0, 0))
    root.add(label((0, 1100, W, 1180), "Camera preview is not available", size=44, fg=WHITE, align="center"))
    root.add(zoom_label(phone))
    return root
