"""Running phone-agent's server (``phone-agent serve``): start the web server (``web_server.py``) and
keep it until a signal, ``phone-agent stop``, or (with ``--idle-exit-s``, as when ``phone-agent mcp``
started it in the background) a while with no MCP client and no page.

Everything this process logs goes to stderr (``log_setup.py``). The options (``options.py``), the
logging set-up and the listening socket (``listen.py``) are importable from here too.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Callable
from typing import Any

from .listen import StartupError, bind_socket, is_loopback, page_url
from .log_setup import configure_logging
from .options import ServerOptions
from .web_server import WebServer

__all__ = [
    "StartupError",
    "WebServer",
    "bind_socket",
    "is_loopback",
    "page_url",
    "run_server",
    "serve",
]

log = logging.getLogger("phone_agent.server")


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


def run_server(options: ServerOptions, web_server: Callable[[ServerOptions], Any] = WebServer) -> int:
    """Run ``serve`` to its end; the process exit code."""
    configure_logging(options.verbose)
    try:
        stopped_by = asyncio.run(serve(options, web_server))
    except StartupError as exc:
        print(f"phone-agent: error: {exc}", file=sys.stderr)
        return 1
    return 0 if stopped_by in (None, signal.SIGTERM) else 128 + stopped_by
