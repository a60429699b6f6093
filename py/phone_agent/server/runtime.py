"""Running phone-agent's server (``phone-agent serve``): bind the port, serve the web app with uvicorn —
the page, the relay, the ADB bridge and MCP over streamable HTTP at ``/mcp`` — until a signal,
``phone-agent stop``, or (with ``--idle-exit-s``, as when ``phone-agent mcp`` started it in the
background) a while with no MCP client and no page.

Everything this process logs goes to stderr (a background server's stderr is its log file). uvicorn's
default log config sends access logs to stdout, so it is replaced, not tuned. The bearer token is never
logged.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import logging
import os
import signal
import socket
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import uvicorn

from .. import __version__
from ..tools import DEFAULT_TOOL_PROFILE
from . import credentials
from .access import AccessPolicy, host_for_url
from .adb_bridge import BridgePolicy
from .app import RELAY_PATH, McpService, build_app
from .mcp_bridge import build_mcp_server
from .mcp_http import MCP_PATH, McpHttpEndpoint
from .pairing import PairingGate
from .relay import DEFAULT_PAGE_WAIT_S, DEFAULT_SELF_CHECK_DELAY_S, Relay
from .relay_core import RelayCore

log = logging.getLogger("phone_agent.server")

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7788
PORT_ENV = "PHONE_AGENT_WS_PORT"
# Screenshots travel as base64 PNG in one frame; 32 MiB leaves room for a large phone screen.
WS_MAX_SIZE = 32 * 1024 * 1024
STARTUP_S = 10.0
SHUTDOWN_S = 5.0
# The idle exit is checked this often (at most); a short --idle-exit-s checks more often.
IDLE_CHECK_S = 5.0


def default_root() -> Path:
    """The repository root the page is served from: the package is installed editable from ``py/``."""
    return Path(__file__).resolve().parents[3]


@dataclass
class ServerOptions:
    """What ``phone-agent serve`` and ``phone-agent mcp`` are told on the command line."""

    host: str = DEFAULT_HOST
    port: int = DEFAULT_PORT
    allow_origins: tuple[str, ...] = ()
    root: Path = field(default_factory=default_root)
    tool_timeouts: Mapping[str, int] = field(default_factory=dict)
    self_check_delay_s: float = DEFAULT_SELF_CHECK_DELAY_S
    verbose: bool = False
    # Hosts besides loopback the ADB bridge may connect to (--allow-device-host).
    allow_device_hosts: tuple[str, ...] = ()
    # The device the page connects to at load unless told otherwise, e.g. "tcp:127.0.0.1:5555" (--sim).
    default_device: str | None = None
    # The model the page uses unless its own Settings name one (--model-base-url, --model, and the key
    # from PHONE_AGENT_MODEL_API_KEY or OPENAI_API_KEY). The key stays out of repr: never logged.
    model_base_url: str | None = None
    model_name: str | None = None
    model_api_key: str | None = field(default=None, repr=False)
    # Which catalog tools /mcp offers (--tools), and how long a call waits for a page (--page-wait-ms).
    tool_profile: str = str(DEFAULT_TOOL_PROFILE)
    page_wait_s: float = DEFAULT_PAGE_WAIT_S
    # Exit after this long with no MCP client and no page (--idle-exit-s); None: never.
    idle_exit_s: float | None = None
    # The bearer token of /mcp; None: PHONE_AGENT_TOKEN, else the config file (made on first start).
    token: str | None = field(default=None, repr=False)
    # Whether the simulated phone runs beside this server (--sim), for /api/server.
    sim: bool = False

    def page_model_defaults(self) -> dict[str, str] | None:
        """The ``model`` entry of ``/api/config``: None when no model was given on the command line."""
        if not self.model_base_url and not self.model_name:
            return None
        defaults = {"provider": "custom", "baseUrl": self.model_base_url or ""}
        defaults["model"] = self.model_name or ""
        if self.model_api_key:
            defaults["apiKey"] = self.model_api_key
        return defaults


class StartupError(Exception):
    """The server could not start, or stopped by itself; the message is the one line to print."""


class _PhoneAgentFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info:
            message += "\n" + self.formatException(record.exc_info)
        prefix = "phone-agent:" if record.name.startswith("phone_agent") else f"phone-agent [{record.name}]:"
        if record.levelno >= logging.WARNING:
            prefix += f" {record.levelname.lower()}:"
        return f"{prefix} {message}"


def configure_logging(verbose: bool = False) -> None:
    """All logs to stderr; our info lines always, the libraries' only when ``verbose``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_PhoneAgentFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else logging.WARNING)
    logging.getLogger("phone_agent").setLevel(logging.DEBUG if verbose else logging.INFO)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        library = logging.getLogger(name)
        library.handlers[:] = []
        library.propagate = True
        library.setLevel(logging.INFO if verbose else logging.WARNING)


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, or StartupError with a clear one-line message."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise StartupError(f"cannot listen on {host!r}: {exc.strerror}") from exc
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        # SO_REUSEADDR lets a restart bind through TIME_WAIT; on POSIX it does not let two servers share.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise StartupError(
                f"port {port} on {host} is already in use (another phone-agent running?); stop it, or choose "
                f"another port with --port or {PORT_ENV}"
            ) from exc
        raise StartupError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    sock.setblocking(False)
    return sock


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server on this machine."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def page_url(host: str, port: int) -> str:
    shown = DEFAULT_HOST if host_for_url(host) in ("", "0.0.0.0", "[::]") else host_for_url(host)
    return f"http://{shown}:{port}/"


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


