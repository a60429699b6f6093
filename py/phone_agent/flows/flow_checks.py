"""What the reader checks of each command beyond its keys' kinds, one function a command (``CHECKS``):
defaults from the header (``appId``), rules between keys (swipe's direction or start and end), values
Maestro validates when it reads a flow (key names, travel points, airplane mode's value), and the parts
read from other files or nodes: runFlow's, retry's and repeat's commands, conditions, runScript's text,
addMedia's bytes. Each raises the reader's ``FlowError`` naming the line and column. Pure.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Any, Protocol

from ..device.shell_args import ShellValueError, permission_name
from . import grammar as g
from .keys import maestro_key
from .model import Flow, FlowCommand, FlowError
from .yaml_nodes import Node, scalar_value

MAX_REPEAT = 1_000  # the most rounds a repeat runs: more is refused when read, never cut short
MAX_RETRIES = 3  # Maestro's own ceiling on retry's maxRetries
MEDIA_TYPES = ("png", "jpeg", "jpg", "gif", "mp4")
_PERMISSION_STATES = ("allow", "deny", "unset")
_COORDINATE = re.compile(r"\s*-?[0-9]+(\.[0-9]+)?\s*")


class ReadingPort(Protocol):
    """What a check uses of the reading it is part of (``flow_reader.ReadingPort``)."""

    app_id: str

    def check_app_id(self, value: str, node: Node | None, line: int = 1, column: int = 1) -> str: ...

    def error(self, message: str, node: Node | None, line: int = 1, column: int = 1) -> FlowError: ...

    def commands(self, node: Node) -> list[FlowCommand]: ...

    def include(self, name: str, at: Node | None, command: FlowCommand) -> Flow: ...

    def file_text(self, name: str, at: Node | None, command: FlowCommand) -> tuple[str, str]: ...

    def media_data(self, name: str, at: Node | None, command: FlowCommand) -> tuple[str, str]: ...


Check = Callable[[ReadingPort, FlowCommand, "Node | None"], None]


def repeat_bound(times: object) -> str:
    """Why a repeat's ``times`` is refused."""
    return f"repeat times must be from 0 to {MAX_REPEAT} (the most rounds a repeat runs), not {times}"


def _at(value: Node | None, key: str) -> Node | None:
    return value.get(key) if value is not None and value.kind == "map" else value


def _app(reading: ReadingPort, command: FlowCommand, value: Node | None) -> None:
    args = command.args
    if "url" in args:
        args.setdefault("appId", args.pop("url"))
    elif args.get("appId"):
        reading.check_app_id(str(args["appId"]), _at(value, "appId"), command.line, command.column)
    if not args.get("appId"):
        if not reading.app_id:
            raise reading.error(
                f"{command.name} needs an appId (in the header or here)", value, command.line, command.column
            )
        args["appId"] = reading.app_id


def _launch_app(reading: ReadingPort, command: FlowCommand, value: Node | None) -> None:
    _app(reading, command, value)
    args = command.args
    if isinstance(args.get("permissions"), Node):
        node = args["permissions"]
        if node.kind != "map":
            raise reading.error("permissions must be `name: allow | deny | unset` lines", node)
        found: dict[str, str] = {}
        for key, state in node.pairs:
            if str(key.value) != "all":
                try:
                    permission_name(str(key.value))
                except ShellValueError as exc:
                    raise reading.error(f"the permission {exc.problem}: {exc.remedy}", key) from None
            word = str(state.value) if state.kind == "scalar" else ""
            if word not in _PERMISSION_STATES:
                raise reading.error(f"the permission {key.value} must be allow, deny or unset", state)
            found[str(key.value)] = word
        args["permissions"] = found
    if isinstance(args.get("arguments"), Node):
        node = args["arguments"]
        if node.kind != "map":
            raise reading.error("arguments must be `name: value` lines", node)
        arguments: dict[str, Any] = {}
        for key, item in node.pairs:
            if item.kind != "scalar" or item.value is None:
                raise reading.error(
                    f"the launch argument {key.value} must be a text, number or boolean", item
                )
            arguments[str(key.value)] = scalar_value(item)
        args["arguments"] = arguments


def _press_key(reading: ReadingPort, command: FlowCommand, value: Node | None) -> None:
    key = str(command.args["key"])
    if maestro_key(key) is None:
        raise reading.error(f"unknown key {key!r} for pressKey", _at(value, "key") or value)


