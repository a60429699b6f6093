"""Reading a Maestro flow: its header (``appId`` or ``url``, ``name``, ``tags``, ``env``, ``onFlowStart``,
``onFlowComplete``; any other key is accepted, as Maestro accepts it), ``---``, and its commands, each
checked against the grammar (``grammar.COMMANDS``) when the flow is read: an unknown command, an unknown
key or a value of the wrong kind is a ``FlowError`` naming its line and column, never a step skipped
later. Every problem is collected (``FlowError.problems``), so ``flow check`` can list them all.

Files a flow names (``runFlow: file.yaml``, ``retry``'s file, ``runScript``, ``addMedia``) are resolved
relative to the folder of the flow naming them, from the files the caller sent (``files``: text;
``media``: base64) — never from the disk — and a path that leaves the flows' folder is refused. A
``runFlow`` name that is no file is looked for among the page's saved flows. Pure: text in, a ``Flow`` out.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from typing import Any

from ..device.shell_args import ShellValueError, package_name
from . import grammar as g
from .flow_checks import CHECKS, MAX_REPEAT, repeat_bound
from .model import Flow, FlowCommand, FlowError
from .output_paths import OutputPathError, output_path
from .yaml_nodes import Node, YamlError, parse_all, scalar_value

MAX_INCLUDE_DEPTH = 16
__all__ = [
    "COMMANDS",
    "MAX_REPEAT",
    "SELECTOR_KEYS",
    "Flow",
    "FlowCommand",
    "FlowError",
    "read_flow",
    "repeat_bound",
]
SELECTOR_KEYS = g.MATCHING_KEYS
COMMANDS = g.COMMANDS
_TWO_SECTIONS = (
    'a flow has two sections separated by "---": the header (appId: …), then the commands '
    "(for example: appId: com.example, ---, - launchApp)"
)


FlowLookup = Callable[[str], str | None]


def read_flow(
    text: str,
    files: dict[str, str] | None = None,
    saved: FlowLookup | None = None,
    source: str = "",
    media: dict[str, str] | None = None,
    path: str = "",
) -> Flow:
    """The flow ``text`` holds; FlowError (line and column; ``problems`` every one) when it cannot be run
    as written.

    ``files`` maps the paths ``runFlow``, ``retry`` and ``runScript`` may name (relative to the flows'
    folder) to their text, ``media`` the paths ``addMedia`` names to their bytes in base64; ``path`` is
    this flow's own path in that folder (``source`` names it in errors when given); ``saved`` finds a
    saved flow's text by name (for ``runFlow: name``)."""
    reading = FlowReading(files or {}, media or {}, saved, [])
    try:
        return _read(reading, text, source, path)
    except RecursionError:
        raise FlowError("the flow nests too deep to read", 1, 1, source) from None


def _read(reading: FlowReading, text: str, source: str, path: str) -> Flow:
    own = _normal(path or posixpath.basename(source.replace("\\", "/")) or "flow.yaml")
    reading.root_source, reading.root_path = source, own
    flow = reading.flow(text, source or path, own)
    if reading.problems:
        first = reading.problems[0]
        first.problems = list(reading.problems)
        raise first
    return flow


