"""People in the loop: the agent handing the phone to the person (take over) and asking before a
sensitive action (confirm), and the Settings that say when it asks and which way it works.

``Person`` is what the host offers (the page: the ``#takeover`` and ``#confirm`` panels; tests: a
scripted person); the agent bounds every wait on it (``TaskOptions``: ``takeoverTimeoutMs``, default
300 s; ``confirmTimeoutMs``, default 120 s). ``AgentSettings`` is the page's Setting: the agent's way
(one of ``tasks.AGENT_MODES``: ``plan``, Plan-and-Resolve; ``react``, ReAct) and the kinds of action it
asks before ("Ask before the agent …": sending a message, paying or buying, deleting, installing or
uninstalling, changing permissions; all on by default). Whether an action is one of them is the model's word
(``sensitive: true`` on its call) and, as a second guard, the words of what it acts on
(``sensitive_kind``). ``AskingCallerToo`` asks the task's MCP caller as well (the relay's ``ask``, an
elicitation where its client declared it): whoever answers first wins, the other question is
withdrawn. Pure: no I/O.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..tasks import AGENT_MODES, DEFAULT_AGENT_MODE
from ..tools.locators import LocatorError, ScreenSnapshot, parse_target

DONE, CANCEL, YES, NO, TIMEOUT = "done", "cancel", "yes", "no", "timeout"

# The kinds of action the agent asks before, as the Setting names them.
ASK_KINDS: dict[str, str] = {
    "message": "sending a message",
    "payment": "paying or buying",
    "delete": "deleting",
    "install": "installing or uninstalling",
    "permissions": "changing permissions",
}
_KIND_WORDS: dict[str, tuple[str, ...]] = {
    "message": ("send", "send sms", "send message", "reply", "post", "share"),
    "payment": ("pay", "buy", "purchase", "checkout", "check out", "place order", "subscribe", "order now"),
    "delete": ("delete", "remove", "erase", "discard", "clear data", "wipe"),
    "install": ("install", "uninstall", "update app"),
    "permissions": ("allow", "grant", "permission", "permissions", "don't allow", "deny"),
}
_KIND_PATTERNS = {
    kind: re.compile(r"\b(" + "|".join(re.escape(word) for word in words) + r")\b", re.IGNORECASE)
    for kind, words in _KIND_WORDS.items()
}


class Person(Protocol):
    """Whoever sits at the page. Each method waits until the person answers (the agent bounds it)."""

    async def take_over(self, reason: str) -> str:
        """Hand the phone over for ``reason``; ``done`` (go on) or ``cancel`` (end the task)."""
        ...

    async def confirm(self, action: str) -> str:
        """Ask whether the agent may do ``action``; ``yes`` or ``no``."""
        ...


# Asks the task's caller (kind "takeover" or "confirm", a message): done/cancel, yes/no, or None when the
# caller cannot be asked (then only the person at the page answers).
CallerAsk = Callable[[str, str], Awaitable[str | None]]


def takeover_question(reason: str) -> str:
    """What the caller's user reads when the agent hands the phone over."""
    return (
        f"The phone agent needs a person to take over the phone: {reason}. Do it on the phone (or in "
        "the phone-agent page's live view), then answer Done; Cancel ends the task."
    )


def confirm_question(action: str) -> str:
    """What the caller's user reads before a sensitive action."""
    return f"The phone agent asks before a sensitive action. Allow {action}?"


class AskingCallerToo:
    """A ``Person`` that asks the person at the page and the task's caller at once: the first answer
    wins and the other question is withdrawn (cancelled). A caller that cannot answer (None) leaves the
    person at the page to answer."""

    def __init__(self, person: Person, ask: CallerAsk) -> None:
        self.person = person
        self.ask = ask

    async def take_over(self, reason: str) -> str:
        return await self._first(self.person.take_over(reason), "takeover", takeover_question(reason))

    async def confirm(self, action: str) -> str:
        return await self._first(self.person.confirm(action), "confirm", confirm_question(action))

    async def _first(self, at_page: Awaitable[str], kind: str, message: str) -> str:
        page = asyncio.ensure_future(at_page)
        caller = asyncio.ensure_future(self.ask(kind, message))
        try:
            done, _ = await asyncio.wait({page, caller}, return_when=asyncio.FIRST_COMPLETED)
            if caller in done and not caller.cancelled() and caller.exception() is None:
                answer = caller.result()
                if answer is not None:
                    return answer
            return await page  # the caller cannot answer (or failed): the person at the page does
        finally:
            for waiting in (page, caller):
                waiting.cancel()


class TaskAborted(Exception):
    """Ends the task aborted with this message (the person cancelled, nobody took over)."""


@dataclass(frozen=True)
class AgentSettings:
    """The page's Setting: the agent's way, and the kinds of action it asks before."""

    mode: str = DEFAULT_AGENT_MODE
    ask: frozenset[str] = field(default_factory=lambda: frozenset(ASK_KINDS))

    def to_json(self) -> dict[str, Any]:
        return {"mode": self.mode, "ask": {kind: kind in self.ask for kind in ASK_KINDS}}

    @classmethod
    def from_json(cls, data: Any) -> AgentSettings:
        if not isinstance(data, dict):
            return cls()
        mode = data.get("mode") if data.get("mode") in AGENT_MODES else DEFAULT_AGENT_MODE
        ask = data.get("ask")
        if not isinstance(ask, dict):
            return cls(mode=mode)
        return cls(mode=mode, ask=frozenset(kind for kind in ASK_KINDS if ask.get(kind, True) is not False))


def sensitive_kind(words: str) -> str | None:
    """The kind of sensitive action these words name (a button's label, a locator), or None."""
    for kind, pattern in _KIND_PATTERNS.items():
        if pattern.search(words or ""):
            return kind
    return None


def call_question(
    tool: str, args: dict[str, Any], snapshot: ScreenSnapshot | None, ask: frozenset[str]
) -> str | None:
    """What to ask the person before a direct tool call (``--confirm always``), or None when the call is
    not of a kind the Setting asks about: a tap, long press or typing on something whose words say
    sending, paying, deleting, installing or permissions."""
    if tool not in ("tap", "long_press", "type_text", "type_secret"):
        return None
    words = target_words(args, snapshot)
    kind = sensitive_kind(words)
    if kind is None or kind not in ask:
        return None
    return f"{tool} {words} ({ASK_KINDS[kind]})"


def target_words(args: dict[str, Any], snapshot: ScreenSnapshot | None) -> str:
    """What an action acts on, in words: the target element's label (by ref, locator or device point)
    on the screen the model saw, or the locator's own value."""
    target = args.get("target")
    if isinstance(target, str) and target:
        try:
            parsed = parse_target(target)
        except LocatorError:
            return target
        if snapshot is not None:
            found = [snapshot.by_ref[parsed.ref]] if parsed.ref in snapshot.by_ref else parsed.find(snapshot)
            if found:
                return f"{found[0].label} {found[0].desc}".strip()
        return parsed.value
    x, y = args.get("x"), args.get("y")
    if isinstance(x, int) and isinstance(y, int) and snapshot is not None:
        hits = [
            e
            for e in snapshot.elements
            if e.bounds.left <= x < e.bounds.right and e.bounds.top <= y < e.bounds.bottom and e.clickable
        ]
        if hits:  # the smallest clickable element under the finger
            best = min(
                hits, key=lambda e: (e.bounds.right - e.bounds.left) * (e.bounds.bottom - e.bounds.top)
            )
            return f"{best.label} {best.desc}".strip()
    return ""
