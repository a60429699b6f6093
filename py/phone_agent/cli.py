"""The ``phone-agent`` command: ``serve`` (the page, the relay and MCP over HTTP at ``/mcp``), ``mcp``
(the stdio front MCP clients spawn: it relays to the shared server, starting one in the background when
none answers), ``stop`` (stops that server), ``token`` (prints or rotates the bearer token of ``/mcp``),
``url`` (prints the page's link: its URL with the page token).

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
from .arg_types import port_number
from .server.cli_commands import add_call_command, add_doctor_command, add_flow_command, add_site_command
from .server.options import DEFAULT_BACKGROUND_IDLE_EXIT_S
from .tools.catalog import DEFAULT_TOOL_PROFILE, TOOL_NAMES, ToolProfile

if TYPE_CHECKING:
    from .server.options import ServerOptions

# The server modules (uvicorn, starlette, mcp) are imported only by the commands that need them, so
# --help stays quick and a command that does not serve does not load them.


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


def _non_negative(kind: Callable[[str], float]) -> Callable[[str], float]:
    def parse(text: str) -> float:
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if value < 0:
            raise argparse.ArgumentTypeError(f"must not be negative: {text}")
        return value

    return parse



DEFAULT_PAGE_WAIT_MS = 10_000

MODEL_KEY_ENV = "PHONE_AGENT_MODEL_API_KEY"
OPENAI_KEY_ENV = "OPENAI_API_KEY"
# Defaults of --model-base-url and --model (an MCP bundle's settings arrive as environment variables).
MODEL_BASE_URL_ENV = "PHONE_AGENT_MODEL_BASE_URL"
MODEL_NAME_ENV = "PHONE_AGENT_MODEL"


def model_api_key() -> str | None:
    """The model's API key from the environment (never from the command line, where ps shows it)."""
    for name in (MODEL_KEY_ENV, OPENAI_KEY_ENV):
        value = os.environ.get(name, "").strip()
        if value:
            return value
    return None


def default_port() -> int:
    """The port when ``--port`` is not given: ``PHONE_AGENT_WS_PORT``, else 7788."""
    from .server.options import default_port as port

    return port()


def add_server_options(parser: argparse.ArgumentParser) -> None:
    """The options ``serve`` and ``mcp`` share (and any later command that serves the page)."""
    _add_listen_options(parser)
    _add_hidden_options(parser)
    _add_model_options(parser)
    _add_sim_options(parser)
    _add_policy_options(parser)


def _add_listen_options(parser: argparse.ArgumentParser) -> None:
    """Where the server listens, whom it lets in, and what it serves."""
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
        help="also accept relay connections from pages of this origin, e.g. a page `phone-agent site` "
        "wrote on a static host (it pairs by the code this server shows; repeatable)",
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
        "--root",
        type=Path,
        default=None,
        help="directory to serve the page from (default: the checkout's working tree, else the page this "
        "package carries)",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="debug logs (to stderr)")


def _add_hidden_options(parser: argparse.ArgumentParser) -> None:
    """For tests and for debugging a slow page (the module's docstring)."""
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


def _add_model_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--model-base-url",
        metavar="URL",
        default=os.environ.get(MODEL_BASE_URL_ENV) or None,
        help="default OpenAI-compatible base URL for the page's agent, e.g. http://127.0.0.1:11434/v1 "
        f"(default ${MODEL_BASE_URL_ENV}; the API key comes from ${MODEL_KEY_ENV}, else "
        f"${OPENAI_KEY_ENV}); the page's Settings win",
    )
    parser.add_argument(
        "--model",
        metavar="NAME",
        default=os.environ.get(MODEL_NAME_ENV) or None,
        help=f"default model name for the page's agent (default ${MODEL_NAME_ENV})",
    )


def _add_sim_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sim", action="store_true", help="also start the simulated phone (see `phone-agent sim`)"
    )
    parser.add_argument(
        "--sim-port", type=port_number, default=5555, help="adb port of the simulated phone (default 5555)"
    )
    from .sim.commandline import add_realistic_arguments

    add_realistic_arguments(parser)  # for the simulated phone of --sim and of the page's offer


