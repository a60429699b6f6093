"""PageUi: what a person sees — the boot state, the MCP Relay badge, WebMCP status, tools, activity.

Text goes in through ``textContent`` only (never HTML), so tool results cannot inject markup.

The activity log is kept off the calls' path: a call only queues its record, and the rows are drawn
in one batch a moment later. Drawing a row on every call made the browser lay out and paint the
list after each one, and the next call's frame waited behind that frame (bench/README.md: ~6 ms
per call here); a batch costs one frame for many calls.
"""

from __future__ import annotations

import json
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import js  # type: ignore[import-not-found]
from pyodide.ffi import create_proxy  # type: ignore[import-not-found]

from ..tools.catalog import DEFAULT_TOOL_PROFILE, tools_for_profile
from ..tools.dispatch import Caller, CallRecord
from ..tools.spec import Channel
from .dom import PanelEvents, element
from .interop import is_nullish

RELAY_READY_TOOLTIP = "MCP Relay connected: OpenClaw / Qoder can call the phone Agent"
RELAY_OFF_TOOLTIP = "MCP Relay disconnected: please start the local MCP server (phone-agent mcp)"
ACTIVITY_LIMIT = 50  # rows kept: fewer rows, less to lay out and paint per batch
ACTIVITY_BATCH_MS = 100  # how long a call's row may wait to be drawn with the others of the moment
CHANNEL_LABELS = {
    Channel.RELAY: "A · relay",
    Channel.FARM: "A · farm",
    Channel.WEBMCP: "B · WebMCP",
    Channel.PAGE: "live view",
    Channel.AGENT: "agent",
}
# Callers a channel's label does not name: an MCP App view, a flow's step, the agent's action.
CALLER_LABELS = {Caller.APP: "A · app view", Caller.FLOW: "flow", Caller.AGENT: "agent"}
ACTIVITY_INDENT_REM = 1.25  # how far a call's row stands in from its parent's


def _result_preview(result: dict[str, Any]) -> str:
    for item in result.get("content", []):
        if item.get("type") == "text":
            text = str(item.get("text", "")).strip().splitlines()
            return text[0][:160] if text else ""
        if item.get("type") == "image":
            return f"image ({item.get('mimeType', '?')}, {len(item.get('data', '')) * 3 // 4} bytes)"
    return ""


