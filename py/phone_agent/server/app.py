"""The one web app phone-agent serves on its port: the page, ``/api/config``, the relay, the ADB bridge.

Routes: ``GET /api/config`` (how the page learns it is served by phone-agent, where the relay and the
ADB bridge are, and which device to connect to at load), ``POST /api/sim`` (the simulated phone,
started on demand), the relay WebSocket at ``/`` and ``/relay``,
the ADB bridge WebSocket at ``/adb``, and the page's files for everything else. The whole app sits
behind ``AccessGuard`` (Host and Origin checks).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from .. import __version__
from .access import AccessGuard, AccessPolicy
from .adb_bridge import BridgePolicy, serve_bridge
from .relay import Relay
from .sim_on_demand import SIM_PATH, SimOnDemand
from .static_files import NO_FRAMING, PageFiles

log = logging.getLogger("phone_agent.app")

RELAY_PATH = "/relay"
ADB_BRIDGE_PATH = "/adb"


@dataclass
class StarletteLink:
    """A page's WebSocket as the relay's ``PageLink``."""

    websocket: WebSocket

    async def send_text(self, text: str) -> None:
        await self.websocket.send_text(text)

    async def close(self, code: int, reason: str) -> None:
        await self.websocket.close(code=code, reason=reason)


def api_config(page_defaults: Mapping[str, object] | None = None) -> dict[str, object]:
    """What ``GET /api/config`` answers; later features add keys, never rename these."""
    return {
        "server": "phone-agent",
        "version": __version__,
        "relay": RELAY_PATH,
        "adbBridge": ADB_BRIDGE_PATH,
        "device": None,
        "simOnDemand": SIM_PATH,
        **(page_defaults or {}),
    }


def build_app(
    relay: Relay,
    root: Path,
    policy: AccessPolicy,
    bridge: BridgePolicy | None = None,
    page_defaults: Mapping[str, object] | None = None,
) -> Starlette:
    bridge_policy = bridge or BridgePolicy()
    answer = api_config(page_defaults)

    async def config(request: Request) -> Response:
        return JSONResponse(
            answer,
            headers={
                "Cache-Control": "no-store",
                "Cross-Origin-Resource-Policy": "same-origin",
                **NO_FRAMING,
            },
        )

    async def adb_bridge(websocket: WebSocket) -> None:
        await serve_bridge(websocket, bridge_policy)

    async def relay_socket(websocket: WebSocket) -> None:
        await websocket.accept()
        origin = websocket.headers.get("origin", "?")
        page = await relay.page_connected(StarletteLink(websocket), f"page ({origin})")
        try:
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                data = message.get("text")
                if data is None:
                    data = message.get("bytes") or b""
                relay.page_frame(page, data)
        except (WebSocketDisconnect, RuntimeError):  # RuntimeError: receiving on a socket we closed
            pass
        finally:
            relay.page_disconnected(page)

    sim_on_demand = SimOnDemand()
    routes = [
        Route("/api/config", config, methods=["GET"]),
        Route(SIM_PATH, sim_on_demand.handle, methods=["POST"]),
        WebSocketRoute("/", relay_socket),
        WebSocketRoute(RELAY_PATH, relay_socket),
        WebSocketRoute(ADB_BRIDGE_PATH, adb_bridge),
        Route("/{path:path}", PageFiles(root).handle, methods=["GET", "HEAD"]),
    ]
    app = Starlette(routes=routes, middleware=[Middleware(AccessGuard, policy=policy)])
    app.state.sim_on_demand = sim_on_demand  # closed with the server (runtime)
    return app
