"""Recording flows: tool calls from any channel become Maestro commands, written out as a flow.

``FlowRecorder`` is told each call that changed the phone (``add``): the tool, its arguments and, for a
call that acted on an element, that element and the screen it was on. It writes the command a person
would mean: ``tapOn`` by the element's own text or description, else its id when no other node has it,
else — a list row with no text of its own — the label inside it (``containsDescendants``), else its id
with ``index``; a ``point`` only when nothing identifies the element, with a comment in the flow saying
so. A tap on a point is the element the finger lands on (the smallest clickable node there), named the
same way. Text is written as screen text (``3:17 PM``, never the phone's narrow no-break space).
``commands_from_task`` does the same for an agent task's record (its calls and their answers).
``flow_yaml`` writes a header and commands as a flow the flow reader reads back. Pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..device.interface import UiNode
from ..device.screen_text import screen_text
from .keys import MAESTRO_NAMES
from .locator_syntax import Clause, SyntaxProblem, format_clauses, parse_clauses
from .selectors import UiScreen, find

COMMENT = "#"  # a comment line in a recorded flow, as a (COMMENT, text) command

_REGEX_SPECIALS = re.compile(r"([.^$*+?()\[\]{}|\\])")
_PLAIN = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_ ./&()',!?+-]*")


def regex_literal(text: str) -> str:
    """``text`` as a Maestro text pattern that matches exactly it."""
    return _REGEX_SPECIALS.sub(r"\\\1", text)


def yaml_scalar(value: Any) -> str:
    """A scalar as flow YAML writes it: plain when safe, else double-quoted (JSON's escapes are YAML's)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    text = str(value)
    if (
        _PLAIN.fullmatch(text)
        and text.strip() == text
        and text.lower() not in ("true", "false", "null", "yes", "no")
    ):
        if not re.fullmatch(r"[-+]?[0-9.]+", text):
            return text
    return json.dumps(text, ensure_ascii=False)


def command_yaml(name: str, value: Any) -> list[str]:
    """One ``- name: value`` item as lines (a dict value on indented lines, a list of dicts as items);
    a ``COMMENT`` as a ``#`` line."""
    if name == COMMENT:
        return [f"# {line}" for line in str(value).splitlines()]
    if value is None:
        return [f"- {name}"]
    if not isinstance(value, dict):
        return [f"- {name}: {yaml_scalar(value)}"]
    lines = [f"- {name}:"]
    for key, inner in value.items():
        lines += _mapping_lines(key, inner, "    ")
    return lines


def _mapping_lines(key: str, value: Any, indent: str) -> list[str]:
    """``key: value`` at ``indent``: nested selectors and lists of them written out in block style."""
    if isinstance(value, dict):
        out = [f"{indent}{key}:"]
        for inner_key, inner in value.items():
            out += _mapping_lines(inner_key, inner, indent + "  ")
        return out
    if isinstance(value, list):
        out = [f"{indent}{key}:"]
        for item in value:
            item_lines: list[str] = []
            for inner_key, inner in item.items():
                item_lines += _mapping_lines(inner_key, inner, indent + "    ")
            out.append(f"{indent}  - {item_lines[0].strip()}")
            out += item_lines[1:]
        return out
    return [f"{indent}{key}: {yaml_scalar(value)}"]


def flow_yaml(app_id: str, commands: list[tuple[str, Any]], name: str = "") -> str:
    """A whole flow: header, ``---``, the commands."""
    header = [f"appId: {yaml_scalar(app_id or 'com.android.settings')}"]
    if name:
        header.append(f"name: {yaml_scalar(name)}")
    body = [line for command, value in commands for line in command_yaml(command, value)]
    return "\n".join([*header, "---", *body]) + "\n"


def _short_id(resource_id: str) -> str:
    return resource_id.split(":id/", 1)[1] if ":id/" in resource_id else resource_id


def _own_label(node: UiNode) -> str:
    return screen_text("" if node.password else node.text) or screen_text(node.content_desc)


def _inner_label(node: UiNode) -> str:
    """The first label inside ``node`` (depth first): what a person reads on a row with no text."""
    stack = list(reversed(node.children))
    while stack:
        current = stack.pop()
        label = _own_label(current)
        if label:
            return label
        stack.extend(reversed(current.children))
    return ""