async def serve(options: ServerOptions, web_server: Callable[[ServerOptions], Any] = WebServer) -> int | None:
    """``phone-agent serve``: the page, the relay and /mcp (or, as ``web_server``, the farm's router,
    ``farm_http``) until SIGINT, SIGTERM, ``phone-agent stop`` or the idle time. Answers the signal
    (None when it stopped for another reason)."""
    web = web_server(options)
    await web.start()
    stopping = _StopSignals()
    waiters = [web.task, asyncio.ensure_future(web.stop_requested.wait())]
    if options.idle_exit_s:
        waiters.append(asyncio.ensure_future(web.watch_idle(options.idle_exit_s)))
    try:
        await stopping.wait_or(*waiters)
        failed = web.failed
    finally:
        stopping.remove()
        for waiter in waiters[1:]:
            waiter.cancel()
        await web.stop()
    if failed:
        raise StartupError("the web server stopped unexpectedly")
    return stopping.signal


class _StopSignals:
    """SIGINT and SIGTERM as an event the main coroutine waits on, beside the work it supervises."""

    def __init__(self) -> None:
        self.signal: int | None = None
        self._event = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        self._installed: list[int] = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            try:
                self._loop.add_signal_handler(sig, self._on_signal, sig)
                self._installed.append(sig)
            except (NotImplementedError, RuntimeError):  # pragma: no cover - not the main thread, Windows
                pass

    def _on_signal(self, sig: int) -> None:
        log.info("received %s; stopping", signal.Signals(sig).name)
        self.signal = sig
        self._event.set()

    async def wait_or(self, *tasks: asyncio.Future[Any]) -> None:
        """Until a signal arrives or one of ``tasks`` ends."""
        waiter = asyncio.ensure_future(self._event.wait())
        try:
            await asyncio.wait({waiter, *tasks}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()

    def remove(self) -> None:
        for sig in self._installed:
            self._loop.remove_signal_handler(sig)


def run(options: ServerOptions, web_server: Callable[[ServerOptions], Any] = WebServer) -> int:
    """Run ``serve`` to its end; the process exit code."""
    configure_logging(options.verbose)
    try:
        stopped_by = asyncio.run(serve(options, web_server))
    except StartupError as exc:
        print(f"phone-agent: error: {exc}", file=sys.stderr)
        return 1
    return 0 if stopped_by in (None, signal.SIGTERM) else 128 + stopped_by