def _swipe(reading: ReadingPort, command: FlowCommand, value: Node | None) -> None:
    args = command.args
    where = (value, command.line, command.column)
    if "start" in args or "end" in args:
        if "direction" in args:
            raise reading.error("swipe takes a direction, or start and end, not both", *where)
        if "start" not in args or "end" not in args:
            raise reading.error("swipe needs both start and end to swipe between points", *where)
        for key in ("start", "end"):
            _point(
                reading,
                str(args[key]),
                _at(value, key),
                relative=any("%" in str(args[k]) for k in ("start", "end")),
            )
        return
    if "direction" not in args:
        raise reading.error("swipe needs a direction (UP, DOWN, LEFT, RIGHT), or start and end", *where)
    _direction(reading, args, value)


def _point(reading: ReadingPort, text: str, node: Node | None, relative: bool) -> None:
    if "${" in text:
        return
    parts = text.replace("%", "").split(",")
    if len(parts) != 2 or not all(_COORDINATE.fullmatch(part) for part in parts):
        raise reading.error(f"{text!r} is not a point: write x, y in pixels or x%, y% of the screen", node)
    if relative and ("%" not in text or not all(0 <= float(part) <= 100 for part in parts)):
        raise reading.error(f"{text!r}: a swipe in % needs both points in %, each from 0 to 100", node)


def _direction(reading: ReadingPort, args: dict[str, Any], value: Node | None) -> None:
    direction = str(args.get("direction", "DOWN"))
    if "${" not in direction and direction.upper() not in g.SWIPE_DIRECTIONS:
        raise reading.error(
            f"direction must be one of UP, DOWN, LEFT, RIGHT, not {direction!r}", _at(value, "direction")
        )
    if "direction" in args and "${" not in direction:
        args["direction"] = direction.upper()


def _scroll_until_visible(reading: ReadingPort, command: FlowCommand, value: Node | None) -> None:
    _direction(reading, command.args, value)
    percentage = command.args.get("visibilityPercentage")
    if isinstance(percentage, int):
        command.args["visibilityPercentage"] = min(max(percentage, 0), 100)


def _extended_wait(reading: ReadingPort, command: FlowCommand, value: Node | None) -> None:
    if "visible" not in command.args and "notVisible" not in command.args:
        raise reading.error(
            "extendedWaitUntil needs visible or notVisible", value, command.line, command.column
        )


def _condition(reading: ReadingPort, command: FlowCommand, key: str) -> None:
    if key in command.args:
        command.condition = command.args.pop(key)


def _inner(reading: ReadingPort, command: FlowCommand, value: Node | None) -> None:
    """runFlow's and retry's: a file or commands (one of them), their env, runFlow's ``when``."""
    args = command.args
    _condition(reading, command, "when")
    command.env = args.pop("env", {}) or {}
    commands = args.pop("commands", None)
    where = (value, command.line, command.column)
    if commands is not None and "file" in args:
        raise reading.error(f"{command.name} takes a file or commands, not both", *where)
    if commands is None and not args.get("file"):
        raise reading.error(f"{command.name} needs a file or commands", *where)
    if commands is not None:
        command.commands = reading.commands(commands)
        return
    flow = reading.include(str(args["file"]), _at(value, "file"), command)
    command.commands = flow.commands
    command.on_start, command.on_complete = flow.on_start, flow.on_complete
    command.env = {**flow.env, **command.env}


def _retry(reading: ReadingPort, command: FlowCommand, value: Node | None) -> None:
    _inner(reading, command, value)
    retries = command.args.get("maxRetries", 1)
    if isinstance(retries, (int, float)) and not 0 <= retries:
        raise reading.error("maxRetries must be 0 or more", _at(value, "maxRetries"))


def _repeat(reading: ReadingPort, command: FlowCommand, value: Node | None) -> None:
    _condition(reading, command, "while")
    command.commands = reading.commands(command.args.pop("commands"))
    times = command.args.get("times")
    if isinstance(times, (int, float)) and not 0 <= times <= MAX_REPEAT:
        raise reading.error(repeat_bound(times), _at(value, "times"))


