"""``POST /api/sim``: the simulated phone, started on demand for a newcomer with no phone at hand.

The page offers "Start the simulated phone" when it has no phone; the server starts one (once, on
127.0.0.1, a free port) and answers where it is: ``{"device": "tcp:127.0.0.1:PORT"}``. Only a
same-origin request from this machine may ask: a page of another site, or another host on the network,
cannot make this server start anything.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections.abc import Callable
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

log = logging.getLogger("phone_agent.sim_on_demand")

SIM_PATH = "/api/sim"


def _loopback(address: str | None) -> bool:
    try:
        return address is not None and ipaddress.ip_address(address.split("%")[0]).is_loopback
    except ValueError:
        return False


class SimOnDemand:
    """Starts one simulated phone the first time a same-origin page on this machine asks."""

    def __init__(self, realistic: Callable[[], Any] | None = None) -> None:
        # What the started phone is given as its --realistic profile (None: the instant phone).
        self._realistic = realistic or (lambda: None)
        self._sim: Any = None
        self._lock = asyncio.Lock()

    @property
    def device(self) -> str | None:
        return None if self._sim is None else f"tcp:127.0.0.1:{self._sim.port}"

    async def handle(self, request: Request) -> Response:
        client = request.client.host if request.client is not None else None
        origin = request.headers.get("origin")
        own = f"http://{request.headers.get('host', '')}"
        if not _loopback(client):
            return JSONResponse({"error": "the simulated phone is started for this machine only"}, 403)
        if origin != own or request.headers.get("sec-fetch-site", "same-origin") != "same-origin":
            refusal = {"error": "only the page this server serves may start the simulated phone"}
            return JSONResponse(refusal, 403)
        async with self._lock:
            if self._sim is None:
                from ..sim.server import SimulatedPhoneServer  # loaded only when asked for

                sim = SimulatedPhoneServer("127.0.0.1", 0, auth="accept", realistic=self._realistic())
                try:
                    await sim.start()
                except OSError as exc:
                    return JSONResponse({"error": f"the simulated phone could not start: {exc}"}, 500)
                self._sim = sim
                log.info("started the simulated phone on 127.0.0.1:%d (asked for by the page)", sim.port)
        return JSONResponse({"device": self.device}, headers={"Cache-Control": "no-store"})

    async def close(self) -> None:
        if self._sim is not None:
            sim, self._sim = self._sim, None
            await sim.close()