def _add_policy_options(parser: argparse.ArgumentParser) -> None:
    """What clients get, when the person is asked, and how long things wait."""
    parser.add_argument(
        "--tools",
        dest="tool_profile",
        choices=[str(profile) for profile in ToolProfile],
        default=str(DEFAULT_TOOL_PROFILE),
        help="which tools MCP clients get: compact (the core group listed, the others enabled by the "
        "tool_groups tool), all, agent (the six of the specification) or read-only "
        f"(default {DEFAULT_TOOL_PROFILE})",
    )
    parser.add_argument(
        "--confirm",
        choices=["agent", "always"],
        default="agent",
        help="when the page asks the person before a sensitive action (sending, paying, deleting, "
        "installing, permissions): agent (its own agent's actions; MCP clients approve their own calls) "
        "or always (MCP clients' calls too) (default agent)",
    )
    parser.add_argument(
        "--page-wait-ms",
        type=_non_negative(int),
        default=DEFAULT_PAGE_WAIT_MS,
        metavar="MS",
        help="how long a call waits for a page that paired before to come back (default 10000; before any "
        "page paired a call answers at once)",
    )
    parser.add_argument(
        "--idle-exit-s",
        type=_non_negative(float),
        default=None,
        metavar="S",
        help="exit after S seconds with no MCP client and no page; 0: never (default: never for serve, "
        f"{DEFAULT_BACKGROUND_IDLE_EXIT_S:g} for the server phone-agent mcp starts)",
    )


def add_serve_command(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "serve",
        help="serve the page, the relay WebSocket and MCP over HTTP at /mcp (bearer token)",
        description="The phone-agent server, in the foreground: the page at http://HOST:PORT/ (open it in "
        "Chrome: it holds the phone), the relay WebSocket the page connects to, the ADB bridge, and MCP "
        "over streamable HTTP at /mcp (bearer token: `phone-agent token`). `phone-agent mcp` clients "
        "join it. Stops on Ctrl-C, SIGTERM or `phone-agent stop`.",
    )
    add_server_options(parser)
    add_farm_option(parser)
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
    parser.add_argument(
        "--farm-nkey-seed",
        metavar="FILE",
        type=Path,
        default=None,
        help="join the farm as the nkey user whose seed (SU…) FILE holds; the --farm URL then carries "
        "no credentials",
    )


def add_mcp_command(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "mcp",
        help="MCP on stdio (what MCP clients run), relayed to the shared server on the port; starts "
        "`phone-agent serve` in the background with these options when none answers",
        description="The command an MCP client (Claude Desktop, Claude Code, OpenClaw, Qoder …) runs: an "
        "MCP server on stdio (stdout carries JSON-RPC only, logs go to stderr) that relays every call to "
        "the phone-agent server on the port. When none answers it starts `phone-agent serve` in the "
        "background with the options below (its log: server-PORT.log in the state directory; it exits "
        "after --idle-exit-s, 600 s by default, with no client and no page); a server already running "
        "keeps its own options. It exits when stdin closes; the server stays (`phone-agent stop` ends it).",
    )
    add_server_options(parser)
    add_farm_option(parser)
    parser.set_defaults(run=run_mcp)


def add_stop_command(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "stop",
        help="stop the phone-agent server on the port",
        description="Stop the phone-agent server on the port (one `serve` started, or the one `phone-agent "
        "mcp` started in the background).",
    )
    parser.add_argument("--host", default="127.0.0.1", help="where the server listens (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=port_number, default=None, help="its port (default: $PHONE_AGENT_WS_PORT, else 7788)"
    )
    parser.set_defaults(run=run_stop)


def add_token_command(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "token",
        help="print the bearer token MCP clients send to /mcp ($PHONE_AGENT_TOKEN wins)",
        description="Print the bearer token HTTP MCP clients send to /mcp (Authorization: Bearer TOKEN); "
        "$PHONE_AGENT_TOKEN wins over the one kept in the config directory.",
    )
    parser.add_argument(
        "--rotate",
        action="store_true",
        help="replace it (a running server keeps the old one until restarted)",
    )
    parser.set_defaults(run=run_token)


def add_url_command(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "url",
        help="print the page's link (its URL with the token): the browser that opens it becomes the page "
        "that pairs with the relay",
    )
    parser.add_argument("--host", default="127.0.0.1", help="where the server listens (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=port_number, default=None, help="its port (default: $PHONE_AGENT_WS_PORT, else 7788)"
    )
    parser.add_argument(
        "--rotate",
        action="store_true",
        help="replace the link's token (a running server keeps the old one until restarted)",
    )
    parser.set_defaults(run=run_url)


