"""The web server: the page, the relay, the ADB bridge and MCP over streamable HTTP at ``/mcp`` on one
port, under uvicorn, as a task in the caller's event loop; with the idle watch of ``--idle-exit-s``.

The bearer token is never logged.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time

from ..relay.core import RelayCore
from . import credentials
from .access import AccessPolicy
from .adb_bridge import BridgePolicy
from .app import RELAY_PATH, McpService, build_app
from .listen import StartupError, bind_socket, is_loopback, open_page_line, page_link, page_url
from .mcp_bridge import build_mcp_server
from .mcp_http import MCP_PATH, McpHttpEndpoint
from .mcp_quick import quick_calls
from .options import ServerOptions
from .page_source import missing_page, missing_runtime
from .pairing import PageKey, PairingGate
from .relay import Relay
from .sim_on_demand import SimOnDemand
from .uvicorn_task import ServerRecord, UvicornTask, server_identity, watch_idle

log = logging.getLogger("phone_agent.server")

# A result travels in one frame: a screenshot as base64 PNG, or a pulled file or a recording inline
# (up to 64 MiB, so about 86 MB as base64): 96 MiB leaves room for the JSON around it.
WS_MAX_SIZE = 96 * 1024 * 1024


class WebServer:
    """The relay and the page on one port, under uvicorn, as a task in the caller's loop."""

    def __init__(self, options: ServerOptions) -> None:
        self.options = options
        token = options.token or credentials.load_token()
        pairing = PairingGate(credentials.load_pairing_secret())
        self._sock = bind_socket(options.host, options.port)
        self.port: int = self._sock.getsockname()[1]
        self.relay = Relay(
            RelayCore(
                timeout_overrides=dict(options.tool_timeouts), page_url=page_url(options.host, self.port)
            ),
            options.self_check_delay_s,
            page_wait_s=options.page_wait_s,
        )
        self.relay.secrets = dict(options.secrets)  # PHONE_AGENT_SECRET_<NAME>: never logged
        self.relay.confirm_always = options.confirm == "always"
        self.stop_requested = asyncio.Event()
        policy = AccessPolicy.for_server(options.host, self.port, options.allow_origins)
        model = options.page_model_defaults()
        if not is_loopback(options.host):
            # Host and Origin checks stop browsers, not scripts that forge the headers: on a shared
            # network whoever reaches the port can drive the phone, so say so, and keep the key home.
            log.warning(
                "listening on %s, not only on this machine: anyone who can reach port %d can drive the "
                "phone through the page; /mcp is guarded by the bearer token alone, so keep it secret "
                "(phone-agent token --rotate replaces it); prefer the default 127.0.0.1",
                options.host,
                self.port,
            )
            if model and model.pop("apiKey", None):
                log.warning("the model API key is not handed to the page while listening beyond loopback")
        self._page_token = credentials.load_page_token()
        profile = options.tool_profile
        self.mcp_endpoint = McpHttpEndpoint(
            build_mcp_server(self.relay, profile), token, quick_calls(self.relay, profile)
        )
        self.identity = server_identity(options, self.port)
        self._record = ServerRecord(self.port, self.identity, options.host)
        self.app = app = build_app(
            self.relay,
            options.root,
            policy,
            bridge=BridgePolicy(frozenset(host.lower() for host in options.allow_device_hosts)),
            page_defaults={
                "device": options.default_device,
                "model": model,
                "toolProfile": options.tool_profile,
            },
            pairing=pairing,
            page_key=PageKey(self._page_token, self.port),
            mcp=McpService(
                self.mcp_endpoint,
                self.identity,
                self.stop_requested.set,
                live=lambda: {"pagePaired": self.relay.has_page},
            ),
            # With --sim the page's "Start the simulated phone" answers the phone already running.
            sim_on_demand=SimOnDemand(
                options.default_device if options.sim else None, options.realistic_profile
            ),
        )
        self._uvicorn = UvicornTask(
            app,
            self._sock,
            access_log=options.verbose,
            ws_max_size=WS_MAX_SIZE,
            # Compression halves the ADB bridge's throughput on random data (PLATFORM.md) and buys
            # nothing for small relay frames.
            ws_per_message_deflate=False,
        )
        self._page_seen = time.monotonic()

    @property
    def url(self) -> str:
        return page_url(self.options.host, self.port)

    @property
    def link(self) -> str:
        """The page's link: its URL with the token, which the user's browser trades for the page cookie."""
        return page_link(self.url, self._page_token)

    async def start(self) -> None:
        problem = missing_page(self.options.root)
        if problem:
            raise StartupError(problem)
        await self._uvicorn.start()
        relay_url = self.url.replace("http://", "ws://", 1).rstrip("/") + RELAY_PATH
        runtime = missing_runtime(self.options.root)
        if runtime:
            log.warning("%s", runtime)
        print(f"phone-agent: serving {self.options.root} (page and relay on one port)", file=sys.stderr)
        print(f"phone-agent: WebSocket relay on {relay_url}", file=sys.stderr)
        print(
            f"phone-agent: MCP over streamable HTTP on {self.url.rstrip('/')}{MCP_PATH} "
            f"({self.options.tool_profile} tools; bearer token: `phone-agent token` prints it)",
            file=sys.stderr,
        )
        if self.options.idle_exit_s:
            print(
                f"phone-agent: exits after {self.options.idle_exit_s:g} s with no MCP client and no page",
                file=sys.stderr,
            )
        self._record.write()
        if self.options.model_base_url or self.options.model_name:
            key = "set" if self.options.model_api_key else "not set"
            print(
                f"phone-agent: the page's default model: {self.options.model_name or '(none)'} at "
                f"{self.options.model_base_url or '(no base URL)'} (API key {key})",
                file=sys.stderr,
            )
        # The link carries the token on purpose (as Jupyter's does): it is what makes this browser the
        # user's. So it is shown only to a person at a terminal, never into a log or CI's output.
        line = open_page_line(self.link, self.port, sys.stderr, os.environ, self.relay.has_page)
        if line:
            print(line, file=sys.stderr, flush=True)

    @property
    def task(self) -> asyncio.Task[None]:
        return self._uvicorn.task

    async def stop(self) -> None:
        self._record.remove()
        await self.relay.close()
        await self.mcp_endpoint.close_streams()  # a client's standing GET stream must not hold the stop
        await self.app.state.sim_on_demand.close()
        await self._uvicorn.stop()

    @property
    def failed(self) -> bool:
        """Whether uvicorn ended by itself (only a failure does that)."""
        return self._uvicorn.failed

    def idle_for(self) -> float:
        """Seconds with no MCP request open and no page connected (0 while either is there)."""
        if self.relay.has_page:
            self._page_seen = time.monotonic()
            return 0.0
        since_page = time.monotonic() - self._page_seen
        return min(self.mcp_endpoint.idle_for(), since_page)

    async def watch_idle(self, idle_exit_s: float) -> None:
        """Return once the server has been idle for ``idle_exit_s``."""
        await watch_idle(self.idle_for, idle_exit_s, "MCP client and no page")