class FlowReading:
    """One reading of a flow and the files it includes; problems are collected, not raised."""

    def __init__(
        self, files: dict[str, str], media: dict[str, str], saved: FlowLookup | None, stack: list[str]
    ) -> None:
        self.files, self.media, self.saved, self.stack = files, media, saved, stack
        self.source = ""
        self.path = ""
        self.problems: list[FlowError] = []
        self.notes: list[str] = []  # keys here that Maestro would not take (phone-agent's own)
        self.app_id = ""
        self.root_source = ""  # the top flow's name as the caller gave it (a file path, perhaps)
        self.root_path = ""  # and its path in the flows' folder

    # -- errors ---------------------------------------------------------------------------------

    def error(self, message: str, node: Node | None, line: int = 1, column: int = 1) -> FlowError:
        if node is not None:
            line, column = node.line, node.column
        return FlowError(message, line, column, self.source)

    def note(self, problem: FlowError) -> None:
        self.problems.append(problem)

    # -- the document ---------------------------------------------------------------------------

    def flow(self, text: str, source: str, path: str) -> Flow:
        self.source, self.path = source, _normal(path)
        try:
            documents = parse_all(text)
        except YamlError as exc:
            self.note(FlowError(exc.reason, exc.line, exc.column, source))
            return Flow("", "", {}, [], path=self.path)
        present = [doc for doc in documents if doc is not None]
        if len(present) != 2:
            at = present[2] if len(present) > 2 else present[0] if present else None
            self.note(self.error(_TWO_SECTIONS, at))
            return Flow("", "", {}, [], path=self.path)
        header, body = present
        flow = self.header(header)
        flow.path = self.path
        if body.kind != "seq":
            self.note(self.error("the commands must be a list, one `- command` a line", body))
        else:
            flow.commands = self.commands(body)
        flow.notes += self.notes
        return flow

    def header(self, node: Node) -> Flow:
        flow = Flow("", "", {}, [])
        if node.kind != "map":
            self.note(self.error("the header must be `appId: …` lines (then ---, then the commands)", node))
            return flow
        app_node = node.get("appId") or node.get("url")
        if app_node is None or app_node.is_null or app_node.kind != "scalar":
            self.note(
                self.error("the header needs an appId (the app's package, e.g. appId: com.example)", node)
            )
        else:
            flow.app_id = self.app_id = str(app_node.value)
            if node.get("appId") is app_node:  # url names a web page; an appId reaches the phone's shell
                try:
                    self.check_app_id(flow.app_id, app_node)
                except FlowError as problem:
                    self.note(problem)
        for key, value in node.pairs:
            name = str(key.value)
            if name in ("appId", "url"):
                continue
            if name == "name":
                flow.name = "" if value.is_null else self.text(value, "name")
            elif name == "env":
                flow.env = self.env(value)
            elif name == "tags":
                flow.tags = self.strings(value, "tags")
            elif name in ("onFlowStart", "onFlowComplete"):
                hooks = self.commands(value) if value.kind == "seq" else []
                if value.kind != "seq":
                    self.note(self.error(f"{name} must be a list of commands", value))
                setattr(flow, "on_start" if name == "onFlowStart" else "on_complete", hooks)
            else:
                why = g.KNOWN_NOOP_HEADER_KEYS.get(name, "phone-agent does not use it")
                where = f"{self.source or 'flow'}:{key.line}:{key.column}"
                flow.notes.append(f"{where}: note: header key {name!r} "
                                  f"changes nothing here ({why})")  # fmt: skip
        return flow

    # -- values ---------------------------------------------------------------------------------

    def check_app_id(self, value: str, node: Node | None, line: int = 1, column: int = 1) -> str:
        """An appId as written: a package name (it reaches the phone's shell), or ``${…}`` known later."""
        if "${" not in value:
            try:
                package_name(value)
            except ShellValueError as exc:
                raise self.error(f"appId {exc.problem}: {exc.remedy}", node, line, column) from None
        return value

    def text(self, node: Node, what: str) -> str:
        if node.kind != "scalar" or node.value is None:
            raise self.error(f"{what} must be a text value", node)
        return str(node.value)

    def strings(self, node: Node, what: str) -> list[str]:
        if node.kind != "seq":
            raise self.error(f"{what} must be a list (- item lines, or [a, b])", node)
        return [self.text(item, f"each of {what}") for item in node.value]

    def env(self, node: Node) -> dict[str, str]:
        if node.is_null:
            return {}
        if node.kind != "map":
            raise self.error("env must be NAME: value lines", node)
        found = {}
        for key, value in node.pairs:
            if value.kind != "scalar":
                raise self.error(f"env {key.value} must be a text value", value)
            found[str(key.value)] = "" if value.value is None else str(value.value)
        return found

    def typed(self, node: Node, kind: str, what: str) -> Any:
        """A key's value as its kind says (see ``grammar``)."""
        if kind in _STRUCTURED:
            return _STRUCTURED[kind](self, node, what)
        if node.kind != "scalar":
            raise self.error(
                f"{what} must be {_A.get(kind, 'a')} {kind}, not a {_KIND_WORD[node.kind]}", node
            )
        value = scalar_value(node)
        text = "" if node.value is None else str(node.value)
        if kind == g.STR:
            return text
        if kind == g.OUT:
            if "${" in text:
                return text  # checked when it runs, once its value is known
            try:
                return output_path(text)
            except OutputPathError as exc:
                raise self.error(str(exc), node) from None
        if kind == g.BOOL:
            if isinstance(value, bool):
                return value
            if text.lower() in ("true", "false"):
                return text.lower() == "true"
            raise self.error(f"{what} must be true or false, not {text!r}", node)
        if kind == g.NUMSTR and "${" in text:
            return text  # known once its expression is evaluated
        number = _number(value, text)
        if number is None or (kind == g.INT and not float(number).is_integer()):
            raise self.error(f"{what} must be a number, not {text!r}", node)
        if what in g.MAXIMA and not -g.MAXIMA[what] <= number <= g.MAXIMA[what]:
            raise self.error(f"{what} must be at most {g.MAXIMA[what]}, not {text}", node)
        return float(number) if kind == g.DOUBLE else int(number) if float(number).is_integer() else number

    def selector(self, node: Node, what: str) -> dict[str, Any]:
        if node.kind == "scalar":
            if node.value is None:
                raise self.error(f"{what} needs a selector (a text, or keys such as id)", node)
            return {"text": str(node.value)}
        if node.kind != "map":
            raise self.error(f"{what} must be a selector: a text, or keys such as id, text, index", node)
        found: dict[str, Any] = {}
        for key, inner in node.pairs:
            kind = g.SELECTOR_KEYS.get(str(key.value))
            if kind is None:
                keys = ", ".join(g.SELECTOR_KEYS)
                raise self.error(f"a selector has no key {key.value!r} (it takes {keys})", key)
            if inner.is_null:
                continue
            found[str(key.value)] = self.typed(inner, kind, str(key.value))
        _check_traits(self, found, node)
        return found

    def condition(self, node: Node, what: str) -> dict[str, Any]:
        if node.kind != "map":
            raise self.error(f"{what} takes visible, notVisible, platform or true", node)
        found: dict[str, Any] = {}
        for key, inner in node.pairs:
            kind = g.CONDITION_KEYS.get(str(key.value))
            if kind is None:
                raise self.error(
                    f"the condition has no key {key.value!r} (it takes visible, notVisible, platform, true)",
                    key,
                )
            found[str(key.value)] = self.typed(inner, kind, str(key.value))
        platform = found.get("platform")
        if platform is not None and platform.lower() not in g.PLATFORMS:
            raise self.error(f"platform must be Android, iOS or Web, not {platform!r}", node.get("platform"))
        return found

    # -- commands -------------------------------------------------------------------------------

    def commands(self, node: Node) -> list[FlowCommand]:
        if node.kind != "seq":
            raise self.error("commands must be a list, one `- command` a line", node)
        found = []
        for item in node.value:
            try:
                found.append(self.command(item))
            except FlowError as problem:
                self.note(problem)
        return found

    def command(self, node: Node) -> FlowCommand:
        if node.kind == "scalar":
            name = g.BARE_ALIASES.get(str(node.value), str(node.value))
            value: Node | None = None
            spec = g.COMMANDS.get(name)
            if spec is None or not spec.bare:
                known = ", ".join(n for n, s in g.COMMANDS.items() if s.bare)
                raise self.error(
                    f"invalid command {node.value!r}: alone on a line, a command is one of {known}", node
                )
        elif node.kind == "map":
            if len(node.pairs) != 1:
                names = ", ".join(str(key.value) for key, _ in node.pairs)
                raise self.error(f"one command per `-` item, this one has {names}", node)
            key, value = node.pairs[0]
            if key.kind != "scalar":
                raise self.error("a command's name must be a text, such as tapOn", key)
            name = str(key.value)
            if name == "action":
                name = self.action(value)
                value = None
            spec = g.COMMANDS.get(name)
            if spec is None:
                known = ", ".join(g.COMMANDS)
                raise self.error(f"unsupported command {name!r}: Maestro's commands are {known}", node)
            if value is not None and value.is_null:
                raise self.error(
                    f"{name}: has nothing after the colon: write `- {name}` alone"
                    if spec.bare
                    else f"{name} needs a value (see Maestro's documentation of {name})",
                    key,
                )
        else:
            raise self.error("a command is `- name` or `- name: …`", node)
        command = FlowCommand(
            name, self.arguments(name, spec, value, node), node.line, node.column, self.source
        )
        command.optional = bool(command.args.pop("optional", False))
        command.label = str(command.args.pop("label", "") or "")
        CHECKS.get(name, _no_check)(self, command, value)
        return command

    def action(self, value: Node) -> str:
        word = str(value.value) if value.kind == "scalar" else ""
        if word not in g.ACTION_ALIASES:
            raise self.error(f"unknown action {word!r} (action: takes {', '.join(g.ACTION_ALIASES)})", value)
        return word

    def arguments(self, name: str, spec: g.CommandSpec, value: Node | None, at: Node) -> dict[str, Any]:
        if value is None:
            if not spec.bare:
                raise self.error(f"{name} needs a value (see Maestro's documentation of {name})", at)
            return {}
        if value.kind == "scalar":
            if spec.scalar is None:
                raise self.error(f"{name} takes keys, not a single value", value)
            if spec.scalar == "selector":
                return {"text": str(value.value)}
            return {spec.scalar: self.typed(value, spec.all_keys().get(spec.scalar, g.STR), spec.scalar)}
        if value.kind == "seq":
            if spec.listed is None:
                raise self.error(f"{name} takes a value or keys, not a list", value)
            return {spec.listed: self.strings(value, spec.listed)}
        allowed = spec.all_keys()
        args: dict[str, Any] = {}
        for key, inner in value.pairs:
            if str(key.value) in g.OWN_KEYS.get(name, ()):
                self.notes.append(
                    f"{self.source or 'flow'}:{key.line}:{key.column}: note: {name}'s {key.value} is "
                    "phone-agent's own (Maestro refuses it)"
                )
            kind = allowed.get(str(key.value))
            if kind is None:
                if spec.loose:
                    continue  # Maestro reads only its own keys from this mapping
                raise self.error(f"{name} has no key {key.value!r} (it takes {', '.join(allowed)})", key)
            if inner.is_null and kind not in (g.SEL,):
                continue  # `key:` with no value is the key left out
            args[str(key.value)] = self.typed(inner, kind, str(key.value))
        if spec.selector:
            _check_traits(self, args, value)
        for key in spec.required:
            if key not in args:
                raise self.error(f"{name} needs {key}", value)
        return args

    # -- files ------------------------------------------------------------------------------------

    def resolve(self, name: str, at: Node | None, line: int, column: int) -> str:
        """``name`` (as a flow wrote it) as a path in the flows' folder, relative to this flow's folder."""
        if posixpath.isabs(name) or name.startswith("~") or "\\" in name:
            raise self.error(f"{name!r}: write a path relative to the flow's folder", at, line, column)
        resolved = _normal(posixpath.join(posixpath.dirname(self.path), name))
        if resolved == ".." or resolved.startswith("../"):
            raise self.error(
                f"{name!r} is outside the flows' folder (a flow reads no file outside it)", at, line, column
            )
        return resolved

    def include(self, name: str, at: Node | None, command: FlowCommand) -> Flow:
        """The flow a runFlow or retry ``file`` names, read (its problems are this reading's)."""
        line, column = command.line, command.column
        if "${" in name:
            raise self.error(
                f"{name!r}: a flow's file is found when it is read, before any ${{…}}", at, line, column
            )
        key = self.resolve(name, at, line, column)
        if key in self.stack or key == self.path:
            cycle = " → ".join([*self.stack, self.path, key])
            raise self.error(f"runFlow cycle: {cycle} (a flow may not run itself)", at, line, column)
        text = self.files.get(key)
        source = self.source_of(key)
        if text is None and self.saved is not None:
            stem = posixpath.basename(name)
            for suffix in (".yaml", ".yml"):
                stem = stem[: -len(suffix)] if stem.endswith(suffix) else stem
            text = self.saved(name) or self.saved(stem)
            source = stem
        if text is None:
            raise self.error(
                f"runFlow: the flow {name!r} was not sent with this flow and is not a saved flow",
                at,
                line,
                column,
            )
        if len(self.stack) >= MAX_INCLUDE_DEPTH:
            raise self.error(f"runFlow nests deeper than {MAX_INCLUDE_DEPTH} flows", at, line, column)
        inner = FlowReading(self.files, self.media, self.saved, [*self.stack, self.path])
        inner.root_source, inner.root_path = self.root_source, self.root_path
        flow = inner.flow(text, source, key)
        self.problems.extend(inner.problems)
        self.notes.extend(flow.notes)
        return flow

    def source_of(self, key: str) -> str:
        """How errors name the file at ``key``: under the same folder as the top flow's own name (a file
        path the caller gave, perhaps), else as its path in the flows' folder."""
        top, own = self.root_source.replace("\\", "/"), self.root_path
        if own and top.endswith(own) and top != own:
            return top[: len(top) - len(own)] + key
        return key

    def file_text(self, name: str, at: Node | None, command: FlowCommand) -> tuple[str, str]:
        """A runScript file's path in the folder and its text."""
        key = self.resolve(name, at, command.line, command.column)
        text = self.files.get(key)
        if text is None:
            raise self.error(
                f"the file {name!r} was not sent with this flow", at, command.line, command.column
            )
        return key, text

    def media_data(self, name: str, at: Node | None, command: FlowCommand) -> tuple[str, str]:
        """An addMedia file's path in the folder and its bytes (base64)."""
        key = self.resolve(name, at, command.line, command.column)
        data = self.media.get(key)
        if data is None:
            raise self.error(f"the media file {name!r} was not found", at, command.line, command.column)
        return key, data


