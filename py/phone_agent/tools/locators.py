"""Elements of the phone's screen as the tools address them: refs (``@e12``) and locators (``text=…``).

A ``ScreenSnapshot`` is one UI dump turned into the elements worth addressing, in reading order, each
with a ref that is valid for that screen only. A locator (``text=``, ``textContains=``, ``id=``,
``desc=``, ``descContains=``, ``class=``, ``role=``) picks elements of any snapshot. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..device.interface import Bounds, UiNode

REF_PATTERN = re.compile(r"@e([1-9][0-9]{0,5})")
LOCATOR_KEYS = ("text", "textContains", "id", "desc", "descContains", "class", "role")
ROLES = ("button", "input", "switch", "checkbox", "list", "image", "text")
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


def is_input_method(package: str) -> bool:
    """Whether ``package`` is a soft keyboard's."""
    lowered = package.lower()
    return package in INPUT_METHOD_PACKAGES or "inputmethod" in lowered or lowered.endswith("keyboard")


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

    def identity(self) -> tuple[Any, ...]:
        """What must be unchanged for a ref to still mean this element."""
        return (self.class_name, self.resource_id, self.text, self.desc, self.bounds)

    def to_json(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "text": self.text,
            "desc": self.desc,
            "id": self.resource_id,
            "class": self.class_name,
            "role": self.role,
            "bounds": {
                "x1": self.bounds.left,
                "y1": self.bounds.top,
                "x2": self.bounds.right,
                "y2": self.bounds.bottom,
            },
            "center": {"x": self.center[0], "y": self.center[1]},
            "clickable": self.clickable,
            "checkable": self.checkable,
            "checked": self.checked,
            "enabled": self.enabled,
            "focused": self.focused,
            "scrollable": self.scrollable,
            "selected": self.selected,
            "password": self.password,
        }

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
        """``@e3 Connected devices (button) [540,657]``, then its states."""
        states = self.states()
        label = f"{self.label} " if self.label else ""
        tail = f" {' '.join(states)}" if states else ""
        return f"{self.ref} {label}({self.role}) [{self.center[0]},{self.center[1]}]{tail}"


def _visible_center(bounds: Bounds, width: int, height: int) -> tuple[int, int] | None:
    left, top = max(bounds.left, 0), max(bounds.top, 0)
    right = min(bounds.right, width) if width else bounds.right
    bottom = min(bounds.bottom, height) if height else bounds.bottom
    if right <= left or bottom <= top:
        return None
    return (left + right) // 2, (top + bottom) // 2


def _inner_text(node: UiNode, limit: int = 2) -> str:
    found: list[str] = []

    def walk(current: UiNode) -> None:
        for child in current.children:
            if len(found) >= limit:
                return
            label = (child.text if not child.password else "") or child.content_desc
            if label.strip():
                found.append(label.strip())
            else:
                walk(child)

    walk(node)
    return " · ".join(found)


def _clean(text: str) -> str:
    return " ".join(text.split())


@dataclass
class ScreenSnapshot:
    """The elements of one screen in reading order (top to bottom, then left to right), refs from 1."""

    elements: list[Element]
    width: int
    height: int
    by_ref: dict[str, Element] = field(default_factory=dict, repr=False)
    # The soft keyboard's window while one is up (a top-level node of an input method's package).
    keyboard: Bounds | None = None

    def __post_init__(self) -> None:
        self.by_ref = {element.ref: element for element in self.elements}

    def under_keyboard(self, element: Element) -> bool:
        """Whether the soft keyboard covers ``element``'s centre (a touch there lands on the keyboard)."""
        if self.keyboard is None or is_input_method(element.package):
            return False
        return self.keyboard.contains(*element.center)

    @classmethod
    def from_nodes(cls, nodes: list[UiNode], width: int = 0, height: int = 0) -> ScreenSnapshot:
        """The snapshot of a UI dump; the screen size defaults to the root node's bounds."""
        if (not width or not height) and nodes:
            root = nodes[0].bounds
            width, height = width or root.right, height or root.bottom
        candidates: list[tuple[int, int, int, UiNode, tuple[int, int]]] = []
        seen: set[tuple[Any, ...]] = set()
        for order, node in enumerate(nodes):
            center = _visible_center(node.bounds, width, height)
            if center is None:
                continue
            own = (node.text if not node.password else "").strip() or node.content_desc.strip()
            editable = role_of(node) == "input"
            interactive = node.clickable or node.checkable or node.scrollable or node.long_clickable
            if not own and not interactive and not editable:
                continue
            key = (node.class_name, node.resource_id, node.text, node.content_desc, node.bounds)
            if key in seen:
                continue
            seen.add(key)
            candidates.append((node.bounds.top, node.bounds.left, order, node, center))
        candidates.sort(key=lambda item: item[:3])
        elements = []
        for number, (_, _, _, node, center) in enumerate(candidates, 1):
            text = "" if node.password else _clean(node.text)
            desc = _clean(node.content_desc)
            label = text or desc or _clean(_inner_text(node))
            if not label and node.resource_id:
                label = node.resource_id.rsplit("/", 1)[-1]
            elements.append(
                Element(
                    ref=f"@e{number}",
                    text=text,
                    desc=desc,
                    resource_id=node.resource_id,
                    class_name=node.class_name,
                    role=role_of(node),
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
                )
            )
        keyboard = next((n.bounds for n in nodes if n.depth == 0 and is_input_method(n.package)), None)
        return cls(elements, width, height, keyboard=keyboard)

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


