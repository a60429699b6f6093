"""Recording flows: tool calls from any channel become Maestro commands, written out as a flow.

``FlowRecorder`` is told each call that changed the phone (``add``): the tool, its arguments and, for a
call that acted on an element, that element and the screen it was on. It writes the command a person
would: ``tapOn`` by the element's text, else its id, else its description (with ``index`` when several
match), a ``point`` only when nothing identifies it. ``commands_from_task`` does the same for an agent
task's record (its calls and their answers). ``flow_yaml`` writes a header and commands as a flow the
flow reader reads back. Pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..device.interface import UiNode
from .keys import MAESTRO_NAMES
from .selectors import UiScreen, find

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
    """One ``- name: value`` item as lines (a dict value on indented lines)."""
    if value is None:
        return [f"- {name}"]
    if not isinstance(value, dict):
        return [f"- {name}: {yaml_scalar(value)}"]
    lines = [f"- {name}:"]
    for key, inner in value.items():
        if isinstance(inner, dict):
            lines.append(f"    {key}:")
            lines += [f"      {k}: {yaml_scalar(v)}" for k, v in inner.items()]
        else:
            lines.append(f"    {key}: {yaml_scalar(inner)}")
    return lines


def flow_yaml(app_id: str, commands: list[tuple[str, Any]], name: str = "") -> str:
    """A whole flow: header, ``---``, the commands."""
    header = [f"appId: {yaml_scalar(app_id or 'com.android.settings')}"]
    if name:
        header.append(f"name: {yaml_scalar(name)}")
    body = [line for command, value in commands for line in command_yaml(command, value)]
    return "\n".join([*header, "---", *body]) + "\n"


def selector_for(node: UiNode, screen: UiScreen) -> dict[str, Any] | None:
    """How a flow names ``node`` on ``screen``: text, else id, else description; None when nothing
    identifies it (then a point is the only way)."""
    choices: list[dict[str, Any]] = []
    text = ("" if node.password else node.text).strip()
    if text:
        choices.append({"text": regex_literal(text)})
    if node.resource_id:
        rid = node.resource_id.split(":id/", 1)[1] if ":id/" in node.resource_id else node.resource_id
        choices.append({"id": regex_literal(rid)})
    if node.content_desc.strip():
        choices.append({"text": regex_literal(node.content_desc.strip())})
    for selector in choices:
        found = find(selector, screen)
        for index, candidate in enumerate(found):
            if candidate is node or (candidate.bounds == node.bounds and candidate.text == node.text):
                return selector if index == 0 else {**selector, "index": index}
    return None


def node_at(screen: UiScreen, x: int, y: int) -> UiNode | None:
    """The smallest node at (x, y) that something identifies (text, description or id)."""
    best: UiNode | None = None
    for node in screen.nodes:
        if not node.bounds.contains(x, y):
            continue
        if not ((node.text and not node.password) or node.content_desc or node.resource_id):
            continue
        if best is None or node.bounds.width * node.bounds.height <= best.bounds.width * best.bounds.height:
            best = node
    return best


def locator_selector(target: str) -> dict[str, Any] | None:
    """A tools' locator (``text=OK``) as a Maestro selector; None for a ref or an unknown key."""
    key, sep, value = target.partition("=")
    if not sep:
        return None
    value = value.strip()
    return {
        "text": {"text": regex_literal(value)},
        "desc": {"text": regex_literal(value)},
        "textContains": {"text": f"(?i).*{regex_literal(value)}.*"},
        "descContains": {"text": f"(?i).*{regex_literal(value)}.*"},
        "id": {"id": f"(.*:id/)?{regex_literal(value)}"},
    }.get(key.strip())


@dataclass
class Acted:
    """What a call acted on, found before it ran: the selector naming it, else the point."""

    selector: dict[str, Any] | None = None
    point: tuple[int, int] | None = None


def _tap_like(name: str) -> Callable[[dict[str, Any], Acted | None], list[tuple[str, Any]]]:
    def convert(args: dict[str, Any], acted: Acted | None) -> list[tuple[str, Any]]:
        command = "doubleTapOn" if name == "tapOn" and args.get("double") else name
        if acted is not None and acted.selector is not None:
            return [(command, _shorthand(acted.selector))]
        if acted is not None and acted.point is not None:
            return [(command, {"point": f"{acted.point[0]},{acted.point[1]}"})]
        if "x" in args and "y" in args:
            return [(command, {"point": f"{args['x']},{args['y']}"})]
        return []

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