def _normal(path: str) -> str:
    normal = posixpath.normpath(path) if path else ""
    return "" if normal == "." else normal


def _number(value: Any, text: str) -> float | int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return value
    try:
        return int(text.strip())
    except ValueError:
        try:
            return float(text.strip())
        except ValueError:
            return None


def _check_traits(reading: FlowReading, found: dict[str, Any], node: Node) -> None:
    traits = found.get("traits")
    if traits is None:
        return
    words = [word for word in str(traits).split(" ") if word]
    for word in words:
        if word.lower().replace("_", "-") not in g.TRAITS:
            raise reading.error(
                f"unknown trait {word!r} (traits are {', '.join(g.TRAITS)})", node.get("traits") or node
            )
    found["traits"] = [word.lower().replace("_", "-") for word in words]


def _no_check(reading: FlowReading, command: FlowCommand, value: Node | None) -> None:
    return None


def _selectors(reading: FlowReading, node: Node, what: str) -> list[dict[str, Any]]:
    if node.kind != "seq" or not node.value:
        raise reading.error(f"{what} must be a list of selectors, e.g. [{{text: Wi-Fi}}]", node)
    return [reading.selector(item, what) for item in node.value]


_STRUCTURED: dict[str, Callable[[FlowReading, Node, str], Any]] = {
    g.SEL: lambda reading, node, what: reading.selector(node, what),
    g.SELS: _selectors,
    g.ENV: lambda reading, node, what: reading.env(node),
    g.CMDS: lambda reading, node, what: node,  # read by the command's check, once its env is known
    g.COND: lambda reading, node, what: reading.condition(node, what),
    g.STRS: lambda reading, node, what: reading.strings(node, what),
    g.MAP: lambda reading, node, what: node,
}
_A = {g.INT: "an", g.BOOL: "a", g.NUMSTR: "a", g.DOUBLE: "a", g.STR: "a"}
_KIND_WORD = {"seq": "list", "map": "mapping", "scalar": "value"}
