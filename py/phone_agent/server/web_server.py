"""The web server: the page, the relay, the ADB bridge and MCP over streamable HTTP at ``/mcp`` on one
port, under uvicorn, as a task in the caller's event loop; with the idle watch of ``--idle-exit-s``.

The bearer token is never logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import time

import uvicorn

from .. import __version__
from . import credentials
from .access import AccessPolicy
from .adb_bridge import BridgePolicy
from .app import RELAY_PATH, McpService, build_app
from .listen import StartupError, bind_socket, is_loopback, page_url
from .mcp_bridge import build_mcp_server
from .mcp_http import MCP_PATH, McpHttpEndpoint
from .options import ServerOptions
from .pairing import PairingGate
from .relay import Relay
from .relay_core import RelayCore

log = logging.getLogger("phone_agent.server")

# Screenshots travel as base64 PNG in one frame; 32 MiB leaves room for a large phone screen.
WS_MAX_SIZE = 32 * 1024 * 1024
STARTUP_S = 10.0
SHUTDOWN_S = 5.0
# The idle exit is checked this often (at most); a short --idle-exit-s checks more often.
IDLE_CHECK_S = 5.0


class _QuietUvicorn(uvicorn.Server):
    """uvicorn without its own signal handling: this process decides what a signal stops (``run``)."""

    def capture_signals(self) -> contextlib.AbstractContextManager[None]:  # type: ignore[override]
        return contextlib.nullcontext()


class WebServer:
    """The relay and the page on one port, under uvicorn, as a task in the caller's loop."""

    def __init__(self, options: ServerOptions) -> None:
        self.options = options
        self.relay = Relay(
            RelayCore(timeout_overrides=dict(options.tool_timeouts)),
            options.self_check_delay_s,
            page_wait_s=options.page_wait_s,
        )
        token = options.token or credentials.load_token()
        pairing = PairingGate(credentials.load_pairing_secret())
        self._sock = bind_socket(options.host, options.port)
        self.port: int = self._sock.getsockname()[1]
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
        self.mcp_endpoint = McpHttpEndpoint(build_mcp_server(self.relay, options.tool_profile), token)
        self.identity: dict[str, object] = {
            "server": "phone-agent",
            "version": __version__,
            "pid": os.getpid(),
            "uid": os.getuid() if hasattr(os, "getuid") else None,
            "port": self.port,
            "toolProfile": options.tool_profile,
            "sim": options.sim,
            "allowOrigins": sorted(options.allow_origins),
            "idleExitS": options.idle_exit_s,
        }
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
            mcp=McpService(self.mcp_endpoint, self.identity, self.stop_requested.set),
        )
        config = uvicorn.Config(
            app,
            log_config=None,
            access_log=options.verbose,
            ws_max_size=WS_MAX_SIZE,
            # Compression halves the ADB bridge's throughput on random data (PLATFORM.md) and buys
            # nothing for small relay frames.
            ws_per_message_deflate=False,
            timeout_graceful_shutdown=1,
            # The lifespan runs the MCP session manager's task group.
            lifespan="on",
            server_header=False,
        )
        self._uvicorn = _QuietUvicorn(config)
        self._task: asyncio.Task[None] | None = None
        self._record_written = False
        self._page_seen = time.monotonic()

    @property
    def url(self) -> str:
        return page_url(self.options.host, self.port)

    async def start(self) -> None:
        self._task = asyncio.create_task(self._uvicorn.serve(sockets=[self._sock]))
        async with asyncio.timeout(STARTUP_S):
            while not self._uvicorn.started:
                if self._task.done():
                    self._task.result()
                    raise StartupError("the web server stopped while starting")
                await asyncio.sleep(0.02)
        relay_url = self.url.replace("http://", "ws://", 1).rstrip("/") + RELAY_PATH
        root = self.options.root
        if not (root / "index.html").is_file():
            log.warning("%s has no index.html: the page will not load (wrong --root?)", root)
        elif not (root / "static" / "vendor" / "pyodide").is_dir():
            log.warning("%s has no static/vendor/pyodide: run scripts/setup to vendor the runtime", root)
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
        with contextlib.suppress(OSError):
            credentials.write_server_record(
                self.port, {**self.identity, "host": self.options.host, "started": time.time()}
            )
            self._record_written = True
        if self.options.model_base_url or self.options.model_name:
            key = "set" if self.options.model_api_key else "not set"
            print(
                f"phone-agent: the page's default model: {self.options.model_name or '(none)'} at "
                f"{self.options.model_base_url or '(no base URL)'} (API key {key})",
                file=sys.stderr,
            )
        print(f"phone-agent: open {self.url} in Chrome", file=sys.stderr, flush=True)

    @property
    def task(self) -> asyncio.Task[None]:
        assert self._task is not None, "start() first"
        return self._task

    async def stop(self) -> None:
        if self._record_written:
            credentials.remove_server_record(self.port, os.getpid())
        await self.relay.close()
        await self.app.state.sim_on_demand.close()
        self._uvicorn.should_exit = True
        if self._task is not None:
            try:
                async with asyncio.timeout(SHUTDOWN_S):
                    await self._task
            except TimeoutError:
                self._uvicorn.force_exit = True
                log.warning("the web server did not stop within %ss", SHUTDOWN_S)
            except Exception as exc:
                log.error("the web server failed: %s: %s", type(exc).__name__, exc)
        self._sock.close()

    @property
    def failed(self) -> bool:
        """Whether uvicorn ended by itself (only a failure does that)."""
        task = self._task
        return task is not None and task.done() and not self._uvicorn.should_exit

    def idle_for(self) -> float:
        """Seconds with no MCP request open and no page connected (0 while either is there)."""
        if self.relay.has_page:
            self._page_seen = time.monotonic()
            return 0.0
        since_page = time.monotonic() - self._page_seen
        return min(self.mcp_endpoint.idle_for(), since_page)

    async def watch_idle(self, idle_exit_s: float) -> None:
        """Return once the server has been idle for ``idle_exit_s``."""
        period = max(0.05, min(IDLE_CHECK_S, idle_exit_s / 4))
        while self.idle_for() < idle_exit_s:
            await asyncio.sleep(period)
        log.info("no MCP client and no page for %g s; exiting", idle_exit_s)
