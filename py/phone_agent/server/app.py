"""The one web app phone-agent serves on its port: the page, ``/api/config``, the relay, the ADB bridge,
and MCP over streamable HTTP.

Routes: ``GET /api/config`` (how the page learns it is served by phone-agent, where the relay and the
ADB bridge are, which device to connect to at load, the tool profile, and — for the user's browser
only, the one holding the page cookie — the relay's pairing secret and the model's API key; anyone
else learns only ``apiKeyWithheld``), ``POST /api/page-key`` (the page trades its link's token for that
cookie), ``POST /api/task-record`` (each task record the page stores,
kept for the page that replaces it: ``task_ledger``), ``POST /api/sim`` (the simulated phone, started
on demand), the relay WebSocket at ``/`` and ``/relay`` (a page must pair first, see ``pairing``), the
ADB bridge WebSocket at ``/adb``, ``/mcp`` (MCP, bearer token), the bearer-protected
``GET /api/server`` (who this server is, for ``phone-agent mcp`` and ``stop``) and ``POST /api/stop``,
and the page's files for everything else. The whole app sits behind ``AccessGuard`` (Host and Origin checks).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute
from starlette.websockets import WebSocket, WebSocketDisconnect

from .. import __version__
from ..relay.frames import CLOSE_SHUTDOWN, CLOSE_SHUTDOWN_REASON, CLOSE_UNPAIRED
from .access import AccessGuard, AccessPolicy
from .adb_bridge import BridgePolicy, serve_bridge
from .credentials import same_secret
from .mcp_http import MCP_PATH, McpHttpEndpoint, unauthorized
from .pairing import HELLO_TIMEOUT_S, PAGE_COOKIE_MAX_AGE_S, PAGE_KEY_PATH, PageKey, Paired, PairingGate
from .relay import Relay
from .sim_on_demand import SIM_PATH, SimOnDemand
from .static_files import NO_FRAMING, PageFiles
from .task_ledger import MAX_RECORD_BYTES, is_record
from .transfers import transfer_routes

log = logging.getLogger("phone_agent.app")

RELAY_PATH = "/relay"
ADB_BRIDGE_PATH = "/adb"
SERVER_INFO_PATH = "/api/server"
# Where a page hands the server each task record it stores (task_ledger); the pairing secret may stand in
# for the page cookie in this header (a page paired by code).
TASK_RECORD_PATH = "/api/task-record"
PAIRING_HEADER = "x-phone-agent-pairing"
STOP_PATH = "/api/stop"


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


@dataclass
class McpService:
    """What the app needs to serve MCP over HTTP and answer ``phone-agent mcp`` and ``stop``."""

    endpoint: McpHttpEndpoint
    # Who this server is (``GET /api/server``): version, pid, uid, port, options that matter to a client.
    identity: Mapping[str, object]
    request_stop: Callable[[], None]
    # What changes while it runs, added to that answer (``pagePaired``: a page is on the relay now).
    live: Callable[[], Mapping[str, object]] = dict


def mcp_service_routes(mcp: McpService) -> list[Route]:
    """``/mcp``, ``GET /api/server`` and ``POST /api/stop``, all behind the bearer token: what any
    phone-agent server offers MCP clients, ``phone-agent mcp`` and ``phone-agent stop``."""

    async def server_info(request: Request) -> Response:
        if not mcp.endpoint.guard.allows(request.headers):
            return unauthorized()
        return JSONResponse({**mcp.identity, **mcp.live()}, headers={"Cache-Control": "no-store"})

    async def stop(request: Request) -> Response:
        if not mcp.endpoint.guard.allows(request.headers):
            return unauthorized()
        print("phone-agent: stopping (phone-agent stop)", file=sys.stderr, flush=True)
        # Answer first, then stop: the caller learns the server heard it.
        asyncio.get_running_loop().call_later(0.05, mcp.request_stop)
        return JSONResponse({"stopping": True})

    return [
        Route(MCP_PATH, mcp.endpoint),
        Route(SERVER_INFO_PATH, server_info, methods=["GET"]),
        Route(STOP_PATH, stop, methods=["POST"]),
    ]


def mcp_lifespan(
    endpoint: McpHttpEndpoint,
) -> Callable[[Starlette], contextlib.AbstractAsyncContextManager[None]]:
    """The app's lifespan: the MCP session manager's task group runs while the app does."""

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with endpoint.running():
            yield

    return lifespan


def _same_origin_fetch(request: Request) -> bool:
    """Whether a browser says this request comes from a page of this origin (or the address bar). A
    request without fetch metadata (an older browser, a script) is let through: the answer is protected
    from other sites by the missing CORS headers and ``Cross-Origin-Resource-Policy``."""
    site = request.headers.get("sec-fetch-site")
    return site is None or site in ("same-origin", "none")


@dataclass
class PageRoutes:
    """The page's own endpoints: ``/api/config``, the page key, task records, and the relay and ADB
    bridge WebSockets (a page pairs before the relay takes it)."""

    relay: Relay
    policy: AccessPolicy
    answer: dict[str, object]
    bridge_policy: BridgePolicy
    pairing: PairingGate | None = None
    page_key: PageKey | None = None
    config_headers: Mapping[str, str] = field(
        default_factory=lambda: {
            "Cache-Control": "no-store",
            "Cross-Origin-Resource-Policy": "same-origin",
            **NO_FRAMING,
        }
    )

    async def config(self, request: Request) -> Response:
        if request.headers.get("sec-fetch-mode"):  # a browser's page (not a probe): it pairs within seconds,
            self.relay.page_booting()  # so a call made now waits for it rather than failing at once
        body = dict(self.answer)
        users_page = False
        if self.pairing is not None:
            # The page knows by this whether it was opened with the link (else it offers the code).
            linked = self.page_key is not None and self.page_key.browser_ok(request.cookies)
            body["pageKey"] = linked
            users_page = linked and _same_origin_fetch(request)
            if users_page:
                body["pairing"] = self.pairing.secret
        model = body.get("model")
        if isinstance(model, dict) and "apiKey" in model and not users_page:
            # The model's key, like the pairing secret, only to the user's page (the page cookie):
            # any other local process or page learns that there is one, not what it is.
            body["model"] = {**{k: v for k, v in model.items() if k != "apiKey"}, "apiKeyWithheld": True}
        return JSONResponse(body, headers=self.config_headers)

    async def claim_page_key(self, request: Request) -> Response:
        """The page trades its link's token for the page cookie (HttpOnly: no script reads it)."""
        headers = {"Cache-Control": "no-store"}
        if self.page_key is None or not self.policy.own_origin(request.headers.get("origin")):
            return JSONResponse({"error": "not this server's page"}, status_code=403, headers=headers)
        try:
            given = (await request.json()).get("token")
        except (ValueError, AttributeError):
            given = None
        if not self.page_key.token_ok(given):
            log.warning("refused a page link with a wrong token (rotated? `phone-agent url` prints the link)")
            return JSONResponse(
                {"error": "this link's token is not the server's: `phone-agent url` prints the current link"},
                status_code=403,
                headers=headers,
            )
        response = Response(status_code=204, headers=headers)
        response.set_cookie(
            self.page_key.cookie_name,
            self.page_key.cookie_value,
            max_age=PAGE_COOKIE_MAX_AGE_S,
            path="/",
            httponly=True,
            samesite="strict",
        )
        return response

    async def task_record(self, request: Request) -> Response:
        """A page stored a task record: the relay keeps it for the page that replaces this one. Only the
        user's browser (the page cookie, or the pairing secret a page paired by code holds)."""
        headers = {"Cache-Control": "no-store"}
        trusted = self.page_key is not None and self.page_key.browser_ok(request.cookies)
        if not trusted and self.pairing is not None:
            trusted = same_secret(request.headers.get(PAIRING_HEADER), self.pairing.secret)
        if not trusted or not self.policy.own_origin(request.headers.get("origin")):
            return JSONResponse({"error": "not the user's page"}, status_code=403, headers=headers)
        body = await request.body()
        try:
            record = json.loads(body) if len(body) <= MAX_RECORD_BYTES else None
        except ValueError:
            record = None
        if not is_record(record):
            return JSONResponse({"error": "not a task record"}, status_code=400, headers=headers)
        self.relay.share_task(record)
        return Response(status_code=204, headers=headers)

    async def pair(self, websocket: WebSocket) -> bool:
        """Whether the page's first frame pairs it; an unpaired page is closed with CLOSE_UNPAIRED."""
        if self.pairing is None:
            return True
        origin = websocket.headers.get("origin", "")
        try:
            first = await asyncio.wait_for(websocket.receive(), HELLO_TIMEOUT_S)
        except TimeoutError:
            first = {"type": "websocket.receive"}
        if first.get("type") == "websocket.disconnect":
            return False
        verdict = self.pairing.check(first.get("text") or first.get("bytes"), self.policy.own_origin(origin))
        if isinstance(verdict, Paired):
            await websocket.send_text(verdict.reply)
            if verdict.by_code:
                log.info("a page at %s paired with the relay by code", origin)
            return True
        if verdict.show_code is not None:
            print(
                f"phone-agent: a page at {origin} asks to use the relay: type the pairing code "
                f"{verdict.show_code} into it (the MCP relay card)",
                file=sys.stderr,
                flush=True,
            )
        log.info("refused a page at %s: %s", origin, verdict.reason)
        with contextlib.suppress(Exception):
            await websocket.close(code=CLOSE_UNPAIRED, reason=verdict.reason)
        return False

    async def adb_bridge(self, websocket: WebSocket) -> None:
        await serve_bridge(websocket, self.bridge_policy)

    async def relay_socket(self, websocket: WebSocket) -> None:
        if self.relay.closing:  # the server is stopping: a page that retries at once is turned away quietly
            await websocket.close(code=CLOSE_SHUTDOWN)
            return
        await websocket.accept()
        if not await self.pair(websocket):
            return
        if self.relay.closing:  # stopped while pairing (no await between this check and the attach)
            await websocket.close(code=CLOSE_SHUTDOWN, reason=CLOSE_SHUTDOWN_REASON)
            return
        origin = websocket.headers.get("origin", "?")
        page = await self.relay.page_connected(StarletteLink(websocket), f"page ({origin})")
        try:
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                data = message.get("text")
                if data is None:
                    data = message.get("bytes") or b""
                self.relay.page_frame(page, data)
        except (WebSocketDisconnect, RuntimeError):  # RuntimeError: receiving on a socket we closed
            pass
        finally:
            self.relay.page_disconnected(page)

    def routes(self) -> list[Route | WebSocketRoute]:
        return [
            Route("/api/config", self.config, methods=["GET"]),
            Route(PAGE_KEY_PATH, self.claim_page_key, methods=["POST"]),
            Route(TASK_RECORD_PATH, self.task_record, methods=["POST"]),
            WebSocketRoute("/", self.relay_socket),
            WebSocketRoute(RELAY_PATH, self.relay_socket),
            WebSocketRoute(ADB_BRIDGE_PATH, self.adb_bridge),
        ]