def add_sim_command(commands: argparse._SubParsersAction) -> None:
    from .sim.commandline import add_sim_arguments, run_sim

    parser = commands.add_parser(
        "sim",
        help="run the simulated phone alone, as a TCP adbd",
        description="Run the simulated Android phone alone, as a TCP adbd that Debian's adb accepts "
        "(`adb connect 127.0.0.1:5555`), speaking scrcpy 2.5 unless --no-scrcpy.",
    )
    add_sim_arguments(parser)
    parser.set_defaults(run=run_sim)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="phone-agent",
        description="Drive an Android phone from a web page and offer its tools to AI agents (MCP, WebMCP).",
    )
    parser.add_argument("--version", action="version", version=f"phone-agent {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_serve_command(commands)
    add_mcp_command(commands)
    add_stop_command(commands)
    add_token_command(commands)
    add_url_command(commands)
    add_sim_command(commands)
    add_call_command(commands)
    add_flow_command(commands)
    add_site_command(commands)
    add_doctor_command(commands)
    return parser


def options_from_args(args: argparse.Namespace) -> ServerOptions:
    """The runtime's ServerOptions from parsed arguments."""
    from .server.options import ServerOptions, default_root
    from .server.relay import DEFAULT_SELF_CHECK_DELAY_S
    from .tools.named_secrets import secrets_from_environ

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
        tool_profile=args.tool_profile,
        page_wait_s=args.page_wait_ms / 1000,
        idle_exit_s=args.idle_exit_s or None,
        sim=args.sim,
        secrets=secrets_from_environ(dict(os.environ)),
        confirm=args.confirm,
        realistic=args.realistic,
        realistic_seed=args.realistic_seed,
    )


def run_serve(args: argparse.Namespace) -> int:
    from .server.runtime import run_server

    if getattr(args, "farm", None):  # /mcp routes over a NATS farm: no page, no relay, no phone here
        from .server.farm_http import run_farm_router

        return run_farm_router(options_from_args(args), args.farm, args.farm_nkey_seed)
    if args.sim:
        from .server.with_sim import run_server_with_sim

        return run_server_with_sim(options_from_args(args), sim_port=args.sim_port)
    return run_server(options_from_args(args))


def background_server_args(args: argparse.Namespace) -> list[str]:
    """What ``phone-agent serve`` gets when ``mcp`` starts it: the ``mcp`` command's own arguments as
    given (so every server option, present and future, passes through), the port made explicit, and
    the background idle exit unless one was given."""
    raw: list[str] = list(getattr(args, "raw_argv", []))
    rest = raw[raw.index("mcp") + 1 :] if "mcp" in raw else []
    if args.port is None:
        rest += ["--port", str(default_port())]
    if args.idle_exit_s is None:
        rest += ["--idle-exit-s", f"{DEFAULT_BACKGROUND_IDLE_EXIT_S:g}"]
    return rest


def run_mcp(args: argparse.Namespace) -> int:
    from .server.front import FrontOptions, run_mcp_front

    if getattr(args, "farm", None):  # route over a NATS farm: no page of its own, no shared server
        from .server.farm_mcp import run_farm_mcp

        return run_farm_mcp(args)
    options = FrontOptions(
        host=args.host,
        port=args.port if args.port is not None else default_port(),
        server_args=background_server_args(args),
        tool_profile=args.tool_profile,
        sim=args.sim,
        realistic=args.realistic,
    )
    return run_mcp_front(options, verbose=args.verbose)


def run_stop(args: argparse.Namespace) -> int:
    from .server.background import ServerProblem, stop_server
    from .server.credentials import load_token

    port = args.port if args.port is not None else default_port()
    try:
        print(f"phone-agent: {stop_server(args.host, port, load_token())}", file=sys.stderr)
    except ServerProblem as exc:
        print(f"phone-agent: error: {exc}", file=sys.stderr)
        return 1
    return 0


def run_token(args: argparse.Namespace) -> int:
    from .server.credentials import TOKEN_ENV, load_token, rotate_token, token_from_environment

    if args.rotate:
        if token_from_environment():
            print(f"phone-agent: error: the token comes from ${TOKEN_ENV}; change it there", file=sys.stderr)
            return 1
        print(rotate_token())
        print(
            "phone-agent: a running server keeps the old token until it restarts "
            "(`phone-agent stop`, with `--port PORT` for a server on another port than 7788)",
            file=sys.stderr,
        )
        return 0
    print(load_token())
    return 0


def run_url(args: argparse.Namespace) -> int:
    from .server.credentials import load_page_token, rotate_page_token
    from .server.listen import page_link, page_url

    port = args.port if args.port is not None else default_port()
    print(page_link(page_url(args.host, port), rotate_page_token() if args.rotate else load_page_token()))
    if args.rotate:
        print(
            "phone-agent: the old link and the pages opened with it no longer pair once the server "
            "restarts (phone-agent stop)",
            file=sys.stderr,
        )
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    raw = list(argv) if argv is not None else sys.argv[1:]
    parser = build_parser()
    args = parser.parse_args(raw)
    if args.command is None:  # `phone-agent` alone: what it can do, not an error
        parser.print_help()
        return 0
    args.raw_argv = raw
    command: Callable[[argparse.Namespace], int] = args.run
    return command(args)


def mcp_main() -> int:
    """``phone-agent-mcp [ARGS]``: ``phone-agent mcp [ARGS]`` (the registry's clients run the command
    named like the package)."""
    return main(["mcp", *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