def _run_script(reading: ReadingPort, command: FlowCommand, value: Node | None) -> None:
    _condition(reading, command, "when")
    command.env = command.args.pop("env", {}) or {}
    path, text = reading.file_text(str(command.args["file"]), _at(value, "file"), command)
    command.script = text
    command.args["path"] = path


def _set_location(reading: ReadingPort, command: FlowCommand, value: Node | None) -> None:
    for key, bound in (("latitude", 90.0), ("longitude", 180.0)):
        text = str(command.args[key])
        if "${" in text:
            continue
        number = _float(text)
        if number is None or abs(number) > bound:
            raise reading.error(
                f"{key} must be a number from -{bound:g} to {bound:g}, not {text!r}", _at(value, key)
            )


def _travel(reading: ReadingPort, command: FlowCommand, value: Node | None) -> None:
    points = command.args["points"]
    node = _at(value, "points")
    if not points:
        raise reading.error("travel needs at least one point (latitude, longitude)", node)
    for index, point in enumerate(points):
        parts = str(point).split(",")
        numbers = [_float(part) for part in parts] if len(parts) == 2 else []
        if len(numbers) != 2 or None in numbers:
            item = node.value[index] if node is not None and node.kind == "seq" else node
            raise reading.error(f"invalid travel point {point!r}: write latitude, longitude", item)
    speed = command.args.get("speed")
    if speed is not None and not speed > 0:
        raise reading.error("travel speed must be more than 0 (metres a second)", _at(value, "speed"))


def _add_media(reading: ReadingPort, command: FlowCommand, value: Node | None) -> None:
    files = command.args["files"]
    node = _at(value, "files") if value is not None and value.kind == "map" else value
    if not files:
        raise reading.error("addMedia: media files cannot be empty", node, command.line, command.column)
    for index, name in enumerate(files):
        item = node.value[index] if node is not None and node.kind == "seq" else node
        extension = str(name).rsplit(".", 1)[-1].lower() if "." in str(name) else ""
        if extension not in MEDIA_TYPES:
            raise reading.error(
                f"{name!r}: addMedia takes {', '.join('.' + kind for kind in MEDIA_TYPES)} files", item
            )
        command.media.append(reading.media_data(str(name), item, command))


def _airplane(reading: ReadingPort, command: FlowCommand, value: Node | None) -> None:
    word = str(command.args["value"]).strip()
    if value is not None and value.kind == "scalar":
        word = "enabled" if "enabled" in word else "disabled" if "disabled" in word else word
    if word not in ("enabled", "disabled"):
        raise reading.error(
            f"setAirplaneMode takes enabled or disabled (or value: enabled | disabled), not {word!r}",
            _at(value, "value") or value,
        )
    command.args["value"] = word


def _path(reading: ReadingPort, command: FlowCommand, value: Node | None) -> None:
    if not str(command.args["path"]).strip():
        raise reading.error(
            f"{command.name} needs a path", _at(value, "path") or value, command.line, command.column
        )


def _texts(default_key: str) -> Check:
    def check(reading: ReadingPort, command: FlowCommand, value: Node | None) -> None:
        command.args.setdefault(default_key, "")

    return check


def _ai(reading: ReadingPort, command: FlowCommand, value: Node | None) -> None:
    """Maestro's AI commands are optional unless the flow says ``optional: false``."""
    if _at(value, "optional") is None or value is None or value.kind != "map":
        command.optional = True


def _float(text: str) -> float | None:
    try:
        number = float(text.strip())
    except ValueError:
        return None
    return number if math.isfinite(number) else None


CHECKS: dict[str, Check] = {
    "launchApp": _launch_app,
    "stopApp": _app,
    "killApp": _app,
    "clearState": _app,
    "pressKey": _press_key,
    "swipe": _swipe,
    "scrollUntilVisible": _scroll_until_visible,
    "extendedWaitUntil": _extended_wait,
    "runFlow": _inner,
    "retry": _retry,
    "repeat": _repeat,
    "runScript": _run_script,
    "setLocation": _set_location,
    "travel": _travel,
    "addMedia": _add_media,
    "setAirplaneMode": _airplane,
    "takeScreenshot": _path,
    "startRecording": _path,
    "assertTrue": _texts("condition"),
    "inputText": _texts("text"),
    "evalScript": _texts("script"),
    "assertWithAI": _ai,
    "assertNoDefectsWithAI": _ai,
    "extractTextWithAI": _ai,
}