class PageUi:
    def __init__(self) -> None:
        self._doc = js.document
        self._events = PanelEvents()
        self.badge = self._doc.getElementById("relay-badge")
        self._activity: deque[tuple[float, CallRecord]] = deque(maxlen=ACTIVITY_LIMIT)
        self._activity_timer: int | None = None
        self._draw_activity_proxy = create_proxy(self._draw_activity)
        self.set_relay_status(False)
        self._render_tools()

    def ready(self) -> None:
        self._doc.documentElement.dataset.state = "ready"

    def failed(self, message: str) -> None:
        self._doc.documentElement.dataset.state = "failed"
        self._doc.getElementById("boot-message").textContent = message

    def set_relay_status(self, connected: bool) -> None:
        badge = self.badge
        badge.classList.toggle("mcp-badge--ready", connected)
        badge.classList.toggle("mcp-badge--off", not connected)
        badge.title = RELAY_READY_TOOLTIP if connected else RELAY_OFF_TOOLTIP
        badge.setAttribute("aria-label", badge.title)
        self._doc.getElementById("relay-state").textContent = "connected" if connected else "disconnected"

    def set_relay_replaced(self) -> None:
        self._doc.getElementById(
            "relay-state"
        ).textContent = "taken over by another phone-agent page; press Reconnect now to take it back"

    def set_relay_retry(self, text: str) -> None:
        """The card's Retry line: how the relay client retries now (it tells)."""
        self._doc.getElementById("relay-retry").textContent = text

    def show_relay_target(self, url: str, on_reconnect: Callable[[], None]) -> None:
        self._doc.getElementById("relay-url").textContent = url
        self._events.listen("relay-reconnect", "click", lambda _event=None: on_reconnect())

    def set_webmcp_status(self, available: bool, names: list[str], profile: str = "all") -> None:
        node = self._doc.getElementById("webmcp-state")
        node.classList.toggle("pill--on", available)
        node.dataset.profile = profile
        if profile != self._profile:
            self._render_tools(profile)
        if available:
            node.textContent = f"WebMCP: {len(names)} tools registered ({profile} tools)"
            node.title = "In-page agents find these tools on document.modelContext"
        else:
            node.textContent = "WebMCP unavailable"
            node.title = "Enable chrome://flags/#enable-webmcp-testing (Chrome 149+) and reload"

    def _render_tools(self, profile: str = str(DEFAULT_TOOL_PROFILE)) -> None:
        """One card a tool of the profile, from the catalog (the server's --tools: all, agent, read-only)."""
        self._profile = profile
        listing = self._doc.getElementById("tool-list")
        listing.dataset.profile = profile
        listing.replaceChildren()
        for spec in tools_for_profile(profile):
            item = element("li", cls="tool")
            head = element("div", cls="tool__head")
            head.append(
                element("code", spec.name),
                element(
                    "span",
                    "read" if spec.read_only else "write",
                    "tag tag--read" if spec.read_only else "tag tag--write",
                ),
            )
            item.append(head, element("p", spec.description, "tool__desc"))
            listing.append(item)

    def show_other_tools(self, added: list[str], withdrawn: list[str], others: dict[str, str]) -> None:
        """Tools other scripts of the page registered on WebMCP (``toolchange``): a card each, after
        ours, and a line in the activity log for each one added or withdrawn."""
        listing = self._doc.getElementById("tool-list")
        for card in list(listing.querySelectorAll("li.tool--other")):
            card.remove()
        for name, description in others.items():
            item = element("li", cls="tool tool--other")
            item.dataset.tool = name
            head = element("div", cls="tool__head")
            head.append(element("code", name), element("span", "another script", "tag"))
            item.append(head, element("p", description, "tool__desc"))
            listing.append(item)
        for name in added:
            self.log_note(f"WebMCP: another script of this page registered the tool {name}")
        for name in withdrawn:
            self.log_note(f"WebMCP: another script of this page withdrew the tool {name}")

    def log_note(self, text: str) -> None:
        """A line in the activity log that is no tool call (newest first, like the calls)."""
        listing = self._doc.getElementById("activity")
        empty = self._doc.getElementById("activity-empty")
        if not is_nullish(empty):
            empty.remove()
        row = element("li", cls="activity__row activity__row--note")
        row.append(
            element("span", time.strftime("%H:%M:%S"), "activity__time"),
            element("span", CHANNEL_LABELS[Channel.WEBMCP], "activity__channel"),
            element("span", text, "activity__text"),
        )
        listing.prepend(row)
        while listing.children.length > ACTIVITY_LIMIT:
            listing.lastElementChild.remove()

    def log_call(self, record: CallRecord) -> None:
        """Queue a finished call for the activity log (a call listener: it must stay cheap)."""
        self._activity.append((time.time(), record))
        if self._activity_timer is None:
            self._activity_timer = js.setTimeout(self._draw_activity_proxy, ACTIVITY_BATCH_MS)

    def _draw_activity(self, *_args: Any) -> None:
        self._activity_timer = None
        records = list(self._activity)
        self._activity.clear()
        if records:  # newest first, drawn by static/boot.js in one call
            rows = [_activity_row(when, record) for when, record in reversed(records)]
            js.phoneAgentActivity(json.dumps(rows, ensure_ascii=False), ACTIVITY_LIMIT, ACTIVITY_INDENT_REM)


def _activity_row(when: float, record: CallRecord) -> list[Any]:
    """A finished call's row, for static/boot.js: [failed, time, channel, tool, preview, duration,
    caller, call id, parent, depth]. Who made it (``data-caller``), its id and its parent's
    (``data-call-id``, ``data-parent``), drawn in from its parent's row (a flow's steps under their
    run_flow, the agent's actions under their run_agent_task: the parent ends last, so its row comes
    above theirs)."""
    channel = CALLER_LABELS.get(record.caller) or CHANNEL_LABELS.get(record.channel, str(record.channel))
    return [
        bool(record.result.get("isError")),
        time.strftime("%H:%M:%S", time.localtime(when)),
        ("↳ " + channel) if record.parent else channel,
        record.tool,
        _result_preview(record.result),
        f"{record.duration_ms} ms",
        str(record.caller),
        record.call_id,
        record.parent or "",
        record.depth,
    ]
