"""An ASGI app under uvicorn on a socket bound beforehand, as a task in the caller's event loop: the
one way the web server (``web_server``: page, relay, /mcp) and the farm's router (``farm_http``) start,
watch and stop uvicorn, write and remove their server record, and wait out ``--idle-exit-s``.

Every wait is bounded: starting by ``STARTUP_S``, stopping by ``SHUTDOWN_S``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections.abc import Callable
from typing import Any

import uvicorn

from .. import __version__
from . import credentials
from .listen import StartupError
from .options import ServerOptions

log = logging.getLogger("phone_agent.server")

STARTUP_S = 10.0
SHUTDOWN_S = 5.0
# The idle exit is checked this often (at most); a short --idle-exit-s checks more often.
IDLE_CHECK_S = 5.0


class QuietUvicorn(uvicorn.Server):
    """uvicorn without its own signal handling: this process decides what a signal stops (``run``)."""

    def capture_signals(self) -> contextlib.AbstractContextManager[None]:  # type: ignore[override]
        return contextlib.nullcontext()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """uvicorn's start; one that cannot listen on the given socket ends the app's lifespan first
        (uvicorn does that only for a host and port), so the app's tasks do not outlive the failure."""
        try:
            await super().startup(sockets)
        except OSError:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(SHUTDOWN_S):
                    await self.lifespan.shutdown()
            raise


class UvicornTask:
    """``app`` served on the listening ``sock`` by uvicorn, as a task; ``stop`` closes the socket."""

    def __init__(self, app: Any, sock: socket.socket, *, access_log: bool, **config: Any) -> None:
        self._sock = sock
        self._uvicorn = QuietUvicorn(
            uvicorn.Config(
                app,
                log_config=None,
                access_log=access_log,
                timeout_graceful_shutdown=1,
                # The lifespan runs the MCP session manager's task group.
                lifespan="on",
                server_header=False,
                **config,
            )
        )
        self._task: asyncio.Task[None] | None = None

    async def start(self) -> None:
        """Serve, and return once uvicorn listens (StartupError when it ends first)."""
        self._task = asyncio.create_task(self._uvicorn.serve(sockets=[self._sock]))
        async with asyncio.timeout(STARTUP_S):
            while not self._uvicorn.started:
                if self._task.done():
                    self._task.result()
                    raise StartupError("the web server stopped while starting")
                await asyncio.sleep(0.02)

    @property
    def task(self) -> asyncio.Task[None]:
        assert self._task is not None, "start() first"
        return self._task

    @property
    def failed(self) -> bool:
        """Whether uvicorn ended by itself (only a failure does that)."""
        task = self._task
        return task is not None and task.done() and not self._uvicorn.should_exit

    async def stop(self) -> None:
        """Ask uvicorn to exit, wait for it (forcing it after ``SHUTDOWN_S``), close the socket."""
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


def server_identity(options: ServerOptions, port: int, **extra: object) -> dict[str, object]:
    """What ``GET /api/server`` answers and the server record holds (plus ``extra``)."""
    return {
        "server": "phone-agent",
        "version": __version__,
        "pid": os.getpid(),
        "uid": os.getuid() if hasattr(os, "getuid") else None,
        "port": port,
        "toolProfile": options.tool_profile,
        "sim": options.sim,
        "realistic": options.realistic,
        "allowOrigins": sorted(options.allow_origins),
        "idleExitS": options.idle_exit_s,
        **extra,
    }


class ServerRecord:
    """This server's record (``credentials``), which ``phone-agent mcp`` and ``stop`` find it by."""

    def __init__(self, port: int, identity: dict[str, object], host: str) -> None:
        self.port = port
        self._identity = identity
        self._host = host
        self._written = False

    def write(self) -> None:
        """Write the record; a record that cannot be written is skipped (the server still serves)."""
        with contextlib.suppress(OSError):
            credentials.write_server_record(
                self.port, {**self._identity, "host": self._host, "started": time.time()}
            )
            self._written = True

    def remove(self) -> None:
        if self._written:
            credentials.remove_server_record(self.port, os.getpid())


async def watch_idle(idle_for: Callable[[], float], idle_exit_s: float, what: str) -> None:
    """Return once ``idle_for()`` reaches ``idle_exit_s``; ``what`` names what was missing, for the log."""
    period = max(0.05, min(IDLE_CHECK_S, idle_exit_s / 4))
    while idle_for() < idle_exit_s:
        await asyncio.sleep(period)
    log.info("no %s for %g s; exiting", what, idle_exit_s)
