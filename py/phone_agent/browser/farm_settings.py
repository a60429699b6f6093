"""The Settings card's Farm field: the broker URL (``ws://USER:PASSWORD@HOST:PORT``) this page joins its
phone farm with, kept in IndexedDB by ``FarmMembership`` and applied at once (joining, or leaving, without
a reload).

The credentials are never shown back nor logged: once saved, the field shows the URL with the password
(or token) masked, and submitting that masked URL again changes nothing. A ``?farm=`` in the page's URL
wins: the field then only keeps a URL for the page's loads without it. ``#farm-state`` says where the
page stands (``data-farm-state``: off, joining, joined, refused, lost, invalid).
"""

from __future__ import annotations

from typing import Any

import js  # type: ignore[import-not-found]

from .dom import PanelEvents
from .farm_client import FarmMembership

STATE_TEXT = {
    "joining": "joining",
    "joined": "joined: this phone is offered to the farm's MCP servers",
    "refused": "the broker refused the credentials (retried every 30 s)",
    "lost": "cannot reach the broker (retried every 5 s)",
    "off": "not joined",
}


class FarmSettingsCard:
    """The Farm field and its status line, bound to the page's ``FarmMembership``."""

    def __init__(self, membership: FarmMembership) -> None:
        self._doc = js.document
        self.membership = membership
        self._events = PanelEvents()
        membership.on_state = lambda _state: self.show()
        self._events.listen("farm-form", "submit", self._on_submit)
        self._events.listen("farm-leave", "click", lambda _e: self._events.spawn(self.save("")))
        self.show()

    def _field(self) -> Any:
        return self._doc.getElementById("settings-farm")

    def _on_submit(self, event: Any) -> None:
        event.preventDefault()
        self._events.spawn(self.save(str(self._field().value or "")))

    async def save(self, text: str) -> None:
        """Use ``text`` as the page's farm URL (empty: leave the farm and forget it)."""
        text = text.strip()
        kept = self.membership.stored
        if text and kept is not None and text == kept.shown:
            self.show()  # the masked URL as shown: nothing changed
            return
        if "***" in text:
            self._say("invalid", "Type the whole farm URL, with its password: the field shows it masked.")
            return
        try:
            await self.membership.use(text or None)
        except ValueError as exc:  # the message names no credential
            self._say("invalid", f"Not a farm URL: {exc}. Expected ws://USER:PASSWORD@HOST:PORT.")
            return
        self.show()

    def show(self) -> None:
        """The field (masked URL) and the status line, from the membership as it is now."""
        membership = self.membership
        kept = membership.stored
        self._field().value = kept.shown if kept is not None else ""
        state = membership.state
        if membership.from_query:
            text = (
                f"In the farm this page's URL names (?farm=): {membership.shown or 'not a valid URL'} — "
                f"{STATE_TEXT.get(state, state)}. It wins over the URL kept here."
            )
        elif membership.shown is not None:
            text = f"Farm {membership.shown}: {STATE_TEXT.get(state, state)}."
        else:
            text = "Not in a phone farm."
        self._say(state, text)

    def _say(self, state: str, text: str) -> None:
        node = self._doc.getElementById("farm-state")
        node.dataset.farmState = state
        node.textContent = text
