"""The windows of a UI tree: which top-level nodes are windows, what each is to a person (``app``,
``keyboard``, ``system``, ``dialog``), and the screen they cover together.

A dump of the whole screen (the hierarchy server's) holds one top-level node per window, in any order:
the status bar, a navigation bar or a gesture strip may come first. The screen is the union of the
windows, never the first node. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass

from .interface import Bounds, UiNode

APP, KEYBOARD, SYSTEM, DIALOG = "app", "keyboard", "system", "dialog"
WINDOW_KINDS = (APP, KEYBOARD, SYSTEM, DIALOG)

# Input methods (soft keyboards) by package: AOSP's, Gboard, Samsung's, SwiftKey, ADBKeyBoard; any
# package naming itself an input method or a keyboard counts too.
INPUT_METHOD_PACKAGES = frozenset(
    {
        "com.android.inputmethod.latin",
        "com.google.android.inputmethod.latin",
        "com.samsung.android.honeyboard",
        "com.touchtype.swiftkey",
        "com.android.adbkeyboard",
    }
)
SYSTEM_UI_PACKAGES = frozenset({"com.android.systemui", "com.android.systemui.navigationbar"})
# Dialogs the system shows over an app (permissions, app crashes and ANRs, the chooser).
DIALOG_PACKAGES = frozenset(
    {
        "com.android.permissioncontroller",
        "com.google.android.permissioncontroller",
        "com.android.packageinstaller",
        "com.google.android.packageinstaller",
        "android",
    }
)
FULL_SCREEN_SHARE = 0.85  # a window clear of the edges and smaller than this share floats over the app
BAR_SHARE = 0.12  # a strip along a whole edge, thinner than this share of the screen, is a bar


def is_input_method(package: str) -> bool:
    """Whether ``package`` is a soft keyboard's."""
    lowered = package.lower()
    return package in INPUT_METHOD_PACKAGES or "inputmethod" in lowered or lowered.endswith("keyboard")


@dataclass(frozen=True)
class Window:
    """One window of the screen: its root node's place in the node list, its kind and bounds."""

    start: int  # the index of its root in the flattened node list
    kind: str
    bounds: Bounds
    package: str


def _area(bounds: Bounds) -> int:
    return max(bounds.width, 0) * max(bounds.height, 0)


def union(boxes: list[Bounds]) -> Bounds | None:
    """The smallest box holding every box of positive size (None when there is none)."""
    real = [box for box in boxes if box.width > 0 and box.height > 0]
    if not real:
        return None
    return Bounds(
        min(box.left for box in real),
        min(box.top for box in real),
        max(box.right for box in real),
        max(box.bottom for box in real),
    )


def window_roots(nodes: list[UiNode]) -> list[int]:
    """The indexes of the nodes that begin a window: the top-level nodes that hold others (a childless
    top-level node belongs to the window before it). A list whose nodes all say depth 0 (built by hand,
    not read from a dump) is one window, its first node."""
    if not any(node.depth for node in nodes):
        return [0] if nodes else []
    roots = [position for position, node in enumerate(nodes) if node.depth == 0 and node.children]
    return roots or [0]


def screen_extent(nodes: list[UiNode]) -> tuple[int, int]:
    """The screen's size as the windows tell it (the right and bottom edges of their union); (0, 0) for
    a tree with no node of positive size."""
    box = union([nodes[index].bounds for index in window_roots(nodes)])
    if box is None:
        box = union([node.bounds for node in nodes[:200]])
    return (max(box.right, 0), max(box.bottom, 0)) if box is not None else (0, 0)


def _is_bar(box: Bounds, width: int, height: int) -> bool:
    """A strip along a whole edge of the screen (a status, navigation or task bar)."""
    if not width or not height:
        return False
    across = box.left <= 0 and box.right >= width and box.height < BAR_SHARE * height
    along = box.top <= 0 and box.bottom >= height and box.width < BAR_SHARE * width
    at_edge = box.top <= 0 or box.bottom >= height or box.left <= 0 or box.right >= width
    return (across and (box.top <= 0 or box.bottom >= height)) or (along and at_edge)


def _kind(root: UiNode, width: int, height: int, windows: int) -> str:
    package = root.package
    if is_input_method(package):
        return KEYBOARD
    if package in SYSTEM_UI_PACKAGES:
        return SYSTEM
    if windows == 1:
        return APP
    if package in DIALOG_PACKAGES:
        return DIALOG
    if _is_bar(root.bounds, width, height):
        return SYSTEM  # a taskbar, or a navigation bar drawn by the launcher
    box = root.bounds
    floating = (
        box.left > 0
        and box.top > 0
        and (not width or box.right < width)
        and (not height or box.bottom < height)
    )
    screen = max(width, 0) * max(height, 0)
    if floating and screen and _area(box) < FULL_SCREEN_SHARE * screen:
        return DIALOG  # a window clear of every edge: a dialog, a popup, a menu
    return APP


def windows_of(nodes: list[UiNode], width: int, height: int) -> list[Window]:
    """The windows of a tree in the order the tree lists them, each with its kind."""
    roots = window_roots(nodes)
    return [
        Window(
            start, _kind(nodes[start], width, height, len(roots)), nodes[start].bounds, nodes[start].package
        )
        for start in roots
    ]


def window_of_each(nodes: list[UiNode], windows: list[Window]) -> list[str]:
    """The kind of the window holding each node (by position in the flattened list)."""
    kinds = [APP] * len(nodes)
    for number, window in enumerate(windows):
        end = windows[number + 1].start if number + 1 < len(windows) else len(nodes)
        for position in range(window.start, end):
            kinds[position] = window.kind
    return kinds
