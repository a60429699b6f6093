"""The command line's tool commands, beside the server they use: ``call`` (one tool through the shared
server), ``flow run`` and ``flow check`` (Maestro flows for CI) and ``site`` (the page as static files).
``cli`` registers them; each module they run is imported only when its command runs, so ``--help`` stays
quick.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ..arg_types import port_number


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
    from .flow_options import add_reading_options

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


def add_site_command(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "site",
        help="write the page as static files for any static host (GitHub Pages, a CDN, python -m "
        "http.server): WebMCP and WebUSB work there with no server of ours",
        description="Write the page (index.html, pyscript.toml, its Python modules, static/ with the "
        "vendored runtime and licenses) into DIR as static files that boot from any static host. Such a "
        "page pairs with a local phone-agent only when asked: run `phone-agent serve --allow-origin "
        "ORIGIN` (or add --allow-origin to `phone-agent mcp`) with the site's origin and type the pairing "
        "code it shows.",
    )
    parser.add_argument(
        "folder", metavar="DIR", type=Path, help="where to write the site (an empty folder, or --force)"
    )
    parser.add_argument("--force", action="store_true", help="write into DIR even when it is not empty")
    parser.add_argument("--root", type=Path, default=None, help=argparse.SUPPRESS)
    parser.set_defaults(run=run_site)


def run_site(args: argparse.Namespace) -> int:
    from .options import default_root
    from .site_export import SiteError, write_site

    try:
        report = write_site(args.folder, (args.root or default_root()).resolve(), args.force)
    except SiteError as exc:
        print(f"phone-agent: error: {exc}", file=sys.stderr)
        return 2
    print(
        f"phone-agent: wrote the page to {report.folder} ({report.files} files, {report.size / 1e6:.1f} MB); "
        "serve it from any static host, e.g. `python -m http.server -d "
        f"{report.folder}` and open http://127.0.0.1:8000/",
        file=sys.stderr,
    )
    return 0


def _client_options(args: argparse.Namespace) -> Any:  # server.front.FrontOptions
    from .options import DEFAULT_BACKGROUND_IDLE_EXIT_S, default_port
    from .tool_client import front_options

    port = args.port if args.port is not None else default_port()
    return front_options(args.host, port, DEFAULT_BACKGROUND_IDLE_EXIT_S)


def run_call(args: argparse.Namespace) -> int:
    from .log_setup import configure_logging
    from .tool_client import run_call as call

    configure_logging(False)
    return call(_client_options(args), args.tool, args.arguments, args.json)


def run_flow_files(args: argparse.Namespace) -> int:
    from .flow_cli import run_flow_command
    from .flow_options import reading_of
    from .log_setup import configure_logging

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
    from .flow_cli import check_flows
    from .flow_options import reading_of

    return check_flows(list(args.files), reading_of(args))


def add_doctor_command(commands: argparse._SubParsersAction) -> None:
    parser = commands.add_parser(
        "doctor",
        help="check what a real set-up needs (Chrome and WebMCP, adb, USB access, the port, the page, the "
        "jars) and say how to fix each; exit 0 when all pass, 1 otherwise",
    )
    _client_port_options(parser)
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")
    parser.set_defaults(run=run_doctor)


def run_doctor(args: argparse.Namespace) -> int:
    from .doctor import report_json, report_text, run_checks
    from .doctor_probe import LocalMachine
    from .options import default_port

    port = args.port if args.port is not None else default_port()
    results = run_checks(LocalMachine(args.host), port)
    print(report_json(results) if args.json else report_text(results))
    return 0 if all(result.ok for result in results) else 1
