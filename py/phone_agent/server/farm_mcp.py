"""``phone-agent mcp --farm nats://…``: an MCP server on stdio whose phones are the farm's pages.

It opens no page of its own. Every catalog tool of its ``--tools`` profile is offered with an optional
``device`` argument (a serial, or ``any`` for an idle phone), plus ``list_devices`` (always); each call
goes through ``FarmRouter`` to the page holding that phone. Progress and cancellation work as through the
local relay (the same ``Relay`` engine and the same MCP edge, ``mcp_bridge``).
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import logging
import os
import sys
from pathlib import Path
from typing import Any

import mcp.types as types
from mcp.server.lowlevel import Server

from ..errors import ToolError
from ..farm.frames import FarmUrl, parse_farm_url
from ..tools.catalog import DEFAULT_TOOL_PROFILE, ToolProfile, tools_for_profile
from ..tools.spec import ToolSpec
from . import client_files as files
from .farm import FarmConnectError, FarmRouter
from .mcp_bridge import ProgressForwarder, build_tool_server, mcp_tool

log = logging.getLogger("phone_agent.farm")

FARM_URL_ENV = "PHONE_AGENT_FARM"
DEVICE_PROPERTY = {
    "type": "string",
    "minLength": 1,
    "description": 'The phone to use: its serial (list_devices shows them) or "any" for an idle phone. '
    "May be omitted when the farm holds exactly one phone.",
}
LIST_DEVICES = types.Tool(
    name="list_devices",
    title="List the farm's phones",
    description="Lists the phones of the farm: serial, model, Android release, screen size, the host of the "
    "page that holds it and its NATS user, busy or idle, and since when (ms since the epoch). Use a serial "
    'as the "device" argument of any other tool. A page of another user announcing a serial pinned to '
    'its first user is listed as state "refused" (and why) and never gets a call.',
    input_schema={"type": "object", "properties": {}, "additionalProperties": False},
    output_schema={
        "type": "object",
        "properties": {
            "devices": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "serial": {"type": "string"},
                        "model": {"type": "string"},
                        "release": {"type": "string"},
                        "screen": {"type": "string"},
                        "host": {"type": "string"},
                        "state": {"type": "string", "enum": ["idle", "busy", "refused"]},
                        "since": {"type": "integer"},
                        "user": {"type": "string"},
                        "refused": {"type": "string"},
                    },
                    "required": ["serial", "model", "release", "screen", "host", "state", "since"],
                },
            },
        },
        "required": ["devices"],
    },
    annotations=types.ToolAnnotations(title="List the farm's phones", read_only_hint=True),
)


def farm_tool(spec: ToolSpec) -> types.Tool:
    """A catalog tool as the farm offers it: the same, plus an optional ``device``."""
    tool = mcp_tool(spec)
    schema: dict[str, Any] = copy.deepcopy(spec.input_schema)
    schema.setdefault("properties", {})["device"] = dict(DEVICE_PROPERTY)
    return tool.model_copy(update={"input_schema": schema})


def farm_tools(specs: tuple[ToolSpec, ...] | None = None) -> list[types.Tool]:
    chosen = specs if specs is not None else tools_for_profile()
    return [farm_tool(spec) for spec in chosen] + [LIST_DEVICES]


FARM_INSTRUCTIONS = (
    "Drives the Android phones of a phone-agent farm. Call list_devices first, then pass a serial as "
    '"device" to any tool ("any" picks an idle phone).'
)


def build_farm_mcp_server(
    router: FarmRouter, profile: str | ToolProfile = DEFAULT_TOOL_PROFILE, *, client_files: bool = False
) -> Server[Any]:
    """The farm's MCP server: the tools of ``profile``, each with ``device``, plus list_devices. With
    ``client_files`` (stdio: it runs on the caller's machine) a file tool's ``path`` is read or written
    here (``client_files.py``)."""

    async def call(
        name: str, arguments: dict[str, Any] | None, progress: ProgressForwarder
    ) -> dict[str, Any]:
        if not client_files:
            return await router.call(name, dict(arguments or {}), progress)
        try:
            relayed, download = await files.outbound(name, arguments)
        except ToolError as exc:
            return exc.to_result()
        result = await router.call(name, dict(relayed or {}), progress)
        return await files.inbound(name, download, result)

    return build_tool_server(farm_tools(tools_for_profile(profile)), call, FARM_INSTRUCTIONS, profile)


def nkey_seed_from(path: Path | None, url: FarmUrl) -> Path | None:
    """``--farm-nkey-seed FILE`` checked: a readable file holding a user seed (``SU…``), and a farm URL
    that carries no other credential; SystemExit with a message that never shows the seed."""
    if path is None:
        return None
    if url.user or url.token:
        raise SystemExit(
            "phone-agent: error: --farm-nkey-seed: give the farm URL without credentials (nats://HOST:PORT)"
        )
    try:
        seed = path.read_text(encoding="ascii", errors="replace").strip()
    except OSError as exc:
        raise SystemExit(
            f"phone-agent: error: --farm-nkey-seed: cannot read {path}: {exc.strerror}"
        ) from None
    if not seed.startswith("SU"):
        raise SystemExit(f"phone-agent: error: --farm-nkey-seed: {path} holds no user nkey seed (SU…)")
    return path


def farm_url_from(text: str | None) -> FarmUrl:
    """``--farm`` (or $PHONE_AGENT_FARM, which keeps the password out of ``ps``) as a FarmUrl; SystemExit
    with a message that never repeats the credentials."""
    wanted = text if text and text != "env" else os.environ.get(FARM_URL_ENV, "")
    if not wanted:
        raise SystemExit(f"phone-agent: error: --farm env needs ${FARM_URL_ENV}")
    try:
        return parse_farm_url(wanted, ("nats", "tls"))
    except ValueError as exc:
        raise SystemExit(f"phone-agent: error: --farm: {exc}") from None


async def serve_farm_mcp(
    url: FarmUrl,
    timeouts: dict[str, int],
    profile: str | ToolProfile = DEFAULT_TOOL_PROFILE,
    nkey_seed: Path | None = None,
) -> None:
    from mcp.server.stdio import stdio_server

    router = FarmRouter(url, timeouts, nkey_seed=nkey_seed)
    await router.start()
    print(f"phone-agent: routing MCP calls over the farm at {url.shown}", file=sys.stderr, flush=True)
    server = build_farm_mcp_server(router, profile, client_files=True)
    try:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
        log.info("the MCP client closed stdin; stopping")
    finally:
        await router.close()


def run_farm_mcp(args: argparse.Namespace) -> int:
    """``phone-agent mcp --farm URL`` to its end; the exit code."""
    from .log_setup import configure_logging

    url = farm_url_from(args.farm)
    seed = nkey_seed_from(getattr(args, "farm_nkey_seed", None), url)
    configure_logging(args.verbose)
    try:
        asyncio.run(serve_farm_mcp(url, dict(args.tool_timeouts), args.tool_profile, seed))
    except FarmConnectError as exc:
        print(f"phone-agent: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    # The stdin reader may still block in its thread: leave without waiting for it.
    sys.stderr.flush()
    os._exit(0)
