"""Secrets by name: ``SecretBook`` (which names the page may type, and their values on demand) and the
``type_secret`` tool, which types one like type_text and answers without it.

Two sources fill the book. The page's own Settings → Secrets (``set_page``: name → value, kept
encrypted in the browser), and the server's environment (``PHONE_AGENT_SECRET_<NAME>=value``: the page
learns only the names from ``/api/config``, ``set_server_names``, and asks the server for a value over
the paired relay at the moment it types it, through ``fetch_server``). The page's own value wins over
the server's of the same name.

A value goes to the phone's keyboard and nowhere else: never into an answer, the element list, a model
request, a report, a task record, the activity log, a progress line or a log line. A field a secret was
typed into is kept as a password field until its text changes (``redact_nodes``, on every screen the
tools read, so locators match the placeholder, not the value): by the field, so a secret of any length
is kept out, where searching every text for a short value would match everywhere. Long values are
also searched for in every answer (``redact``: the pipeline's redaction step). Whoever records
tool calls (a flow recorder) sees ``type_secret {name}`` and writes the text as ``placeholder(name)``
(``${secret:NAME}``); ``secret_typed`` tells a listener which name was typed, never its value.
Pure: no I/O of its own.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from .. import errors
from ..device.interface import Bounds, UiNode, read_ui_tree
from .results import action_result
from .spec import BOOLEAN, STRING, CallEnv, ToolSpec, object_schema, result_schema
from .targets import TARGET
from .text_keys import type_into

ENV_PREFIX = "PHONE_AGENT_SECRET_"
NAME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
NAME_RULE = "a letter, then letters, digits or _ (at most 64)"
MAX_VALUE_CHARS = 5_000
SECRET_FETCH_S = 10.0
MIN_REDACTED_CHARS = 4  # values searched for in any text (shorter ones: only by their field)

ServerFetch = Callable[[str], Awaitable[str | None]]
TypedListener = Callable[[str], None]


def placeholder(name: str) -> str:
    """How a recorded flow writes the text a secret typed: ``${secret:NAME}``."""
    return "${secret:" + name + "}"


def valid_name(name: str) -> bool:
    return bool(NAME_RE.match(name))


def secrets_from_environ(environ: dict[str, str]) -> dict[str, str]:
    """The server's secrets: ``PHONE_AGENT_SECRET_<NAME>=value`` → {NAME: value} (empty values and
    names that are not valid names are left out)."""
    found: dict[str, str] = {}
    for key, value in environ.items():
        if key.startswith(ENV_PREFIX) and value and valid_name(key[len(ENV_PREFIX) :]):
            found[key[len(ENV_PREFIX) :]] = value
    return found


@dataclass
class SecretField:
    """A field that shows a secret: which one (``field_key``) and the text it showed once typed."""

    name: str
    key: tuple[str, ...]
    text: str


def field_key(node: UiNode) -> tuple[str, ...]:
    """A field's identity across reads: its resource id, else where it is."""
    if node.resource_id:
        return ("id", node.package, node.resource_id)
    bounds = node.bounds
    return ("at", node.package, f"{bounds.left},{bounds.top},{bounds.right},{bounds.bottom}")