def _naming(selector: dict[str, Any], node: UiNode, screen: UiScreen, indexed: bool) -> dict[str, Any] | None:
    """``selector`` if it finds ``node`` first; with ``indexed``, else with the ``index`` that finds it."""
    found = find(selector, screen)
    if found and found[0] is node:
        return selector
    if not indexed or not any(candidate is node for candidate in found):
        return None
    in_order = sorted(found, key=lambda candidate: (candidate.bounds.top, candidate.bounds.left))
    guess = next(place for place, candidate in enumerate(in_order) if candidate is node)
    for index in (guess, *range(len(found))):
        hit = find({**selector, "index": index}, screen)
        if hit and hit[0] is node:
            return {**selector, "index": index}
    return None


def selector_for(node: UiNode, screen: UiScreen) -> dict[str, Any] | None:
    """How a flow names ``node`` on ``screen``: its own text or description (with ``index`` when several
    nodes show it); else its id when it finds the node alone; else the label inside it (a list row);
    else its id with ``index``. None when nothing identifies it (then a point is the only way)."""
    text = screen_text("" if node.password else node.text)
    desc = screen_text(node.content_desc)
    short = regex_literal(_short_id(node.resource_id)) if node.resource_id else ""
    for label in (text, desc):
        if label:
            named = _naming({"text": regex_literal(label)}, node, screen, indexed=True)
            if named is not None:
                return named
    if short and (named := _naming({"id": short}, node, screen, indexed=False)) is not None:
        return named
    inner = _inner_label(node) if not text and not desc else ""
    if inner:
        by_label: dict[str, Any] = {"containsDescendants": [{"text": regex_literal(inner)}]}
        for selector in (by_label, {"id": short, **by_label} if short else None):
            if selector is not None and (named := _naming(selector, node, screen, indexed=False)):
                return named
        if (named := _naming(by_label, node, screen, indexed=True)) is not None:
            return named
    if short:
        return _naming({"id": short}, node, screen, indexed=True)
    return None


def _touchable(node: UiNode) -> bool:
    return node.clickable or node.long_clickable or node.checkable


def nodes_at(screen: UiScreen, x: int, y: int) -> list[UiNode]:
    """What a finger at (x, y) acts on, in the order a person would name it: the smallest node there
    that something identifies (its text, description or id) when it lies inside the clickable node
    taking the touch (the label a person taps on a row); that clickable node (a row, tapped beside its
    label); the smallest identified node there."""
    best: UiNode | None = None
    named: UiNode | None = None
    for node in screen.nodes:
        if not node.bounds.contains(x, y):
            continue
        area = node.bounds.width * node.bounds.height
        if _touchable(node) and (best is None or area <= best.bounds.width * best.bounds.height):
            best = node
        if _own_label(node) or node.resource_id:
            if named is None or area <= named.bounds.width * named.bounds.height:
                named = node
    if best is None or named is None:
        return [node for node in (best, named) if node is not None]
    if named is best or any(up is best for up in screen.ancestors(named)):
        return [named, best] if named is not best else [best]
    return [best, named]


def node_at(screen: UiScreen, x: int, y: int) -> UiNode | None:
    """The node a finger at (x, y) acts on, as a person names it (the first of ``nodes_at``)."""
    found = nodes_at(screen, x, y)
    return found[0] if found else None


_MAESTRO_PLAIN = {
    "text": lambda value: {"text": regex_literal(screen_text(value))},
    "desc": lambda value: {"text": regex_literal(screen_text(value))},
    "textContains": lambda value: {"text": f"(?i).*{regex_literal(screen_text(value))}.*"},
    "descContains": lambda value: {"text": f"(?i).*{regex_literal(screen_text(value))}.*"},
    "id": lambda value: {"id": f"(.*:id/)?{regex_literal(value)}"},
    "index": lambda value: {"index": int(value)},
}
_MAESTRO_RELATIONS = ("childOf", "containsChild", "below", "above", "leftOf", "rightOf")


def _clauses_selector(clauses: list[Clause] | tuple[Clause, ...]) -> dict[str, Any] | None:
    """Locator clauses (key, value, inner clauses) as one Maestro selector; None when a clause has no
    Maestro equivalent (role=, class=) or two clauses would ask the same key."""
    selector: dict[str, Any] = {}
    for clause in clauses:
        key, value, inner = clause.key, clause.value, clause.inner
        if key in _MAESTRO_PLAIN:
            part = _MAESTRO_PLAIN[key](value)
        elif key in _MAESTRO_RELATIONS or key == "containsDescendants":
            nested = _clauses_selector(inner)
            if nested is None:
                return None
            part = {key: [nested]} if key == "containsDescendants" else {key: nested}
        else:
            return None
        for name, wanted in part.items():
            if name == "containsDescendants" and name in selector:
                selector[name] = [*selector[name], *wanted]
            elif name in selector:
                return None
            else:
                selector[name] = wanted
    return selector or None


