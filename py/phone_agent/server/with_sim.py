"""``serve --sim`` (also what ``mcp --sim`` starts in the background): the page server and a simulated
phone in one event loop.

The page served beside the phone connects to it at load. Every line goes to stderr, as ``serve``'s do.
"""

from __future__ import annotations

import asyncio
import sys

from ..sim.commandline import DEFAULT_SIM_PORT, announce
from . import runtime
from .options import ServerOptions
from .sim_on_demand import start_server_sim


def run_server_with_sim(options: ServerOptions, *, sim_port: int = DEFAULT_SIM_PORT) -> int:
    """Run the page server and a simulated phone on ``sim_port`` until stopped; the exit code."""
    runtime.configure_logging(options.verbose)

    async def main() -> None:
        try:
            sim = await start_server_sim(options.host, sim_port, options.realistic_profile())
        except OSError as exc:
            raise runtime.StartupError(
                f"the simulated phone cannot listen on port {sim_port}: {exc.strerror}"
            ) from None
        announce(sim)
        # The page served beside the sim connects to it at load unless told otherwise, and its
        # "Start the simulated phone" (/api/sim) answers this phone rather than starting another.
        options.default_device = f"tcp:127.0.0.1:{sim.port}"
        try:
            await runtime.serve(options)
        finally:
            await sim.close()

    try:
        asyncio.run(main())
    except runtime.StartupError as exc:
        print(f"phone-agent: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0
