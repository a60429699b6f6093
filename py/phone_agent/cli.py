"""The ``phone-agent`` command: ``serve`` (the page and the relay) and ``mcp`` (the same plus MCP on stdio).

``sim`` runs the simulated phone alone; ``--sim`` on ``serve``/``mcp`` runs it beside the server.

Each subcommand's arguments are built by its own function and the options the server commands share by
``add_server_options``, so a new subcommand or flag is a small, separate addition.

Hidden options, for tests and for debugging a slow page (not in ``--help``):

- ``--tool-timeout NAME=MS`` (repeatable) replaces the relay's time limit for one tool; for
  run_agent_task it replaces ``timeoutMs + 5 s`` as a whole.
- ``--self-check-delay SECONDS`` changes the 3 s between a page connecting and the server's
  get_device_status check; 0 turns the check off.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from . import __version__
from .tools import TOOL_NAMES

if TYPE_CHECKING:
    from .server.runtime import ServerOptions

# The server modules (uvicorn, starlette, mcp) are imported only by the commands that need them, so
# --help stays quick and a command that does not serve does not load them.


def port_number(text: str) -> int:
    """An argparse type: a TCP port (0 lets the OS choose)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port out of range: {port}")
    return port


def _origin(text: str) -> str:
    from .server.access import normalize_origin

    try:
        return normalize_origin(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _tool_timeout(text: str) -> tuple[str, int]:
    name, sep, ms = text.partition("=")
    if not sep or name not in TOOL_NAMES:
        raise argparse.ArgumentTypeError(
            f"expected NAME=MS with NAME one of {', '.join(TOOL_NAMES)}: {text!r}"
        )
    try:
        value = int(ms)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of milliseconds: {ms!r}") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"a time limit must be positive: {value}")
    return name, value


MODEL_KEY_ENV = "PHONE_AGENT_MODEL_API_KEY"
OPENAI_KEY_ENV = "OPENAI_API_KEY"


def model_api_key() -> str | None:
    """The model's API key from the environment (never from the command line, where ps shows it)."""
    for name in (MODEL_KEY_ENV, OPENAI_KEY_ENV):
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def default_port() -> int:
    """The port when ``--port`` is not given: ``PHONE_AGENT_WS_PORT``, else 7788."""
    from .server.runtime import DEFAULT_PORT, PORT_ENV

    value = os.environ.get(PORT_ENV)
    if value is None or not value.strip():
        return DEFAULT_PORT
    try:
        return port_number(value.strip())
    except argparse.ArgumentTypeError as exc:
        raise SystemExit(f"phone-agent: error: {PORT_ENV}: {exc}") from None


def add_server_options(parser: argparse.ArgumentParser) -> None:
    """The options ``serve`` and ``mcp`` share (and any later command that serves the page)."""
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument(
        "--port",
        type=port_number,
        default=None,
        help="port for the page and the relay (default: $PHONE_AGENT_WS_PORT, else 7788)",
    )
    parser.add_argument(
        "--allow-origin",
        dest="allow_origins",
        metavar="URL",
        type=_origin,
        action="append",
        default=[],
        help="also accept relay connections from pages of this origin (repeatable)",
    )
    parser.add_argument(
        "--allow-device-host",
        dest="allow_device_hosts",
        metavar="HOST",
        action="append",
        default=[],
        help="let the page's ADB bridge connect to this host too (default: loopback only; repeatable)",
    )
    parser.add_argument(
        "--root", type=Path, default=None, help="directory to serve the page from (default: the repository)"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logs (to stderr)")
    parser.add_argument(
        "--tool-timeout",
        dest="tool_timeouts",
        metavar="NAME=MS",
        type=_tool_timeout,
        action="append",
        default=[],
        help=argparse.SUPPRESS,
    )
    parser.add_argument("--self-check-delay", type=float, default=None, help=argparse.SUPPRESS)
    parser.add_argument(
        "--model-base-url",
        metavar="URL",
        default=None,
        help="default OpenAI-compatible base URL for the page's agent, e.g. http://127.0.0.1:11434/v1 "
        f"(the API key comes from ${MODEL_KEY_ENV}, else ${OPENAI_KEY_ENV}); the page's Settings win",
    )
    parser.add_argument(
        "--model", metavar="NAME", default=None, help="default model name for the page's agent"
    )
    parser.add_argument(
        "--sim", action="store_true", help="also start the simulated phone (see `phone-agent sim`)"
    )
    parser.add_argument(
        "--sim-port", type=port_number, default=5555, help="adb port of the simulated phone (default 5555)"
    )


def add_serve_command(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser("serve", help="serve the page and the relay WebSocket")
    add_server_options(parser)
    parser.set_defaults(run=run_serve)


def add_farm_option(parser: argparse.ArgumentParser) -> None:
    """``--farm``: route over a NATS phone farm instead of serving a page (docs/farm.md)."""
    parser.add_argument(
        "--farm",
        metavar="URL",
        default=None,
        help="route every call over the NATS phone farm at nats://USER:PASSWORD@HOST:PORT (or TOKEN@); "
        "'env' reads the URL from $PHONE_AGENT_FARM; no page is served",
    )


def add_mcp_command(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "mcp", help="serve the page and the relay, and an MCP server on stdio (what MCP clients run)"
    )
    add_server_options(parser)
    add_farm_option(parser)
    parser.set_defaults(run=run_mcp)


def add_sim_command(commands: argparse._SubParsersAction) -> None:
    from .sim.commandline import add_sim_arguments, run_sim

    parser = commands.add_parser("sim", help="run the simulated phone alone, as a TCP adbd")
    add_sim_arguments(parser)
    parser.set_defaults(run=run_sim)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="phone-agent",
        description="Drive an Android phone from a web page and offer its tools to AI agents (MCP, WebMCP).",
    )
    parser.add_argument("--version", action="version", version=f"phone-agent {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    add_serve_command(commands)
    add_mcp_command(commands)
    add_sim_command(commands)
    return parser


def server_options(args: argparse.Namespace) -> ServerOptions:
    """The runtime's ServerOptions from parsed arguments."""
    from .server.relay import DEFAULT_SELF_CHECK_DELAY_S
    from .server.runtime import ServerOptions, default_root

    return ServerOptions(
        host=args.host,
        port=args.port if args.port is not None else default_port(),
        allow_origins=tuple(args.allow_origins),
        allow_device_hosts=tuple(args.allow_device_hosts),
        root=(args.root or default_root()).resolve(),
        tool_timeouts=dict(args.tool_timeouts),
        self_check_delay_s=DEFAULT_SELF_CHECK_DELAY_S
        if args.self_check_delay is None
        else args.self_check_delay,
        verbose=args.verbose,
        model_base_url=args.model_base_url,
        model_name=args.model,
        model_api_key=model_api_key() if (args.model_base_url or args.model) else None,
    )


def run_serve(args: argparse.Namespace) -> int:
    from .server.runtime import run

    if args.sim:
        from .sim.commandline import run_server_with_sim

        return run_server_with_sim(server_options(args), with_mcp=False, sim_port=args.sim_port)
    return run(server_options(args), with_mcp=False)


def run_mcp(args: argparse.Namespace) -> int:
    from .server.runtime import run

    if getattr(args, "farm", None):
        from .server.farm_mcp import run_farm_mcp

        return run_farm_mcp(args)

    if args.sim:
        from .sim.commandline import run_server_with_sim

        return run_server_with_sim(server_options(args), with_mcp=True, sim_port=args.sim_port)
    return run(server_options(args), with_mcp=True)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    command: Callable[[argparse.Namespace], int] = args.run
    return command(args)


if __name__ == "__main__":
    sys.exit(main())
