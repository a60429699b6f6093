"""The page's offer to a newcomer with no phone: "Start the simulated phone".

Shown while no phone is connected when the server can start one (``simOnDemand`` in /api/config).
A click asks the server (``POST /api/sim``, same origin) and connects to the phone it names; after a
drop the phone panel asks again (``locate``): a restarted server runs another one, maybe elsewhere.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import js  # type: ignore[import-not-found]

from .dom import PanelEvents
from .interop import to_js_json

# Connects the page to the simulated phone at HOST:PORT, given how to find it again after a drop.
ConnectSimulated = Callable[[str, Callable[[], Awaitable[str]]], Awaitable[None]]


class SimUnavailable(ConnectionError):
    """The server could not give its simulated phone (its reason, or the HTTP status)."""


class SimOffer:
    def __init__(self, path: str | None, connect_simulated: ConnectSimulated) -> None:
        self._path = path
        self._connect_simulated = connect_simulated
        self._events = PanelEvents()
        offer = js.document.getElementById("sim-offer")
        if not path or offer is None:
            return
        offer.hidden = False
        self._events.listen("start-sim", "click", lambda _event: self._events.spawn(self.start()))

    async def locate(self) -> str:
        """Where the server's simulated phone is (``HOST:PORT``); the server starts it when none runs.
        The phone panel asks again after a drop: a restarted server runs another one."""
        if not self._path:
            raise SimUnavailable("this server offers no simulated phone")
        options: Any = to_js_json({"method": "POST", "cache": "no-store"})
        response = await js.fetch(self._path.lstrip("/"), options)
        answer = json.loads(await response.text())
        device = answer.get("device") if isinstance(answer, dict) else None
        if not response.ok or not isinstance(device, str) or not device.startswith("tcp:"):
            reason = answer.get("error") if isinstance(answer, dict) else None
            raise SimUnavailable(str(reason or response.status))
        return device[len("tcp:") :]

    async def start(self) -> None:
        button = js.document.getElementById("start-sim")
        button.disabled = True
        state = js.document.getElementById("device-state")
        state.textContent = "Starting the simulated phone…"
        try:
            try:
                target = await self.locate()
            except Exception as exc:
                state.textContent = f"The simulated phone could not start: {exc}"
                return
            await self._connect_simulated(target, self.locate)
        finally:
            button.disabled = False
