"""Reading a Maestro flow: its header (``appId``, ``name``, ``env``), ``---``, and its commands, each
checked against the command table when the flow is read — an unknown command, an unknown key or a value
of the wrong kind is a ``FlowError`` naming it and its line and column, never a step skipped later.

``COMMANDS`` is the table: every command phone-agent runs, with its shorthand (``tapOn: Settings`` is
``tapOn: {text: Settings}``), its keys and which of them are selectors. ``runFlow: file.yaml`` is
resolved while reading, from the files the caller sent (the command line sends the files it read) or
from the page's saved flows by name. Pure: text in, a ``Flow`` out.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..device.shell_args import ShellValueError, package_name, permission_name
from .output_paths import OutputPathError, output_path
from .yaml_reader import Node, YamlError, parse_all, scalar_value, split_documents

MAX_INCLUDE_DEPTH = 8
MAX_REPEAT = 1_000  # the most rounds a repeat runs: more is refused when read, never cut short

SELECTOR_KEYS = (
    "text",
    "id",
    "index",
    "enabled",
    "checked",
    "focused",
    "selected",
    "below",
    "above",
    "leftOf",
    "rightOf",
    "containsChild",
    "childOf",
    "containsDescendants",
    "width",
    "height",
    "tolerance",
)
_NESTED_SELECTORS = ("below", "above", "leftOf", "rightOf", "containsChild", "childOf")
_BOOL, _INT, _STR, _SEL, _ANY = "boolean", "integer", "string", "selector", "any"
_SELS = "list of selectors"
_OUT = "output path"  # a path the command writes to: it must stay under the run's folder (output_paths)
_SELECTOR_TYPES = {
    "text": _STR,
    "id": _STR,
    "index": _INT,
    "enabled": _BOOL,
    "checked": _BOOL,
    "focused": _BOOL,
    "selected": _BOOL,
    "width": _INT,
    "height": _INT,
    "tolerance": _INT,
    **{key: _SEL for key in _NESTED_SELECTORS},
    "containsDescendants": _SELS,
}
COMMON_KEYS = {"optional": _BOOL, "label": _STR}


class FlowError(ValueError):
    """A flow that cannot be run as written: what is wrong, and where (``line``, ``column`` from 1)."""

    def __init__(self, message: str, line: int, column: int, source: str = "") -> None:
        where = f"{source}: " if source else ""
        super().__init__(f"{where}line {line}, column {column}: {message}")
        self.reason, self.line, self.column, self.source = message, line, column, source


@dataclass(frozen=True)
class CommandSpec:
    """One command of the table: its shorthand key (the value when a scalar is given), whether it
    may be given bare (``- back``), its keys and their kinds, and which key is required."""

    shorthand: str | None = None
    bare: bool = False
    keys: dict[str, str] = field(default_factory=dict)
    selector: bool = False  # the command's own keys include a selector's (tapOn, assertVisible …)
    required: tuple[str, ...] = ()


_TAP_KEYS = {
    "point": _STR,
    "retryTapIfNoChange": _BOOL,
    "waitToSettleTimeoutMs": _INT,
    "repeat": _INT,
    "delay": _INT,
}
COMMANDS: dict[str, CommandSpec] = {
    "launchApp": CommandSpec(
        "appId",
        True,
        {"appId": _STR, "clearState": _BOOL, "stopApp": _BOOL, "clearKeychain": _BOOL, "permissions": _ANY},
    ),
    "stopApp": CommandSpec("appId", True, {"appId": _STR}),
    "clearState": CommandSpec("appId", True, {"appId": _STR}),
    "tapOn": CommandSpec("text", False, _TAP_KEYS, selector=True),
    "longPressOn": CommandSpec("text", False, {"point": _STR}, selector=True),
    "doubleTapOn": CommandSpec("text", False, {"point": _STR, "delay": _INT}, selector=True),
    "inputText": CommandSpec("text", False, {"text": _STR}, required=("text",)),
    "eraseText": CommandSpec("charactersToErase", True, {"charactersToErase": _INT}),
    "pressKey": CommandSpec("key", False, {"key": _STR}, required=("key",)),
    "back": CommandSpec(None, True),
    "hideKeyboard": CommandSpec(None, True),
    "scroll": CommandSpec(None, True),
    "scrollUntilVisible": CommandSpec(
        "element",
        False,
        {
            "element": _SEL,
            "direction": _STR,
            "timeout": _INT,
            "speed": _INT,
            "visibilityPercentage": _INT,
            "centerElement": _BOOL,
        },
        required=("element",),
    ),
    "swipe": CommandSpec(
        None, False, {"direction": _STR, "start": _STR, "end": _STR, "duration": _INT, "from": _SEL}
    ),
    "assertVisible": CommandSpec("text", False, {"timeout": _INT}, selector=True),
    "assertNotVisible": CommandSpec("text", False, {"timeout": _INT}, selector=True),
    "extendedWaitUntil": CommandSpec(None, False, {"visible": _SEL, "notVisible": _SEL, "timeout": _INT}),
    "waitForAnimationToEnd": CommandSpec(None, True, {"timeout": _INT}),
    "openLink": CommandSpec(
        "link", False, {"link": _STR, "autoVerify": _BOOL, "browser": _BOOL}, required=("link",)
    ),
    "takeScreenshot": CommandSpec("path", False, {"path": _OUT}, required=("path",)),
    "copyTextFrom": CommandSpec("text", False, {}, selector=True),
    "pasteText": CommandSpec(None, True),
    "runFlow": CommandSpec("file", False, {"file": _STR, "commands": _ANY, "when": _ANY, "env": _ANY}),
    "repeat": CommandSpec(
        None, False, {"times": _INT, "while": _ANY, "commands": _ANY}, required=("commands",)
    ),
}
SWIPE_DIRECTIONS = ("UP", "DOWN", "LEFT", "RIGHT")


@dataclass
class FlowCommand:
    """One command as read: its name, its arguments (strings may still hold ``${NAME}``), where it
    stands, and for runFlow and repeat the commands inside."""

    name: str
    args: dict[str, Any]
    line: int
    column: int
    source: str = ""
    commands: list[FlowCommand] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    optional: bool = False
    label: str = ""

    def describe(self) -> str:
        """``tapOn: Settings`` — the command as a person reads it in a report."""
        if self.label:
            return self.label
        args = {key: value for key, value in self.args.items() if key not in ("optional", "label")}
        if not args:
            return self.name
        shorthand = COMMANDS[self.name].shorthand
        if list(args) == [shorthand] and not isinstance(args[shorthand], dict):
            return f"{self.name}: {_short(args[shorthand])}"
        shown = ", ".join(f"{key}: {_short(value)}" for key, value in args.items() if key != "commands")
        return f"{self.name}: {{{shown}}}"


def _short(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {_short(inner)}" for key, inner in value.items()) + "}"
    return str(value)


@dataclass
class Flow:
    """A whole flow: the header's appId, name and env, and the commands in order."""

    app_id: str
    name: str
    env: dict[str, str]
    commands: list[FlowCommand]