class LocatorError(ValueError):
    """A target that is neither a ref nor a locator; the message says what the forms are."""


@dataclass(frozen=True)
class Target:
    """A parsed target: a ref (``@e12``) or a locator (``key`` = ``value``)."""

    ref: str | None = None
    key: str = ""
    value: str = ""

    def __str__(self) -> str:
        return self.ref if self.ref is not None else f"{self.key}={self.value}"

    def matches(self, element: Element) -> bool:
        match = _MATCHERS.get(self.key)
        return match is not None and match(element, self.value)

    def find(self, snapshot: ScreenSnapshot) -> list[Element]:
        """The locator's matches in reading order (``text=`` falls back to a case-insensitive match)."""
        found = [element for element in snapshot.elements if self.matches(element)]
        if not found and self.key == "text":
            wanted = self.value.casefold()
            found = [element for element in snapshot.elements if element.text.casefold() == wanted]
        return found



def _id_matches(element: Element, value: str) -> bool:
    """``id=`` with or without the package: ``com.app:id/name``, ``name``, or ``android:id/name``."""
    rid = element.resource_id
    return bool(rid) and (rid == value or rid.endswith(f":id/{value}") or rid.endswith(f":{value}"))


# What each locator key compares (the same keys as LOCATOR_KEYS, in its order).
_MATCHERS: dict[str, Callable[[Element, str], bool]] = {
    "text": lambda element, value: element.text == value,
    "textContains": lambda element, value: value.casefold() in element.text.casefold(),
    "id": _id_matches,
    "desc": lambda element, value: element.desc == value,
    "descContains": lambda element, value: value.casefold() in element.desc.casefold(),
    "class": lambda element, value: value in (element.class_name, element.class_name.rsplit(".", 1)[-1]),
    "role": lambda element, value: element.role == value,
}

FORMS = (
    "a ref from list_elements (@e12), or a locator: text=…, textContains=…, id=…, desc=…, "
    "descContains=…, class=…, role=… (button, input, switch, checkbox, list, image, text)"
)


def parse_target(text: str) -> Target:
    """``@e12`` or ``key=value``; LocatorError naming the forms otherwise."""
    if not isinstance(text, str):
        raise LocatorError(f"a target must be a string: {FORMS}")
    stripped = text.strip()
    if stripped.startswith("@"):
        if REF_PATTERN.fullmatch(stripped) is None:
            raise LocatorError(f"{stripped!r} is not a ref; refs look like @e12. A target is {FORMS}")
        return Target(ref=stripped)
    key, sep, value = stripped.partition("=")
    key = key.strip()
    if not sep or key not in LOCATOR_KEYS:
        raise LocatorError(f"{text!r} is not a target. A target is {FORMS}")
    value = value.strip()
    if not value:
        raise LocatorError(f"the locator {key}= needs a value, e.g. {key}=Settings")
    if key == "role" and value not in ROLES:
        raise LocatorError(f"role={value} is not a role; the roles are {', '.join(ROLES)}")
    return Target(key=key, value=value)
