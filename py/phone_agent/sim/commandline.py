"""``phone-agent sim`` (also ``python -m phone_agent.sim``), and the simulated phone beside ``serve``/``mcp``.

``add_sim_arguments``/``run_sim`` build and run the ``sim`` subcommand; ``announce`` says where a
started phone listens (also for ``--sim``, which ``server/with_sim.py`` runs). Every line goes to
stderr: with ``mcp``, stdout carries JSON-RPC only.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from typing import TYPE_CHECKING

from phone_agent.arg_types import port_number
from phone_agent.sim.hostile import HOSTILE_MODES

if TYPE_CHECKING:
    from phone_agent.sim.realistic import RealisticProfile
    from phone_agent.sim.server import SimulatedPhoneServer

log = logging.getLogger("phone_agent.sim")

DEFAULT_SIM_PORT = 5555


def add_sim_arguments(parser: argparse.ArgumentParser) -> None:
    """The ``sim`` subcommand's options."""
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=port_number, default=DEFAULT_SIM_PORT, help=f"adb port (default {DEFAULT_SIM_PORT})"
    )
    parser.add_argument("--serial", default=None, help="the phone's serial number (ro.serialno)")
    parser.add_argument(
        "--auth",
        choices=("accept", "prompt", "none"),
        default="accept",
        help="accept: trust any key a host offers, and this computer's own adb key from the start, so "
        "the first adb connect succeeds (default); prompt: keep it unauthorized until "
        "approved on the control endpoint (POST /auth/approve); none: no authentication",
    )
    parser.add_argument(
        "--control-port",
        type=port_number,
        default=None,
        help="serve the JSON control endpoint on 127.0.0.1:PORT (0 picks a free port; default off)",
    )
    parser.add_argument(
        "--no-scrcpy",
        dest="scrcpy",
        action="store_false",
        help="a phone scrcpy cannot run on (no app_process): clients fall back to screencap",
    )
    add_realistic_arguments(parser)
    parser.add_argument(
        "--hostile",
        action="append",
        default=[],
        choices=HOSTILE_MODES,
        metavar="MODE",
        help="answer as a broken or hostile phone would (tests): flood-output (logcat and dumpsys print "
        "without end), huge-png (screencap never ends), png-bomb (a screenshot that says it is 100 000 "
        "pixels square), huge-hierarchy (the hierarchy server's answer never ends), deep-tree (a UI tree "
        "100 000 levels deep), wide-tree (50 000 nodes side by side); repeatable",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logs (to stderr)")


def add_realistic_arguments(parser: argparse.ArgumentParser) -> None:
    """``--realistic`` and its seed (``sim``; ``serve``/``mcp`` have them beside ``--sim``)."""
    parser.add_argument(
        "--realistic",
        action="store_true",
        help="the simulated phone costs and behaves like a real mid-range Android 14 phone: uiautomator "
        "dump >= 1 s (refused while the screen animates), input >= 0.12 s, screencap -p >= 0.3 s, app "
        "launches and transitions, animated swipes and flings, a soft keyboard, a permission dialog, a "
        "secure screen (README: What a real phone costs)",
    )
    parser.add_argument(
        "--realistic-seed",
        dest="realistic_seed",
        type=int,
        default=None,
        metavar="N",
        help="with --realistic: draw the costs' jitter from this seed (repeatable runs)",
    )


def realistic_profile(args: argparse.Namespace) -> RealisticProfile | None:
    """The profile ``--realistic`` asks for, or None."""
    if not getattr(args, "realistic", False):
        return None
    from phone_agent.sim.realistic import RealisticProfile

    return RealisticProfile(getattr(args, "realistic_seed", None))


def build_sim(args: argparse.Namespace) -> SimulatedPhoneServer:
    from phone_agent.sim.server import SimulatedPhoneServer

    return SimulatedPhoneServer(
        args.host,
        args.port,
        serial=args.serial,
        auth=args.auth,
        control_port=args.control_port,
        scrcpy=getattr(args, "scrcpy", True),
        realistic=realistic_profile(args),
        hostile=getattr(args, "hostile", ()),
    )


def announce(sim: SimulatedPhoneServer) -> None:
    where = f"{sim.host}:{sim.port}"
    log.info("simulated phone %s listening on %s: adb connect %s", sim.serial, where, where)
    if 5555 <= sim.port <= 5585:
        log.info("(an adb server also lists it as emulator-%d: it scans ports 5555-5585)", sim.port - 1)
    if getattr(sim.phone, "motion", None) is not None:
        log.info(
            "--realistic: a real phone's costs and behaviours (uiautomator dump >= 1 s, input >= 0.12 s)"
        )
    if sim.control_port is not None:
        log.info("control endpoint: http://127.0.0.1:%d/state", sim.control_port)
    from phone_agent.sim.android.fonts import missing_fonts

    missing = missing_fonts()
    if missing:
        log.warning(
            "the simulated phone lacks fonts for %s: such text draws as boxes (run scripts/setup)",
            "; ".join(missing),
        )


async def serve_sim(args: argparse.Namespace, stop: asyncio.Event | None = None) -> None:
    """Run the sim until ``stop`` is set (or the task is cancelled)."""
    sim = build_sim(args)
    try:
        await sim.start()
    except OSError as exc:
        raise SystemExit(
            f"phone-agent: error: cannot listen on {args.host}:{args.port}: {exc.strerror}"
        ) from None
    announce(sim)
    stop = stop or asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        try:
            loop.add_signal_handler(signum, stop.set)
        except (NotImplementedError, RuntimeError):
            pass
    try:
        await stop.wait()
    finally:
        await sim.close()


def _configure_logging(verbose: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("phone-agent sim: %(message)s"))
    logger = logging.getLogger("phone_agent.sim")
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG if verbose else logging.INFO)
    logger.propagate = False


def run_sim(args: argparse.Namespace) -> int:
    """``phone-agent sim``: serve until interrupted; the exit code."""
    _configure_logging(args.verbose)
    try:
        asyncio.run(serve_sim(args))
    except KeyboardInterrupt:
        return 130
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m phone_agent.sim``."""
    parser = argparse.ArgumentParser(
        prog="python -m phone_agent.sim", description="The simulated phone alone."
    )
    add_sim_arguments(parser)
    return run_sim(parser.parse_args(argv))
