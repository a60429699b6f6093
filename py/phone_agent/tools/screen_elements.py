"""The elements of one screen as the tools address them: which nodes of a UI tree become elements, in
what order, with what label, role, window and own locator (``ScreenSnapshot.from_nodes``).

The screen is the display's true size when the caller knows it, else the union of the tree's windows
(a dump of several windows may begin with the status bar). Every element is listed whole-screen in
reading order (top to bottom, then left to right) with the kind of window holding it (``app``,
``keyboard``, ``system``, ``dialog``) and the shortest locator that finds exactly it
(``own_locators``). Screen text is read through the one normalisation (``device.screen_text``).
Matching locators is ``locators``. Pure: no I/O; no recursion over the tree.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..device.interface import Bounds, UiNode
from ..device.screen_text import screen_text
from ..device.windows import APP, KEYBOARD, Window, is_input_method, screen_extent, window_of_each, windows_of
from .own_locators import LocatorKeys, own_locators

MAX_LABEL_CHARS = 80

_INPUT_CLASSES = ("EditText", "AutoCompleteTextView", "MultiAutoCompleteTextView", "SearchAutoComplete")
_SWITCH_CLASSES = ("Switch", "SwitchCompat", "SwitchMaterial", "ToggleButton", "MaterialSwitch")
_LIST_CLASSES = (
    "RecyclerView",
    "ListView",
    "GridView",
    "ScrollView",
    "HorizontalScrollView",
    "NestedScrollView",
    "ViewPager",
    "ViewPager2",
)


def role_of(node: UiNode) -> str:
    """What the element is to a person: button, input, switch, checkbox, list, image or text."""
    short = node.class_name.rsplit(".", 1)[-1]
    if short.endswith(_INPUT_CLASSES):
        return "input"
    if short.endswith(_SWITCH_CLASSES):
        return "switch"
    if node.checkable or short in ("CheckBox", "RadioButton", "CheckedTextView"):
        return "checkbox"
    if node.scrollable or short in _LIST_CLASSES:
        return "list"
    if short.endswith("Button") or ((node.clickable or node.long_clickable) and short != "ImageView"):
        return "button"
    if short.endswith("ImageView") or short == "ImageView":
        return "button" if node.clickable else "image"
    return "text"


# The states an element's JSON carries only when true.
ELEMENT_FLAGS = ("clickable", "checkable", "checked", "focused", "scrollable", "selected", "password")


@dataclass(frozen=True)
class Element:
    """One addressable element of a screen, as ``list_elements`` answers it."""

    ref: str
    text: str
    desc: str
    resource_id: str
    class_name: str
    role: str
    bounds: Bounds
    center: tuple[int, int]
    clickable: bool
    checkable: bool
    checked: bool
    enabled: bool
    focused: bool
    scrollable: bool
    selected: bool
    password: bool
    label: str  # what a person reads: text, else description, else the text inside it, else its id
    package: str = ""  # the app (or the input method) whose window holds it
    window: str = APP  # the kind of window holding it: app, keyboard, system or dialog
    locator: str = ""  # the shortest locator that finds exactly it on its screen
    node: UiNode | None = field(default=None, compare=False, repr=False)  # its node in the tree read

    def identity(self) -> tuple[Any, ...]:
        """What must be unchanged for a ref to still mean this element."""
        return (self.class_name, self.resource_id, self.text, self.desc, self.bounds)

    def to_json(self) -> dict[str, Any]:
        """The element as the tools answer it, lean: what has its default value is left out (an empty
        text, desc or id; a state that is false; enabled when it is; the window when it is the app's)."""
        out: dict[str, Any] = {"ref": self.ref}
        for key, value in (("text", self.text), ("desc", self.desc), ("id", self.resource_id)):
            if value:
                out[key] = value
        out.update(
            {
                "class": self.class_name,
                "role": self.role,
                "bounds": {
                    "x1": self.bounds.left,
                    "y1": self.bounds.top,
                    "x2": self.bounds.right,
                    "y2": self.bounds.bottom,
                },
                "center": {"x": self.center[0], "y": self.center[1]},
            }
        )
        for flag in ELEMENT_FLAGS:
            if getattr(self, flag):
                out[flag] = True
        if not self.enabled:
            out["enabled"] = False
        if self.window != APP:
            out["window"] = self.window
        if self.locator:
            out["locator"] = self.locator
        return out

    def states(self) -> tuple[str, ...]:
        """The states worth knowing, in this order: checked or unchecked (when it can be either),
        focused, selected, disabled, password. The tools' lines and the agent's screen both tell these."""
        states = []
        if self.checkable:
            states.append("checked" if self.checked else "unchecked")
        if self.focused:
            states.append("focused")
        if self.selected:
            states.append("selected")
        if not self.enabled:
            states.append("disabled")
        if self.password:
            states.append("password")
        return tuple(states)

    def line(self) -> str:
        """``@e3 Connected devices (button) [540,657]``, then its states (and its window when it is
        not the app's); the role ``text``, the most common, goes unsaid: ``@e5 Wi-Fi is on [610,505]``."""
        states = self.states()
        if self.window != APP:
            states = (*states, f"in {self.window}")
        label = f"{self.label} " if self.label else ""
        role = "" if self.role == "text" else f"({self.role}) "
        tail = f" {' '.join(states)}" if states else ""
        return f"{self.ref} {label}{role}[{self.center[0]},{self.center[1]}]{tail}"


def visible_center(bounds: Bounds, width: int, height: int) -> tuple[int, int] | None:
    """The centre of the part of ``bounds`` on a ``width`` x ``height`` screen (None when none is)."""
    left, top = max(bounds.left, 0), max(bounds.top, 0)
    right = min(bounds.right, width) if width else bounds.right
    bottom = min(bounds.bottom, height) if height else bounds.bottom
    if right <= left or bottom <= top:
        return None
    return (left + right) // 2, (top + bottom) // 2


def own_label(node: UiNode) -> str:
    """A node's own text (never a password field's), else its description, as screen text."""
    return screen_text("" if node.password else node.text) or screen_text(node.content_desc)


def inner_text(node: UiNode, limit: int = 2) -> str:
    """The labels of the first ``limit`` labelled nodes inside ``node`` (depth first, a labelled node's
    own inside left out), joined with `` · ``."""
    found: list[str] = []
    stack = list(reversed(node.children))
    while stack and len(found) < limit:
        current = stack.pop()
        label = own_label(current)
        if label:
            found.append(label)
        else:
            stack.extend(reversed(current.children))
    return " · ".join(found)


@dataclass
class ScreenSnapshot:
    """The elements of one screen in reading order (top to bottom, then left to right), refs from 1."""

    elements: list[Element]
    width: int
    height: int
    by_ref: dict[str, Element] = field(default_factory=dict, repr=False)
    # The soft keyboard's window while one is up (a top-level node of an input method's package).
    keyboard: Bounds | None = None
    windows: list[Window] = field(default_factory=list, repr=False)
    nodes: list[UiNode] = field(default_factory=list, repr=False)  # the tree the elements came from
    _parents: dict[int, UiNode] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.by_ref = {element.ref: element for element in self.elements}

    def under_keyboard(self, element: Element) -> bool:
        """Whether the soft keyboard covers ``element``'s centre (a touch there lands on the keyboard)."""
        if self.keyboard is None or is_input_method(element.package) or element.window == KEYBOARD:
            return False
        return self.keyboard.contains(*element.center)

    def parent(self, node: UiNode) -> UiNode | None:
        """``node``'s parent in the tree read (None for a window's root)."""
        if self._parents is None:
            self._parents = {id(child): up for up in self.nodes for child in up.children}
        return self._parents.get(id(node))

    def ancestors(self, node: UiNode) -> list[UiNode]:
        """``node``'s parent, its parent's parent … up to its window's root."""
        found = []
        current = self.parent(node)
        while current is not None and len(found) <= len(self.nodes):
            found.append(current)
            current = self.parent(current)
        return found

    @classmethod
    def from_nodes(cls, nodes: list[UiNode], width: int = 0, height: int = 0) -> ScreenSnapshot:
        """The snapshot of a UI tree on a ``width`` x ``height`` screen (device pixels); without a size,
        the screen is the union of the tree's windows (never its first node alone)."""
        if (not width or not height) and nodes:
            extent = screen_extent(nodes)
            width, height = width or extent[0], height or extent[1]
        windows = windows_of(nodes, width, height)
        kinds = window_of_each(nodes, windows)
        chosen = _addressable(nodes, width, height)
        keys = [_keys(node) for _, _, _, node, _ in chosen]
        elements = [
            _element(number, node, center, kinds[order], key, locator)
            for number, ((_, _, order, node, center), key, locator) in enumerate(
                zip(chosen, keys, own_locators(keys), strict=True), 1
            )
        ]
        keyboard = next((window.bounds for window in windows if window.kind == KEYBOARD), None)
        return cls(elements, width, height, keyboard=keyboard, windows=windows, nodes=nodes)

    def find_same(self, element: Element) -> Element | None:
        """This screen's element that is ``element`` unchanged (same class, id, text and place), if any."""
        same = self.by_ref.get(element.ref)
        if same is not None and same.identity() == element.identity():
            return same
        wanted = element.identity()
        for candidate in self.elements:
            if candidate.identity() == wanted:
                return candidate
        return None


def _addressable(
    nodes: list[UiNode], width: int, height: int
) -> list[tuple[int, int, int, UiNode, tuple[int, int]]]:
    """The nodes worth addressing (labelled, interactive or an input, on screen, not repeated), in
    reading order, each with its place in ``nodes`` and its visible centre."""
    candidates: list[tuple[int, int, int, UiNode, tuple[int, int]]] = []
    seen: set[tuple[Any, ...]] = set()
    for order, node in enumerate(nodes):
        center = visible_center(node.bounds, width, height)
        if center is None:
            continue
        interactive = node.clickable or node.checkable or node.scrollable or node.long_clickable
        if not interactive and not own_label(node) and role_of(node) != "input":
            continue
        key = (node.class_name, node.resource_id, node.text, node.content_desc, node.bounds)
        if key in seen:
            continue
        seen.add(key)
        candidates.append((node.bounds.top, node.bounds.left, order, node, center))
    candidates.sort(key=lambda item: item[:3])
    return candidates


def _keys(node: UiNode) -> LocatorKeys:
    text = "" if node.password else screen_text(node.text)
    return LocatorKeys(text, screen_text(node.content_desc), node.resource_id, node.class_name, role_of(node))


def _element(
    number: int, node: UiNode, center: tuple[int, int], window: str, keys: LocatorKeys, locator: str
) -> Element:
    label = keys.text or keys.desc or inner_text(node)
    if not label and node.resource_id:
        label = node.resource_id.rsplit("/", 1)[-1]
    return Element(
        ref=f"@e{number}",
        text=keys.text,
        desc=keys.desc,
        resource_id=node.resource_id,
        class_name=node.class_name,
        role=keys.role,
        bounds=node.bounds,
        center=center,
        clickable=node.clickable,
        checkable=node.checkable,
        checked=node.checked,
        enabled=node.enabled,
        focused=node.focused,
        scrollable=node.scrollable,
        selected=node.selected,
        password=node.password,
        label=label[:MAX_LABEL_CHARS],
        package=node.package,
        window=window,
        locator=locator,
        node=node,
    )
