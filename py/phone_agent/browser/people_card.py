"""The person at the page, as the agent's ``Person`` (agent/people.py), and the Setting of the agent's
way and of what it asks before.

**Take over**: the agent hands the phone over with a reason; ``#takeover`` shows it with **Done**
(``#takeover-done``: the agent looks again and goes on) and **Cancel** (``#takeover-cancel``: the task
ends aborted). Meanwhile the live view is the person's remote control again (it stops showing the
agent's looks). **Confirm**: before a sensitive action ``#confirm`` shows it with **Allow**
(``#confirm-yes``) and **Refuse** (``#confirm-no``). The agent bounds both waits; the panel hides when
the wait ends either way. ``<html data-person>`` says ``takeover``, ``confirm`` or nothing (tests).

The Setting (``#settings-agent-mode`` and the "Ask before the agent …" boxes) is kept in IndexedDB
("settings" store, key "agent") and applies from the next action on; nothing here logs anything.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import js  # type: ignore[import-not-found]

from ..agent.people import ASK_KINDS, CANCEL, DONE, NO, YES, AgentSettings, call_question
from ..errors import not_confirmed
from ..tasks import AGENT_MODES, DEFAULT_CONFIRM_TIMEOUT_MS
from ..tools.dispatch import Caller, ToolDispatcher
from .dom import PanelEvents
from .storage import IndexedDbStore

SETTINGS_KEY = "agent"
STORE_LIMIT_S = 10.0


class PeopleCard:
    """The take-over and confirm panels, and the agent's Setting."""

    def __init__(self) -> None:
        self._doc = js.document
        self._store = IndexedDbStore("settings")
        self.settings = AgentSettings()
        # Told the Setting whenever it is read or changed (the agent uses it from its next task on).
        self.on_settings: Callable[[AgentSettings], None] | None = None
        # Told True while the person holds the phone (the live view becomes theirs), False after.
        self.on_handover: Callable[[bool], None] | None = None
        self._waiting: asyncio.Future[str] | None = None
        # --confirm always (told by the relay's server): direct calls over the relay are asked too.
        self.confirm_relay_calls = False
        self.confirm_timeout_ms = DEFAULT_CONFIRM_TIMEOUT_MS
        self.context: ToolDispatcher | None = None
        self._events = PanelEvents()
        self._events.listen("takeover-done", "click", lambda _e: self._answer(DONE))
        self._events.listen("takeover-cancel", "click", lambda _e: self._answer(CANCEL))
        self._events.listen("confirm-yes", "click", lambda _e: self._answer(YES))
        self._events.listen("confirm-no", "click", lambda _e: self._answer(NO))
        self._events.listen("agent-options-form", "change", lambda _e: self._events.spawn(self._changed()))
        self._events.listen("agent-options-form", "submit", lambda event: event.preventDefault())
        self._list_modes()

    # -- the Setting -----------------------------------------------------------------------------

    async def load(self) -> None:
        try:
            stored = await asyncio.wait_for(self._store.get(SETTINGS_KEY), STORE_LIMIT_S)
        except Exception as exc:  # the defaults apply
            js.console.warn(f"[agent] could not read the stored agent settings: {exc}")
            stored = None
        self.settings = AgentSettings.from_json(stored)
        self._fill()

    def _list_modes(self) -> None:
        """The Setting's choices, one per way of the agent (``tasks.AGENT_MODES``)."""
        select = self._doc.getElementById("settings-agent-mode")
        select.replaceChildren()
        for mode in AGENT_MODES.values():
            option = self._doc.createElement("option")
            option.value = mode.name
            option.textContent = f"{mode.title} ({mode.summary})"
            select.appendChild(option)

    def _fill(self) -> None:
        self._doc.getElementById("settings-agent-mode").value = self.settings.mode
        for kind in ASK_KINDS:
            self._doc.getElementById(f"settings-ask-{kind}").checked = kind in self.settings.ask
        self._say()

    async def _changed(self) -> None:
        ask = {kind: bool(self._doc.getElementById(f"settings-ask-{kind}").checked) for kind in ASK_KINDS}
        mode = str(self._doc.getElementById("settings-agent-mode").value)
        self.settings = AgentSettings.from_json({"mode": mode, "ask": ask})
        self._say()
        try:
            await asyncio.wait_for(self._store.put(SETTINGS_KEY, self.settings.to_json()), STORE_LIMIT_S)
        except Exception as exc:
            js.console.warn(f"[agent] the agent settings apply but are not stored: {exc}")

    def _say(self) -> None:
        if self.on_settings is not None:
            self.on_settings(self.settings)
        way = AGENT_MODES[self.settings.mode].title
        asks = [ASK_KINDS[kind] for kind in ASK_KINDS if kind in self.settings.ask]
        asked = f"asks before {', '.join(asks)}" if asks else "asks before nothing"
        node = self._doc.getElementById("agent-options-state")
        node.textContent = f"The agent works {way} and {asked}."
        node.dataset.mode = self.settings.mode

    # -- direct calls (--confirm always) ------------------------------------------------------------

    async def check_call(self, tool: str, args: dict[str, Any], caller: Caller) -> None:
        """The pipeline's confirmation step: while the relay's server says ``--confirm always``, a
        sensitive call waits for the person (``confirm_timeout_ms``), whoever made it (an MCP client,
        an App view, WebMCP, a flow's step, the agent: the step leaves out only the person's own);
        refused or unanswered, it fails ``cancelled`` "Not confirmed: …"."""
        if not self.confirm_relay_calls or self.context is None:
            return
        snapshot = None
        if self.context.device is not None:
            session = self.context.session()
            # A point names nothing by itself: what is under it on the screen now says what it is.
            snapshot = await session.screen() if "x" in args else session.state.snapshot
        question = call_question(tool, args, snapshot, self.settings.ask)
        if question is None:
            return
        try:
            answer = await asyncio.wait_for(self.confirm(question), self.confirm_timeout_ms / 1000)
        except TimeoutError:
            raise not_confirmed(
                tool, f"nobody answered within {round(self.confirm_timeout_ms / 1000)} s"
            ) from None
        if answer != YES:
            raise not_confirmed(tool, f"the person refused {question}")

    # -- the Person ------------------------------------------------------------------------------

    async def take_over(self, reason: str) -> str:
        self._doc.getElementById("takeover-reason").textContent = reason
        if self.on_handover is not None:
            self.on_handover(True)
        try:
            return await self._wait("takeover")
        finally:
            if self.on_handover is not None:
                self.on_handover(False)

    async def confirm(self, action: str) -> str:
        self._doc.getElementById("confirm-action").textContent = action
        return await self._wait("confirm")

    async def _wait(self, panel: str) -> str:
        if self._waiting is not None and not self._waiting.done():
            self._waiting.cancel()  # one question at a time: the newer one wins
        waiting: asyncio.Future[str] = asyncio.get_event_loop().create_future()
        self._waiting = waiting
        node = self._doc.getElementById(panel)
        node.hidden = False
        self._doc.documentElement.dataset.person = panel
        try:
            return await waiting
        finally:
            node.hidden = True
            if self._waiting is waiting:
                self._waiting = None
                self._doc.documentElement.removeAttribute("data-person")

    def _answer(self, answer: str) -> None:
        waiting = self._waiting
        if waiting is not None and not waiting.done():
            waiting.set_result(answer)
