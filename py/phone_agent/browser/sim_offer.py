"""The page's offer to a newcomer with no phone: "Start the simulated phone".

Shown while no phone is connected when the server can start one (``simOnDemand`` in /api/config).
A click asks the server (``POST /api/sim``, same origin) and connects to the phone it names.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import js  # type: ignore[import-not-found]

from .dom import PanelEvents
from .interop import to_js_json


class SimOffer:
    def __init__(self, path: str | None, connect_tcp: Callable[[str], Awaitable[None]]) -> None:
        self._path = path
        self._connect_tcp = connect_tcp
        self._events = PanelEvents()
        offer = js.document.getElementById("sim-offer")
        if not path or offer is None:
            return
        offer.hidden = False
        self._events.listen("start-sim", "click", lambda _event: self._events.spawn(self.start()))

    async def start(self) -> None:
        button = js.document.getElementById("start-sim")
        button.disabled = True
        state = js.document.getElementById("device-state")
        state.textContent = "Starting the simulated phone…"
        try:
            options: Any = to_js_json({"method": "POST", "cache": "no-store"})
            response = await js.fetch(self._path.lstrip("/"), options)
            answer = json.loads(await response.text())
            device = answer.get("device") if isinstance(answer, dict) else None
            if not response.ok or not isinstance(device, str) or not device.startswith("tcp:"):
                reason = answer.get("error") if isinstance(answer, dict) else None
                state.textContent = f"The simulated phone could not start: {reason or response.status}"
                return
            await self._connect_tcp(device[len("tcp:") :])
        except Exception as exc:
            state.textContent = f"The simulated phone could not start: {exc}"
        finally:
            button.disabled = False