def build_app(
    relay: Relay,
    root: Path,
    policy: AccessPolicy,
    bridge: BridgePolicy | None = None,
    page_defaults: Mapping[str, object] | None = None,
    pairing: PairingGate | None = None,
    mcp: McpService | None = None,
    page_key: PageKey | None = None,
    sim_on_demand: SimOnDemand | None = None,
) -> Starlette:
    """The app; ``page_key`` (None: no page link, no secret in ``/api/config``) tells the user's browser."""
    page = PageRoutes(relay, policy, api_config(page_defaults), bridge or BridgePolicy(), pairing, page_key)
    sim_on_demand = sim_on_demand or SimOnDemand()
    routes: list[Route | WebSocketRoute] = [
        *page.routes(),
        Route(SIM_PATH, sim_on_demand.handle, methods=["POST"]),
    ]
    lifespan = None
    if mcp is not None:
        routes += mcp_service_routes(mcp)
        guard = mcp.endpoint.guard
        # The page's chunk requests: a browser's come with an Origin the relay accepts (a same-origin
        # GET may come without one); the transfer's id is the key either way.
        routes += transfer_routes(
            relay.transfers,
            lambda request: guard.allows(request.headers),
            lambda origin: origin is None or policy.origin_allowed(origin),
        )
        lifespan = mcp_lifespan(mcp.endpoint)
    routes.append(Route("/{path:path}", PageFiles(root).handle, methods=["GET", "HEAD"]))
    app = Starlette(routes=routes, middleware=[Middleware(AccessGuard, policy=policy)], lifespan=lifespan)
    app.state.sim_on_demand = sim_on_demand  # closed with the server (runtime)
    return app
