"""``POST /api/sim``: the simulated phone, started on demand for a newcomer with no phone at hand.

The page offers "Start the simulated phone" when it has no phone; the server answers where its one
simulated phone is: ``{"device": "tcp:127.0.0.1:PORT"}``. With ``serve --sim`` that is the phone it
already runs; otherwise it starts one (once, on 127.0.0.1, a free port: 5555 may be another
server's ``--sim``). Both are made by ``start_server_sim``, so the page's button gives the very
phone ``serve --sim`` does (scrcpy 2.5 under app_process included). Only a same-origin request from
this machine may ask: a page of another site, or another host on the network, cannot make this server
start anything.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from starlette.requests import Request
from starlette.responses import JSONResponse, Response

if TYPE_CHECKING:
    from ..sim.server import SimulatedPhoneServer

log = logging.getLogger("phone_agent.sim_on_demand")

SIM_PATH = "/api/sim"


def _loopback(address: str | None) -> bool:
    try:
        return address is not None and ipaddress.ip_address(address.split("%")[0]).is_loopback
    except ValueError:
        return False


async def start_server_sim(host: str, port: int, realistic: Any = None) -> SimulatedPhoneServer:
    """Start the simulated phone a phone-agent server runs beside itself (``serve --sim``, or on the
    page's demand): authentication accepting any key, scrcpy 2.5 under app_process, ``realistic``: its
    ``--realistic`` profile (None: the instant phone). OSError when the port is taken."""
    from ..sim.server import SimulatedPhoneServer  # loaded only when a phone is wanted

    sim = SimulatedPhoneServer(host, port, auth="accept", scrcpy=True, realistic=realistic)
    await sim.start()
    return sim


class SimOnDemand:
    """The server's one simulated phone for the page's button: the one ``serve --sim`` runs
    (``running``, e.g. ``tcp:127.0.0.1:5555``), else one started the first time a same-origin page on
    this machine asks (given ``realistic()``, the ``--realistic`` profile, None for the instant phone)."""

    def __init__(self, running: str | None = None, realistic: Callable[[], Any] | None = None) -> None:
        self._running = running
        self._realistic = realistic or (lambda: None)
        self._sim: SimulatedPhoneServer | None = None
        self._lock = asyncio.Lock()

    @property
    def device(self) -> str | None:
        if self._running is not None:
            return self._running
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
            if self.device is None:
                try:
                    sim = await start_server_sim("127.0.0.1", 0, self._realistic())
                except OSError as exc:
                    return JSONResponse({"error": f"the simulated phone could not start: {exc}"}, 500)
                self._sim = sim
                log.info("started the simulated phone on 127.0.0.1:%d (asked for by the page)", sim.port)
        return JSONResponse({"device": self.device}, headers={"Cache-Control": "no-store"})

    async def close(self) -> None:
        if self._sim is not None:
            sim, self._sim = self._sim, None
            await sim.close()