def _unliteral(pattern: str) -> str:
    """The text a ``regex_literal`` pattern stands for."""
    return re.sub(r"\\(.)", r"\1", pattern)


def selector_locator(selector: dict[str, Any]) -> str:
    """A selector ``selector_for`` wrote (text, id, index, containsDescendants of texts) as a tools'
    locator that ``locator_selector`` turns back into the same selector; "" for any other."""
    clauses: list[Clause] = []
    for key, value in selector.items():
        if key in ("text", "id") and isinstance(value, str):
            clauses.append(Clause(key, _unliteral(value)))
        elif key == "index":
            clauses.append(Clause("index", str(int(value))))
        elif key == "containsDescendants" and isinstance(value, list):
            for inner in value:
                nested = selector_locator(inner)
                if not nested:
                    return ""
                clauses.append(Clause(key, inner=tuple(parse_clauses(nested))))
        else:
            return ""
    return format_clauses(clauses) if clauses else ""


def locator_selector(target: str) -> dict[str, Any] | None:
    """A tools' locator (``text=OK``, ``id=title; index=2``, ``role=button;
    containsDescendants=(text=Wi-Fi)``) as a Maestro selector; None for a ref, or for a locator that
    names what Maestro cannot (``role=``, ``class=``)."""
    if target.strip().startswith("@"):
        return None
    try:
        clauses = parse_clauses(target.strip())
    except SyntaxProblem:
        return None
    return _clauses_selector(clauses)


@dataclass
class Acted:
    """What a call acted on, found before it ran: the selector naming it, else the point (and ``note``,
    why a point: written into the flow as a comment)."""

    selector: dict[str, Any] | None = None
    point: tuple[int, int] | None = None
    note: str = ""


def _tap_like(name: str) -> Callable[[dict[str, Any], Acted | None], list[tuple[str, Any]]]:
    def convert(args: dict[str, Any], acted: Acted | None) -> list[tuple[str, Any]]:
        command = "doubleTapOn" if name == "tapOn" and args.get("double") else name
        if acted is not None and acted.selector is not None:
            return [(command, _shorthand(acted.selector))]
        point = acted.point if acted is not None and acted.point is not None else None
        if point is None and "x" in args and "y" in args:
            point = (int(args["x"]), int(args["y"]))
        if point is None:
            return []
        out: list[tuple[str, Any]] = [(COMMENT, acted.note)] if acted is not None and acted.note else []
        return [*out, (command, {"point": f"{point[0]},{point[1]}"})]

    return convert


def _shorthand(selector: dict[str, Any]) -> Any:
    return selector["text"] if list(selector) == ["text"] else selector


def _swipe(args: dict[str, Any], acted: Acted | None) -> list[tuple[str, Any]]:
    if "direction" in args:
        return [("swipe", {"direction": str(args["direction"]).upper()})]
    if all(key in args for key in ("startX", "startY", "endX", "endY")):
        return [
            (
                "swipe",
                {"start": f"{args['startX']},{args['startY']}", "end": f"{args['endX']},{args['endY']}"},
            )
        ]
    return []


def _type_text(args: dict[str, Any], acted: Acted | None) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    if "target" in args:
        out += _tap_like("tapOn")({}, acted)
    if args.get("clear"):
        out.append(("eraseText", None))
    out.append(("inputText", str(args["text"])))
    if args.get("submit"):
        out.append(("pressKey", "Enter"))
    return out


def _type_secret(args: dict[str, Any], acted: Acted | None) -> list[tuple[str, Any]]:
    """A secret by its name, never its value: ``inputText: ${secret:NAME}`` (the runner types it back
    through type_secret)."""
    return _type_text({**args, "text": "${secret:" + str(args["name"]) + "}"}, acted)


def _press_key(args: dict[str, Any], acted: Acted | None) -> list[tuple[str, Any]]:
    key = str(args["key"])
    if key.lower() == "back":
        return [("back", None)]
    name = MAESTRO_NAMES.get(key.lower(), MAESTRO_NAMES.get(key.upper(), key))
    return [("pressKey", name)]