class SecretBook:
    """The secrets this page may type: the page's own (values at hand) and the server's (names only,
    values asked for when typed). ``names()`` never reveals a value; ``repr`` neither."""

    def __init__(self) -> None:
        self._page: dict[str, str] = {}
        self._server: list[str] = []
        self.fetch_server: ServerFetch | None = None
        self._typed_listeners: list[TypedListener] = []
        self._fetched: dict[str, str] = {}  # the server's values this page has typed (to redact them)
        self._fields: list[SecretField] = []  # the fields that show a secret (plain fields, not password)

    def __repr__(self) -> str:
        return f"SecretBook(names={self.names()!r})"

    def set_page(self, secrets: dict[str, str]) -> None:
        self._page = {name: value for name, value in secrets.items() if valid_name(name) and value}

    def set_server_names(self, names: Any) -> None:
        items = names if isinstance(names, list) else []
        self._server = sorted({name for name in items if isinstance(name, str) and valid_name(name)})

    def page_names(self) -> list[str]:
        return sorted(self._page)

    def names(self) -> list[str]:
        """Every name that can be typed, sorted."""
        return sorted(set(self._page) | set(self._server))

    def redact(self, text: str) -> str:
        """``text`` with every secret value this page knows written as ``${secret:NAME}`` (a value typed
        into a field that is not a password field shows in the screen's text: it must not travel on to
        an answer, a model request or a record). Values shorter than 4 characters are left alone."""
        if not text:
            return text
        known = {**self._fetched, **self._page}
        for name, value in sorted(known.items(), key=lambda item: -len(item[1])):
            if len(value) >= MIN_REDACTED_CHARS and value in text:
                text = text.replace(value, placeholder(name))
        return text

    def remember_field(self, name: str, value: str, nodes: list[UiNode]) -> None:
        """After ``name`` was typed: the plain field that now shows ``value`` (the focused one; else the
        only one) is kept as a password field until its text changes."""
        shows = [node for node in nodes if not node.password and value and value in node.text]
        focused = [node for node in shows if node.focused]
        chosen = focused[0] if focused else (shows[0] if len(shows) == 1 else None)
        if chosen is None:
            return
        key = field_key(chosen)
        self._fields = [kept for kept in self._fields if kept.key != key]
        self._fields.append(SecretField(name, key, chosen.text))

    def has_fields(self) -> bool:
        """Whether a field was typed a secret into (and may still show it)."""
        return bool(self._fields)

    def fields_shown(self, nodes: list[UiNode]) -> list[tuple[str, Bounds]]:
        """The secrets a screen just read (not redacted) shows, and where: a field that received one
        with its text unchanged, and any text holding a long value."""
        shown: list[tuple[str, Bounds]] = []
        for secret in self._fields:
            shown += [
                (secret.name, n.bounds) for n in nodes if field_key(n) == secret.key and n.text == secret.text
            ]
        known = {**self._fetched, **self._page}
        for name, value in known.items():
            if len(value) >= MIN_REDACTED_CHARS:
                shown += [(name, n.bounds) for n in nodes if value in n.text or value in n.content_desc]
        return shown

    def redact_nodes(self, nodes: list[UiNode]) -> None:
        """Hide the secrets a screen just read shows, in place: a field that received one shows its
        placeholder while its text is unchanged (a changed text ends that), and a long value is written
        as its placeholder wherever it shows."""
        kept: list[SecretField] = []
        for secret in self._fields:
            same = [node for node in nodes if field_key(node) == secret.key]
            if any(node.text != secret.text for node in same):
                continue  # the field's text changed: it is a plain field again
            for node in same:
                node.text = placeholder(secret.name)
            kept.append(secret)
        self._fields = kept
        for node in nodes:
            node.text, node.content_desc = self.redact(node.text), self.redact(node.content_desc)

    def on_typed(self, listener: TypedListener) -> Callable[[], None]:
        """Be told the name of every secret typed (a flow recorder); returns the unsubscribe."""
        self._typed_listeners.append(listener)
        return lambda: self._typed_listeners.remove(listener) if listener in self._typed_listeners else None

    def typed(self, name: str) -> None:
        for listener in list(self._typed_listeners):
            try:
                listener(name)
            except Exception:  # a listener never stops the typing
                pass

    async def value(self, tool: str, name: str) -> str:
        """The value of ``name``; ToolError invalid_argument (naming the known ones) when unknown."""
        if name in self._page:
            return self._page[name]
        if name in self._server and self.fetch_server is not None:
            value = await self.fetch_server(name)
            if value:
                self._fetched[name] = value
                return value
            raise errors.secret_unavailable(tool, name)
        raise errors.unknown_secret(tool, name, self.names())


def secret_book(env: CallEnv) -> SecretBook:
    """The page's secrets as a handler sees them (the pipeline gives the caller's or the page's book;
    an empty one where none is plugged in)."""
    return env.secrets if isinstance(env.secrets, SecretBook) else SecretBook()


async def type_secret(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    name = args["name"].strip()
    book = secret_book(env)
    value = await book.value("type_secret", name)

    async def typed() -> None:  # the field that shows it now, read before Enter moves the screen on
        try:
            book.remember_field(name, value, (await read_ui_tree(env.session().device)).nodes)
        except errors.ToolError:
            pass  # a phone that cannot read its screen now: the value is still searched for in answers

    done = await type_into(env, value, args, shown=f"the secret {name}", typed=typed)
    book.typed(name)
    structured = {key: item for key, item in done.structured.items() if key != "typed"}
    structured["secret"] = name
    return action_result(done.said, structured)


TYPE_SECRET = ToolSpec(
    name="type_secret",
    title="Type a secret",
    description="Type the secret called name (a password, a one-time code …) into the focused field, "
    "or into target after tapping it, without ever seeing it: the answer, the logs and the reports "
    "carry only its name. submit=true presses Enter after. The secrets are set in the page's Settings → "
    "Secrets or by the server's environment (PHONE_AGENT_SECRET_<NAME>); an unknown name answers "
    "invalid_argument listing the known names.",
    input_schema=object_schema(
        {
            "name": {
                "type": "string",
                "minLength": 1,
                "maxLength": 64,
                "description": "The secret's name, e.g. DEMO_PASSWORD.",
            },
            "target": TARGET,
            "clear": {**BOOLEAN, "default": False, "description": "Empty the field first."},
            "submit": {**BOOLEAN, "default": False, "description": "Press Enter after typing."},
        },
        required=["name"],
    ),
    read_only=False,
    consequential=False,
    relay_timeout_ms=90_000,
    output_schema=result_schema(
        {
            "secret": STRING,
            "method": STRING,
            "target": STRING,
            "matches": {"type": "integer"},
            "cleared": BOOLEAN,
            "submitted": BOOLEAN,
        },
        ["secret", "method"],
    ),
    run=type_secret,
    agent_action=True,
)
