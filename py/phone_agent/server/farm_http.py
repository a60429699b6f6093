"""``phone-agent serve --farm nats://…``: the farm's router as MCP over streamable HTTP at ``/mcp``.

The same tool set as ``phone-agent mcp --farm`` (every tool of the profile with an optional ``device``,
plus ``list_devices``; ``farm_mcp``), behind the same bearer token, Host and Origin checks as the local
``/mcp`` (``mcp_http``, ``access``), with ``GET /api/server`` and ``POST /api/stop`` so that
``phone-agent mcp`` and ``phone-agent stop`` treat it as any phone-agent server on the port.

It opens no page and holds no phone: the farm's pages are served by phone-agent servers next to their
phones and join the broker themselves. So this server has no relay and no ADB bridge; ``GET /api/config``
says only who it is (``{"server": "phone-agent", "version", "farmRouter": true}``, what ``phone-agent
mcp`` probes a port with), ``GET /`` answers a short note saying it is a farm router, and every other
page path is 404.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from pathlib import Path

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from .. import __version__
from ..farm.frames import FarmUrl
from . import credentials
from .access import AccessGuard, AccessPolicy
from .app import McpService, mcp_lifespan, mcp_service_routes
from .farm import FarmRouter
from .farm_mcp import build_farm_mcp_server
from .listen import StartupError, bind_socket, is_loopback, page_url
from .mcp_http import MCP_PATH, McpHttpEndpoint
from .options import ServerOptions
from .static_files import NO_FRAMING
from .uvicorn_task import ServerRecord, UvicornTask, server_identity, watch_idle

log = logging.getLogger("phone_agent.farm")

FARM_ROUTER_NOTE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>phone-agent: farm router</title></head>
<body data-farm-router="true">
<h1>phone-agent: a farm router</h1>
<p>This server serves no page and holds no phone. It routes MCP calls (streamable HTTP at
<code>/mcp</code>, with the bearer token that <code>phone-agent token</code> prints) to the phones of a
NATS phone farm.</p>
<p>A phone joins the farm from its own page: <code>phone-agent serve</code> (without
<code>--farm</code>) next to the phone, then the page with <code>?farm=ws://USER:PASSWORD@HOST:PORT</code>
or the Farm field of its Settings. See docs/farm.md.</p>
</body></html>
"""


def farm_router_app(mcp: McpService, policy: AccessPolicy) -> Starlette:
    """The router's web app: MCP, who it is, stop, and the note at ``/``."""

    headers = {"Cache-Control": "no-store", **NO_FRAMING}

    async def note(request: Request) -> Response:
        return HTMLResponse(FARM_ROUTER_NOTE, headers=headers)

    async def config(request: Request) -> Response:
        body = {"server": "phone-agent", "version": __version__, "farmRouter": True}
        return JSONResponse(body, headers={**headers, "Cross-Origin-Resource-Policy": "same-origin"})

    routes = [
        *mcp_service_routes(mcp),
        Route("/api/config", config, methods=["GET"]),
        Route("/", note, methods=["GET", "HEAD"]),
    ]
    return Starlette(
        routes=routes,
        middleware=[Middleware(AccessGuard, policy=policy)],
        lifespan=mcp_lifespan(mcp.endpoint),
    )


class FarmWebServer:
    """``/mcp`` over the farm on one port, under uvicorn, as a task in the caller's loop; it has the
    interface ``runtime.serve`` drives (start, task, stop_requested, failed, watch_idle, stop)."""

    def __init__(self, options: ServerOptions, url: FarmUrl, nkey_seed: Path | None = None) -> None:
        self.options = options
        self.farm_url = url
        self.router = FarmRouter(url, dict(options.tool_timeouts), nkey_seed=nkey_seed)
        token = options.token or credentials.load_token()
        self._sock = bind_socket(options.host, options.port)
        self.port: int = self._sock.getsockname()[1]
        self.stop_requested = asyncio.Event()
        policy = AccessPolicy.for_server(options.host, self.port, options.allow_origins)
        if not is_loopback(options.host):
            log.warning(
                "listening on %s, not only on this machine: anyone who can reach port %d and holds the "
                "bearer token drives every phone of the farm; prefer the default 127.0.0.1",
                options.host,
                self.port,
            )
        server = build_farm_mcp_server(self.router, options.tool_profile)
        self.mcp_endpoint = McpHttpEndpoint(server, token)
        # The farm's URL with its credentials masked; this answer is behind the bearer token anyway.
        self.identity = server_identity(options, self.port, sim=False, farm=url.shown)
        self._record = ServerRecord(self.port, self.identity, options.host)
        mcp = McpService(self.mcp_endpoint, self.identity, self.stop_requested.set)
        self.app = farm_router_app(mcp, policy)
        self._uvicorn = UvicornTask(self.app, self._sock, access_log=options.verbose)

    @property
    def url(self) -> str:
        return page_url(self.options.host, self.port)

    async def start(self) -> None:
        """Join the farm first (a broker that refuses is a StartupError), then listen."""
        from .farm import FarmConnectError

        try:
            await self.router.start()
        except FarmConnectError as exc:
            self._sock.close()
            raise StartupError(str(exc)) from None
        try:
            await self._uvicorn.start()
        except BaseException:  # nobody calls stop() after a failed start: leave the farm and the port
            await self.router.close()
            self._sock.close()
            raise
        print(f"phone-agent: routing MCP calls over the farm at {self.farm_url.shown}", file=sys.stderr)
        print(
            f"phone-agent: MCP over streamable HTTP on {self.url.rstrip('/')}{MCP_PATH} "
            f"({self.options.tool_profile} tools, each with a device; bearer token: `phone-agent token` "
            "prints it); no page is served here",
            file=sys.stderr,
            flush=True,
        )
        self._record.write()

    @property
    def task(self) -> asyncio.Task[None]:
        return self._uvicorn.task

    @property
    def failed(self) -> bool:
        return self._uvicorn.failed

    def idle_for(self) -> float:
        """Seconds with no MCP request open (the farm's pages do not count: they are not ours)."""
        return self.mcp_endpoint.idle_for()

    async def watch_idle(self, idle_exit_s: float) -> None:
        await watch_idle(self.idle_for, idle_exit_s, "MCP client")

    async def stop(self) -> None:
        self._record.remove()
        await self._uvicorn.stop()
        await self.router.close()


def run_farm_router(options: ServerOptions, farm: str, nkey_seed: Path | None = None) -> int:
    """``phone-agent serve --farm URL [--farm-nkey-seed FILE]`` to its end; the exit code."""
    from .farm_mcp import farm_url_from, nkey_seed_from
    from .runtime import run_server

    if options.sim:
        raise SystemExit("phone-agent: error: --farm serves no page, so --sim has no page to serve its phone")
    url = farm_url_from(farm)
    seed = nkey_seed_from(nkey_seed, url)
    return run_server(options, lambda chosen: FarmWebServer(chosen, url, seed))
