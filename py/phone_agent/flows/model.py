"""What a flow is once read: ``Flow`` (its header and commands), ``FlowCommand`` (one command, with the
commands, env, condition, script and media only some commands have) and ``FlowError`` (a flow that cannot
be run as written, where, and every other problem found with it). Pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import grammar as g


class FlowError(ValueError):
    """A flow that cannot be run as written: what is wrong, and where (``line``, ``column`` from 1).
    ``problems`` holds every problem found in the flow (this one first)."""

    def __init__(self, message: str, line: int, column: int, source: str = "") -> None:
        where = f"{source}: " if source else ""
        super().__init__(f"{where}line {line}, column {column}: {message}")
        self.reason, self.line, self.column, self.source = message, line, column, source
        self.problems: list[FlowError] = [self]

    def location(self, fallback: str = "flow") -> str:
        """``FILE:LINE:COL: error: message`` — how a compiler would say it."""
        return f"{self.source or fallback}:{self.line}:{self.column}: error: {self.reason}"


@dataclass
class FlowCommand:
    """One command as read: its name, its arguments (strings may still hold ``${…}``), where it stands,
    and what only some commands have: the commands inside (runFlow, repeat, retry), their env, a
    condition (``when`` / ``while``), a script's text (runScript) and media (addMedia)."""

    name: str
    args: dict[str, Any]
    line: int
    column: int
    source: str = ""
    commands: list[FlowCommand] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    optional: bool = False
    label: str = ""
    condition: dict[str, Any] | None = None
    script: str = ""
    media: list[tuple[str, str]] = field(default_factory=list)  # (path, base64)
    on_start: list[FlowCommand] = field(default_factory=list)  # a runFlow file's own hooks
    on_complete: list[FlowCommand] = field(default_factory=list)

    def describe(self) -> str:
        """``tapOn: Settings`` — the command as a person reads it in a report."""
        if self.label:
            return self.label
        args = {key: value for key, value in self.args.items() if key not in ("optional", "label")}
        if not args:
            return self.name
        spec = g.COMMANDS.get(self.name)
        shorthand = (
            "text" if spec is not None and spec.scalar == "selector" else spec.scalar if spec else None
        )
        if list(args) == [shorthand] and not isinstance(args[shorthand], dict):
            return f"{self.name}: {_short(args[shorthand])}"
        shown = ", ".join(f"{key}: {_short(value)}" for key, value in args.items() if key != "commands")
        return f"{self.name}: {{{shown}}}"


def _short(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {_short(inner)}" for key, inner in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_short(inner) for inner in value) + "]"
    return str(value)


@dataclass
class Flow:
    """A whole flow: the header's appId, name, env and tags, its hooks, the commands in order, the flow's
    path (what ``MAESTRO_FILENAME`` names), and notes on header keys that change nothing here."""

    app_id: str
    name: str
    env: dict[str, str]
    commands: list[FlowCommand]
    tags: list[str] = field(default_factory=list)
    on_start: list[FlowCommand] = field(default_factory=list)
    on_complete: list[FlowCommand] = field(default_factory=list)
    path: str = ""
    notes: list[str] = field(default_factory=list)
