"""JavaScript in flows, as Maestro runs it, through a port: ``${…}`` wherever a string is, ``evalScript``,
``runScript`` (a file, with ``env``), ``assertTrue``, ``when: {true: …}`` and ``repeat: {while: {true:
…}}``. The flow runner sees a ``ScriptEngine`` (a Protocol); the engine itself — QuickJS compiled to
WebAssembly, sandboxed: no DOM, no page, no network but Maestro's ``http`` object to allowed hosts, bounded
in time and memory — lives outside this package: in the page a Worker (``browser/flow_scripts.py``), in
CPython the same engine through Node (``server/node_scripts.py``).

One ``ScriptSession`` lasts one flow run: the scripts of a run share ``output``, see the flow's env as
globals, ``maestro.copiedText`` and ``maestro.platform``, ``json()``, ``relativePoint()`` and
``console.log`` (its lines come back with each evaluation). Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

DEFAULT_SCRIPT_TIMEOUT_MS = 10_000  # one evaluation; a script that loops is stopped then
DEFAULT_SCRIPT_MEMORY_BYTES = 64 << 20
# Maestro's pattern: ${…} not preceded by a backslash, holding no $; \${…} stays as written (less the \).
_EXPRESSION = re.compile(r"(?<!\\)\$\{([^$]*)\}")
_ESCAPED = re.compile(r"\\(\$\{[^$]*\})")
_BARE_NAME = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*")
SCRIPT_ERRORS = ("script_error", "timeout", "memory", "http_not_allowed", "http_error")


class ScriptError(Exception):
    """A script that failed: why (``kind``: one of ``SCRIPT_ERRORS``), and where (its file and line)."""

    def __init__(self, message: str, source: str = "", line: int = 0, kind: str = "script_error") -> None:
        where = f"{source}:{line}: " if source and line else f"{source}: " if source else ""
        super().__init__(f"{where}{message}")
        self.reason, self.source, self.line, self.kind = message, source, line, kind


@dataclass(frozen=True)
class ScriptOptions:
    """What a run's engine allows: hosts ``http`` may reach (``host`` or ``host:port``), and the bounds of
    one evaluation."""

    allowed_hosts: tuple[str, ...] = ()
    timeout_ms: int = DEFAULT_SCRIPT_TIMEOUT_MS
    memory_bytes: int = DEFAULT_SCRIPT_MEMORY_BYTES
    platform: str = "android"


@dataclass
class ScriptResult:
    """An evaluation's value as Maestro's string (``String(value)``) and the lines it logged."""

    value: str
    logs: list[str] = field(default_factory=list)


class ScriptSession(Protocol):
    """One run's JavaScript context."""

    async def evaluate(
        self, code: str, *, kind: str, source: str, line: int, env: dict[str, str], copied_text: str
    ) -> ScriptResult:
        """Run ``code`` (``kind``: ``expression`` — a ``${…}``, its value; ``script`` — a runScript file,
        in a scope of its own) with ``env`` as globals; ScriptError when it fails."""
        ...

    async def close(self) -> None: ...


class ScriptEngine(Protocol):
    """Opens sessions."""

    async def open(self, options: ScriptOptions) -> ScriptSession: ...


def has_expression(text: str) -> bool:
    return "${" in text and _EXPRESSION.search(text) is not None


def expressions(text: str) -> list[str]:
    """The ``${…}`` of ``text``, in order (what would be evaluated)."""
    return [match.group(1) for match in _EXPRESSION.finditer(text)]


def bare_name(code: str) -> str | None:
    """``NAME`` when the expression is a bare name (``${USER}``), else None."""
    match = _BARE_NAME.fullmatch(code)
    return match.group(1) if match else None


def split_template(text: str) -> list[tuple[bool, str]]:
    """``text`` as (is_expression, part) pairs; literal parts have their ``\\${`` unescaped."""
    parts: list[tuple[bool, str]] = []
    position = 0
    for match in _EXPRESSION.finditer(text):
        if match.start() > position:
            parts.append((False, _ESCAPED.sub(r"\1", text[position : match.start()])))
        parts.append((True, match.group(1)))
        position = match.end()
    if position < len(text):
        parts.append((False, _ESCAPED.sub(r"\1", text[position:])))
    return parts


def truthy(value: str) -> bool:
    """A condition's value as Maestro judges it: blank, ``false`` (any case), ``undefined``, ``null`` and
    zero are false; everything else is true."""
    text = value.strip()
    if not text or text.lower() == "false" or text in ("undefined", "null"):
        return False
    try:
        return float(text) != 0.0
    except ValueError:
        return True