def _selector_call(
    command: str, key: str = "target"
) -> Callable[[dict[str, Any], Acted | None], list[tuple[str, Any]]]:
    def convert(args: dict[str, Any], acted: Acted | None) -> list[tuple[str, Any]]:
        selector = (acted.selector if acted is not None else None) or locator_selector(str(args.get(key, "")))
        return [(command, _shorthand(selector))] if selector else []

    return convert


def _wait_for(args: dict[str, Any], acted: Acted | None) -> list[tuple[str, Any]]:
    selector = (acted.selector if acted is not None else None) or locator_selector(str(args["target"]))
    if selector is None or args["condition"] not in ("visible", "gone"):
        return []
    key = "visible" if args["condition"] == "visible" else "notVisible"
    return [("extendedWaitUntil", {key: selector, "timeout": int(args.get("timeoutMs", 5000))})]


def _scroll_to(args: dict[str, Any], acted: Acted | None) -> list[tuple[str, Any]]:
    selector = locator_selector(str(args["target"]))
    if selector is None:
        return []
    direction = {"down": "DOWN", "up": "UP", "left": "LEFT", "right": "RIGHT"}.get(
        str(args.get("direction", "down")), "DOWN"
    )
    return [("scrollUntilVisible", {"element": selector, "direction": direction})]


# Each tool that changes the phone, as the commands it records; tools not here record nothing.
CONVERTERS: dict[str, Callable[[dict[str, Any], Acted | None], list[tuple[str, Any]]]] = {
    "tap": _tap_like("tapOn"),
    "long_press": _tap_like("longPressOn"),
    "swipe": _swipe,
    "scroll_to": _scroll_to,
    "type_text": _type_text,
    "type_secret": _type_secret,
    "press_key": _press_key,
    "open_app": lambda args, acted: [("launchApp", args["packageName"])],
    "stop_app": lambda args, acted: [("stopApp", args["packageName"])],
    "open_url": lambda args, acted: [("openLink", args["url"])],
    "wait_for": _wait_for,
    "assert_visible": _selector_call("assertVisible"),
    "assert_not_visible": _selector_call("assertNotVisible"),
}
# Tools whose element the recorder looks up before the call runs (a tap moves the screen on).
ELEMENT_TOOLS = (
    "tap",
    "long_press",
    "type_text",
    "type_secret",
    "assert_visible",
    "assert_not_visible",
    "wait_for",
)


@dataclass
class FlowRecorder:
    """Records while ``active``: ``add`` each call; ``stop`` answers the flow."""

    active: bool = False
    app_id: str = ""
    commands: list[tuple[str, Any]] = field(default_factory=list)

    def start(self, app_id: str = "") -> None:
        self.active, self.app_id, self.commands = True, app_id, []

    def add(self, tool: str, args: dict[str, Any], acted: Acted | None = None) -> None:
        converter = CONVERTERS.get(tool)
        if not self.active or converter is None:
            return
        for command in converter(args, acted):
            if command[0] == "launchApp" and not self.app_id:
                self.app_id = command[1]
            self.commands.append(command)

    def count(self) -> int:
        """How many commands are recorded (comments aside)."""
        return sum(1 for command, _ in self.commands if command != COMMENT)

    def stop(self, name: str = "") -> str:
        """The flow recorded; its appId is the first app it launched, else the app it began in."""
        self.active = False
        launched = next((value for command, value in self.commands if command == "launchApp"), None)
        return flow_yaml(launched or self.app_id, self.commands, name)


def commands_from_task(calls: list[tuple[str, dict[str, Any], str, bool, str, str]]) -> list[tuple[str, Any]]:
    """An agent task's successful calls (name, args, answer, ok, what it acted on as a locator, the
    point in device pixels) as flow commands: the element by its text, description or id, else the
    point; a call on an element nothing identifies is left out rather than guessed."""
    out: list[tuple[str, Any]] = []
    for name, args, _answer, ok, target, point in calls:
        converter = CONVERTERS.get(name)
        if not ok or converter is None:
            continue
        acted: Acted | None = None
        if target:
            acted = Acted(selector=locator_selector(target))
        if (acted is None or acted.selector is None) and point:
            x, _, y = point.partition(",")
            acted = Acted(point=(int(x), int(y)))
        if (acted is None and name in ("tap", "long_press")) or (
            name == "type_text" and acted is None and "target" in args
        ):
            continue
        out += converter({key: value for key, value in args.items() if key not in ("x", "y")}, acted)
    return out