FlowLookup = Callable[[str], str | None]


def repeat_bound(times: object) -> str:
    """Why a repeat's ``times`` is refused."""
    return f"repeat times must be from 0 to {MAX_REPEAT} (the most rounds a repeat runs), not {times}"


def read_flow(
    text: str,
    files: dict[str, str] | None = None,
    saved: FlowLookup | None = None,
    source: str = "",
) -> Flow:
    """The flow ``text`` holds; FlowError (line and column) when it cannot be run as written.

    ``files`` maps the paths ``runFlow`` may name to their text; ``saved`` finds a saved flow's text by
    name (for ``runFlow: name``)."""
    return _FlowReading(files or {}, saved, 0).flow(text, source)


class _FlowReading:
    def __init__(self, files: dict[str, str], saved: FlowLookup | None, depth: int) -> None:
        self.files, self.saved, self.depth = files, saved, depth
        self.source = ""
        self.key_nodes: dict[str, Node] = {}  # the command being read: each key's value node

    def error(self, message: str, node: Node | None, line: int = 1, column: int = 1) -> FlowError:
        if node is not None:
            line, column = node.line, node.column
        return FlowError(message, line, column, self.source)

    def flow(self, text: str, source: str) -> Flow:
        self.source = source
        try:
            documents = parse_all(text)
        except YamlError as exc:
            raise FlowError(exc.reason, exc.line, exc.column, source) from None
        raw = split_documents(text)
        present = [(doc, lines) for doc, lines in zip(documents, raw, strict=True) if doc is not None]
        if not present:
            raise self.error(
                "the flow is empty: write the header (appId: …), then ---, then the commands", None
            )
        if len(present) > 2:
            raise self.error(
                "a flow has two parts: the header, ---, then the commands; a third --- follows", present[2][0]
            )
        header: Node | None = present[0][0] if len(present) == 2 else None
        body = present[-1][0]
        if header is None and body.kind == "map":
            raise self.error(
                "the header has no commands after it: add a line --- and then the commands", body
            )
        app_id, name, env = self.header(header)
        if body.kind != "seq":
            raise self.error("the commands must be a list, one `- command` a line", body)
        return Flow(app_id, name, env, self.commands(body, app_id))

    def header(self, node: Node | None) -> tuple[str, str, dict[str, str]]:
        if node is None:
            return "", "", {}
        if node.kind != "map":
            raise self.error("the header must be `appId: …` lines (then ---, then the commands)", node)
        app_id, name, env = "", "", {}
        for key, value in node.pairs:
            if key.value == "appId":
                app_id = self.app_id(self.string(value, "appId"), value)
            elif key.value == "name":
                name = self.string(value, "name")
            elif key.value == "env":
                env = self.env(value)
            elif key.value in ("tags", "onFlowStart", "onFlowComplete", "jsEngine", "url", "properties"):
                if key.value in ("onFlowStart", "onFlowComplete"):
                    raise self.error(f"the header key {key.value} is not supported by phone-agent", key)
            else:
                raise self.error(
                    f"unknown header key {key.value!r} (the header takes appId, name, env, tags)", key
                )
        return app_id, name, env

    def env(self, node: Node) -> dict[str, str]:
        if node.kind == "scalar" and node.value is None:
            return {}
        if node.kind != "map":
            raise self.error("env must be NAME: value lines", node)
        found = {}
        for key, value in node.pairs:
            if value.kind != "scalar":
                raise self.error(f"env {key.value} must be a text value", value)
            found[str(key.value)] = "" if value.value is None else str(value.value)
        return found

    def string(self, node: Node, what: str) -> str:
        if node.kind != "scalar" or node.value is None:
            raise self.error(f"{what} must be a text value", node)
        return str(node.value)

    def commands(self, node: Node, app_id: str) -> list[FlowCommand]:
        if node.kind != "seq":
            raise self.error("commands must be a list, one `- command` a line", node)
        return [self.command(item, app_id) for item in node.value]

    def command(self, node: Node, app_id: str) -> FlowCommand:
        if node.kind == "scalar":
            name, value = str(node.value), None
        elif node.kind == "map":
            if len(node.pairs) != 1:
                names = ", ".join(str(key.value) for key, _ in node.pairs)
                raise self.error(f"one command per `-` item, this one has {names}", node)
            key, value = node.pairs[0]
            name = str(key.value)
        else:
            raise self.error("a command is `- name` or `- name: …`", node)
        spec = COMMANDS.get(name)
        if spec is None:
            known = ", ".join(COMMANDS)
            raise self.error(f"unsupported command {name!r}: phone-agent runs {known}", node)
        args = self.arguments(name, spec, value, node)
        command = FlowCommand(name, args, node.line, node.column, self.source)
        command.optional = bool(args.pop("optional", False))
        command.label = str(args.pop("label", "") or "")
        self.complete(command, value, app_id)
        return command

    def arguments(self, name: str, spec: CommandSpec, value: Node | None, at: Node) -> dict[str, Any]:
        self.key_nodes = {}
        if value is None or (value.kind == "scalar" and value.value is None):
            if not spec.bare:
                raise self.error(f"{name} needs a value (see Maestro's documentation of {name})", at)
            return {}
        if value.kind == "scalar":
            if spec.shorthand is None:
                raise self.error(f"{name} takes keys, not a single value", value)
            if spec.shorthand == "element":
                return {"element": {"text": str(value.value)}}
            kind = spec.keys.get(spec.shorthand, _STR)
            self.key_nodes[spec.shorthand] = value
            return {spec.shorthand: self.typed(value, kind, spec.shorthand)}
        if value.kind != "map":
            raise self.error(f"{name} takes a value or keys, not a list", value)
        allowed = {**spec.keys, **COMMON_KEYS, **(_SELECTOR_TYPES if spec.selector else {})}
        args: dict[str, Any] = {}
        for key, inner in value.pairs:
            kind = allowed.get(str(key.value))
            if kind is None:
                keys = ", ".join(allowed)
                raise self.error(f"{name} has no key {key.value!r} (it takes {keys})", key)
            args[str(key.value)] = self.typed(inner, kind, str(key.value))
            self.key_nodes[str(key.value)] = inner
        for key in spec.required:
            if key not in args:
                raise self.error(f"{name} needs {key}", value)
        return args

    def typed(self, node: Node, kind: str, what: str) -> Any:
        if kind == _ANY:
            return node
        if kind == _SEL:
            return self.selector(node, what)
        if kind == _SELS:
            if node.kind != "seq" or not node.value:
                raise self.error(f"{what} must be a list of selectors, e.g. [{{text: Wi-Fi}}]", node)
            return [self.selector(item, what) for item in node.value]
        if node.kind != "scalar":
            raise self.error(f"{what} must be {'a' if kind != _INT else 'an'} {kind}", node)
        value = scalar_value(node.value, node.quoted)
        if isinstance(value, str) and "${" in value:
            return value  # known once the run's env is
        if kind == _BOOL and not isinstance(value, bool):
            raise self.error(f"{what} must be true or false, not {node.value!r}", node)
        if kind == _INT:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise self.error(f"{what} must be a number, not {node.value!r}", node)
            return int(value)
        if kind == _STR:
            return "" if node.value is None else str(node.value)
        if kind == _OUT:
            try:
                return output_path("" if node.value is None else str(node.value))
            except OutputPathError as exc:
                raise self.error(str(exc), node) from None
        return value

    def selector(self, node: Node, what: str) -> dict[str, Any]:
        if node.kind == "scalar":
            if node.value is None:
                raise self.error(f"{what} needs a selector (text, or keys such as id)", node)
            return {"text": str(node.value)}
        if node.kind != "map":
            raise self.error(f"{what} must be a selector: a text, or keys such as id, text, index", node)
        found: dict[str, Any] = {}
        for key, inner in node.pairs:
            kind = _SELECTOR_TYPES.get(str(key.value))
            if kind is None:
                raise self.error(
                    f"a selector has no key {key.value!r} (it takes {', '.join(_SELECTOR_TYPES)})", key
                )
            found[str(key.value)] = self.typed(inner, kind, str(key.value))
        return found

    def complete(self, command: FlowCommand, value: Node | None, app_id: str) -> None:
        """What only some commands need: runFlow's and repeat's inner commands, and checks of values."""
        args = command.args
        at = value if value is not None else None
        if command.name in ("launchApp", "stopApp", "clearState"):
            if not args.get("appId"):
                if not app_id:
                    needs = f"{command.name} needs an appId (in the header or here)"
                    raise self.error(needs, at, command.line, command.column)
                args["appId"] = app_id
            else:
                self.app_id(args["appId"], self.key_nodes.get("appId", at))
        if command.name == "launchApp" and "permissions" in args:
            args["permissions"] = self.permissions(args["permissions"])
        if command.name == "swipe" and "direction" not in args and not ("start" in args and "end" in args):
            raise self.error("swipe needs a direction, or start and end", at, command.line, command.column)
        direction = args.get("direction")
        if isinstance(direction, str) and "${" not in direction and direction.upper() not in SWIPE_DIRECTIONS:
            raise self.error(
                f"direction must be one of UP, DOWN, LEFT, RIGHT, not {direction!r}",
                self.key_nodes.get("direction", at),
            )
        if command.name == "extendedWaitUntil" and ("visible" in args) == ("notVisible" in args):
            raise self.error(
                "extendedWaitUntil needs one of visible or notVisible", at, command.line, command.column
            )
        if command.name == "pressKey":
            from .keys import maestro_key  # the table of key names

            key = args["key"]
            if "${" not in key and maestro_key(key) is None:
                raise self.error(f"unknown key {key!r} for pressKey", self.key_nodes.get("key", at))
        if command.name == "runFlow":
            self.run_flow(command, args, app_id, at)
        if command.name == "repeat":
            times = args.get("times")
            if isinstance(times, int) and not 0 <= times <= MAX_REPEAT:
                raise self.error(repeat_bound(times), self.key_nodes.get("times", at))
            commands = args.pop("commands")
            command.commands = self.commands(commands, app_id)
            if "while" in args:
                args["while"] = self.condition(args["while"], "while")
            if "times" not in args and "while" not in args:
                raise self.error("repeat needs times or while", at, command.line, command.column)

    def app_id(self, value: str, node: Node | None) -> str:
        """An appId as written: a package name (it reaches the phone's shell), or ``${…}`` known later."""
        if "${" not in value:
            try:
                package_name(value)
            except ShellValueError as exc:
                raise self.error(f"appId {exc.problem}: {exc.remedy}", node) from None
        return value

    def permissions(self, node: Node) -> dict[str, str]:
        """``permissions: {all: allow, android.permission.CAMERA: deny}`` — each allow, deny or unset."""
        if node.kind != "map":
            raise self.error("permissions must be `name: allow | deny | unset` lines", node)
        found: dict[str, str] = {}
        for key, value in node.pairs:
            try:
                permission_name(str(key.value))
            except ShellValueError as exc:
                raise self.error(f"the permission {exc.problem}: {exc.remedy}", key) from None
            state = str(value.value) if value.kind == "scalar" else ""
            if state not in ("allow", "deny", "unset"):
                raise self.error(f"the permission {key.value} must be allow, deny or unset", value)
            found[str(key.value)] = state
        return found

    def condition(self, node: Node, what: str) -> dict[str, Any]:
        if node.kind != "map":
            raise self.error(f"{what} takes visible, notVisible or platform", node)
        found: dict[str, Any] = {}
        for key, inner in node.pairs:
            if key.value in ("visible", "notVisible"):
                found[str(key.value)] = self.selector(inner, str(key.value))
            elif key.value == "platform":
                found["platform"] = self.string(inner, "platform")
            else:
                raise self.error(
                    f"the condition {key.value!r} is not supported (use visible, notVisible or platform)", key
                )
        return found

    def run_flow(self, command: FlowCommand, args: dict[str, Any], app_id: str, at: Node | None) -> None:
        if "when" in args:
            args["when"] = self.condition(args["when"], "when")
        if "env" in args:
            command.env = self.env(args.pop("env"))
        if "commands" in args:
            if "file" in args:
                raise self.error("runFlow takes a file or commands, not both", at)
            command.commands = self.commands(args.pop("commands"), app_id)
            return
        name = args.get("file")
        if not name:
            raise self.error("runFlow needs a file or commands", at, command.line, command.column)
        text = self.files.get(name)
        if text is None and self.saved is not None:
            stem = name.rsplit("/", 1)[-1]
            stem = stem[: -len(".yaml")] if stem.endswith(".yaml") else stem
            stem = stem[: -len(".yml")] if stem.endswith(".yml") else stem
            text = self.saved(name) or self.saved(stem)
        if text is None:
            raise self.error(
                f"runFlow: the flow {name!r} was not sent with this flow and is not a saved flow",
                at,
                command.line,
                command.column,
            )
        if self.depth >= MAX_INCLUDE_DEPTH:
            raise self.error(
                f"runFlow nests deeper than {MAX_INCLUDE_DEPTH} flows (does {name!r} run itself?)",
                at,
                command.line,
                command.column,
            )
        inner = _FlowReading(self.files, self.saved, self.depth + 1).flow(text, name)
        command.commands = inner.commands
        command.env = {**inner.env, **command.env}
