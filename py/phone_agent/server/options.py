"""What ``phone-agent serve`` and ``phone-agent mcp`` are told on the command line (``ServerOptions``),
and their defaults: the address, the port and the directory the page is served from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..tools.catalog import DEFAULT_TOOL_PROFILE
from .relay import DEFAULT_PAGE_WAIT_S, DEFAULT_SELF_CHECK_DELAY_S

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 7788
PORT_ENV = "PHONE_AGENT_WS_PORT"
# What a server started by ``phone-agent mcp`` (or ``call``, ``flow run``) does with no client and no
# page: exit after 10 minutes.
DEFAULT_BACKGROUND_IDLE_EXIT_S = 600.0


def default_port() -> int:
    """The port when ``--port`` is not given: ``PHONE_AGENT_WS_PORT``, else 7788."""
    import argparse
    import os

    from ..arg_types import port_number

    value = os.environ.get(PORT_ENV)
    if value is None or not value.strip():
        return DEFAULT_PORT
    try:
        return port_number(value.strip())
    except argparse.ArgumentTypeError as exc:
        raise SystemExit(f"phone-agent: error: {PORT_ENV}: {exc}") from None


def default_root() -> Path:
    """Where the page is served from: a checkout's working tree, else the page the package carries."""
    from .page_source import default_page_root

    return default_page_root()


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
    # Secrets by name the paired page may type (PHONE_AGENT_SECRET_<NAME>=value): never in repr or a log.
    secrets: dict[str, str] = field(default_factory=dict, repr=False)
    # --confirm: "agent" (the page asks before its agent's sensitive actions only) or "always" (before its
    # MCP clients' sensitive calls too).
    confirm: str = "agent"
    # --realistic: the simulated phone (--sim, or the page's "Start the simulated phone") costs and
    # behaves like a real one; its jitter drawn from realistic_seed when given (sim/realistic.py).
    realistic: bool = False
    realistic_seed: int | None = None

    def realistic_profile(self) -> Any:
        """A fresh RealisticProfile for a simulated phone this server starts, or None."""
        if not self.realistic:
            return None
        from ..sim.realistic import RealisticProfile

        return RealisticProfile(self.realistic_seed)

    def page_model_defaults(self) -> dict[str, str] | None:
        """The ``model`` entry of ``/api/config``: None when no model was given on the command line."""
        if not self.model_base_url and not self.model_name:
            return None
        defaults = {"provider": "custom", "baseUrl": self.model_base_url or ""}
        defaults["model"] = self.model_name or ""
        if self.model_api_key:
            defaults["apiKey"] = self.model_api_key
        return defaults
