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
from typing import TYPE_CHECKING, Any

from . import __version__
from .arg_types import port_number
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


# What a server started by ``phone-agent mcp`` does with no client and no page: exit after 10 minutes.
DEFAULT_BACKGROUND_IDLE_EXIT_S = 600.0
DEFAULT_PAGE_WAIT_MS = 10_000

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
    from .server.options import DEFAULT_PORT, PORT_ENV

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
    from .sim.commandline import add_realistic_arguments

    add_realistic_arguments(parser)  # for the simulated phone of --sim and of the page's offer
    parser.add_argument(
        "--tools",
        dest="tool_profile",
        choices=[str(profile) for profile in ToolProfile],
        default=str(DEFAULT_TOOL_PROFILE),
        help="which tools MCP clients get: all, agent (the six of the specification) or read-only "
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
        help="how long a call waits for a page when none is connected (default 10000)",
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


def _json_arguments(text: str) -> dict[str, Any]:
    import json

    try:
        value = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(
            'the arguments must be a JSON object, e.g. \'{"target": "text=OK"}\''
        )
    return value


def _env_pair(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE: {text!r}")
    return name.strip(), value


def _client_port_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1", help="where the server listens (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=port_number, default=None, help="its port (default: $PHONE_AGENT_WS_PORT, else 7788)"
    )


def add_call_command(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "call",
        help="call one tool through the shared server (started in the background when none answers) and "
        "print its answer",
    )
    parser.add_argument("tool", metavar="TOOL", help="the tool's name, e.g. get_device_status")
    parser.add_argument(
        "arguments", metavar="JSON-ARGUMENTS", nargs="?", type=_json_arguments, default={},
        help="the tool's arguments as a JSON object (default {})",
    )
    _client_port_options(parser)
    parser.add_argument("--json", action="store_true", help="print the answer's structuredContent as JSON")
    parser.set_defaults(run=run_call)


def add_flow_command(commands: argparse._SubParsersAction) -> None:
    from .server.flow_options import add_reading_options

    parser = commands.add_parser("flow", help="Maestro flows: `phone-agent flow run|check FILE|DIR…`")
    actions = parser.add_subparsers(dest="flow_command", required=True, metavar="ACTION")
    run = actions.add_parser(
        "run",
        help="run Maestro flows (files, or folders run as Maestro workspaces) on the page's phone through "
        "the shared server; exit 0 all passed, 1 a step failed, 2 a flow could not be read",
    )
    run.add_argument(
        "files", metavar="FILE|DIR", nargs="+", type=Path,
        help="flow files (Maestro YAML), or folders of flows with an optional config.yaml",
    )
    _client_port_options(run)
    run.add_argument(
        "--device", metavar="SERIAL", default=None, help="run only if the page's phone is this one"
    )
    run.add_argument(
        "--env", dest="env", metavar="NAME=VALUE", type=_env_pair, action="append", default=[],
        help="a value for ${NAME} in the flows (repeatable; wins over the flow's env)",
    )
    run.add_argument(
        "--allow-http", dest="allow_http", metavar="HOST[:PORT]", action="append", default=[],
        help="a host the flows' scripts may reach with Maestro's http object (repeatable; none by default)",
    )
    run.add_argument("--format", dest="report_format", choices=["text", "junit"], default="text",
                     help="the report's format (default text)")
    run.add_argument("--output", type=Path, default=None, help="write the report to this file")
    add_reading_options(run)
    run.set_defaults(run=run_flow_files)
    check = actions.add_parser(
        "check",
        help="read flows (files or folders) without a phone and list every problem as FILE:LINE:COL: "
        "error: …; exit 0 when every flow can run, 2 when one cannot",
    )
    check.add_argument(
        "files", metavar="FILE|DIR", nargs="+", type=Path, help="flow files or folders of flows"
    )
    add_reading_options(check)
    check.set_defaults(run=check_flow_files)


def _client_options(args: argparse.Namespace) -> Any:  # server.front.FrontOptions
    from .server.tool_client import front_options

    port = args.port if args.port is not None else default_port()
    return front_options(args.host, port, DEFAULT_BACKGROUND_IDLE_EXIT_S)


def run_call(args: argparse.Namespace) -> int:
    from .server.log_setup import configure_logging
    from .server.tool_client import run_call as call

    configure_logging(False)
    return call(_client_options(args), args.tool, args.arguments, args.json)


def run_flow_files(args: argparse.Namespace) -> int:
    from .server.flow_cli import run_flow_command
    from .server.flow_options import reading_of
    from .server.log_setup import configure_logging

    configure_logging(False)
    return run_flow_command(
        _client_options(args),
        list(args.files),
        dict(args.env),
        args.device,
        args.report_format,
        args.output,
        reading=reading_of(args, list(args.allow_http)),
    )


def check_flow_files(args: argparse.Namespace) -> int:
    from .server.flow_cli import check_flows
    from .server.flow_options import reading_of

    return check_flows(list(args.files), reading_of(args))


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


if __name__ == "__main__":
    sys.exit(main())
