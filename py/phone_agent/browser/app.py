"""The page's start-up: builds the shared context, the UI, both channels, and wires them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import js  # type: ignore[import-not-found]

from ..context import McpServiceContext
from ..relay_frames import relay_settings
from .relay_client import McpRelayClient
from .ui import PageUi
from .webmcp import WebMcpService


@dataclass
class PhoneAgentPage:
    context: McpServiceContext
    ui: PageUi
    webmcp: WebMcpService
    relay: McpRelayClient


async def fetch_server_config() -> dict[str, Any] | None:
    """``/api/config`` when phone-agent serves this page, else None (any static server works too)."""
    try:
        response = await js.fetch("api/config", js.JSON.parse('{"cache": "no-store"}'))
        if not response.ok:
            return None
        data = (await response.json()).to_py()
        return data if isinstance(data, dict) else None
    except Exception:
        return None


async def start() -> PhoneAgentPage:
    ui = PageUi()
    context = McpServiceContext()
    context.add_call_listener(ui.log_call)

    settings = relay_settings(str(js.location.href), await fetch_server_config())
    relay = McpRelayClient(context, settings.url, settings.retry_ms, on_status_change=ui.set_relay_status)
    ui.show_relay_target(settings.url, settings.retry_ms, relay.retry_now)

    webmcp = WebMcpService(context)
    ui.set_webmcp_status(await webmcp.register(), webmcp.registered)
    relay.connect()
    ui.ready()
    return PhoneAgentPage(context, ui, webmcp, relay)
