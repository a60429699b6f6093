"""What the page says while it is not paired with a phone-agent relay, and how it pairs.

``PairingForm`` is the MCP relay card's code form, shown when the relay asks this page for the code the
server's console shows (a page of another origin, or one opened without the page's link). ``PairBanner``
is the line at the top of an unpaired page with the one thing to do. A page served as static files
(``phone-agent site``, GitHub Pages, any static host: no ``/api/config``) does not reach for a relay by
itself (that would be a request outside its origin on every load): ``offer_local_relay`` says how to pair
it with a local ``phone-agent`` started with ``--allow-origin`` for this page's origin, and connects when
the person asks.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import js  # type: ignore[import-not-found]

from .dom import PanelEvents

# What the pairing form says, by why the page must pair by code.
FOREIGN_PAGE_HELP = (
    "This page comes from another origin: type the code that phone-agent shows in its console "
    "(or its log) once; the page remembers the pairing."
)
NO_LINK_HELP = (
    "This browser did not open the page's link, so the server does not know it is yours. Open the "
    "link that `phone-agent url` prints (phone-agent serve and phone-agent mcp show it too), or type "
    "the code that phone-agent shows in its console (or its log)."
)
STALE_LINK_HELP = (
    "This link's token is not the server's (it was rotated): open the link that `phone-agent url` "
    "prints now, or type the code that phone-agent shows in its console (or its log)."
)

# The banner's one thing to do, by why the page is not paired.
NO_LINK_BANNER = (
    "Not paired with phone-agent: MCP clients cannot reach this page. Open the link that "
    "`phone-agent url` prints (it carries the page's token)."
)
STALE_LINK_BANNER = (
    "Not paired with phone-agent: this link's token was rotated. Open the link that `phone-agent url` "
    "prints now."
)


def foreign_banner(origin: str) -> str:
    return (
        "Not paired with phone-agent: type the pairing code that "
        f"`phone-agent serve --allow-origin {origin}` shows in its console into the MCP relay card below."
    )


def static_help(origin: str) -> str:
    return (
        f"This page runs as static files from {origin}: WebMCP and USB work here with no server. To offer "
        "it to MCP clients too (Claude, VS Code, Cursor …), run phone-agent on this machine with "
        f"`--allow-origin {origin}` (`phone-agent serve --allow-origin {origin}`, or add it to "
        "`phone-agent mcp` in your MCP client's configuration), press Connect to phone-agent, and type the "
        "pairing code its console (or its log) shows. The page remembers the pairing."
    )


class PairBanner:
    """The line at the top of the page while it is not paired: the one thing to do."""

    def __init__(self) -> None:
        self._node = js.document.getElementById("pair-banner")
        self._text = js.document.getElementById("pair-banner-text")

    def show(self, text: str | None) -> None:
        if self._node is None:
            return
        self._node.hidden = text is None
        if text is not None:
            self._text.textContent = text


class PairingForm:
    """The MCP relay card's pairing form: shown when the relay asks this page for the code the
    server's console shows (a page of another origin, or one opened without the page's link, which
    then says how to get the link); the code typed in is handed to ``on_code``. The banner at the top
    says the one thing to do meanwhile."""

    def __init__(self, own_relay: bool = False, link_taken: bool | None = None, origin: str = "") -> None:
        self._events = PanelEvents()
        self.on_code: Any = None
        self._events.listen("relay-pair", "submit", self._submit)
        self.banner = PairBanner()
        self.origin = origin
        self.help = FOREIGN_PAGE_HELP
        self.banner_text = foreign_banner(origin)
        if own_relay:
            self.help = STALE_LINK_HELP if link_taken is False else NO_LINK_HELP
            self.banner_text = STALE_LINK_BANNER if link_taken is False else NO_LINK_BANNER

    def show(self, needed: bool) -> None:
        js.document.getElementById("relay-pair").hidden = not needed
        self.banner.show(self.banner_text if needed else None)
        if needed:
            js.document.getElementById("relay-pair-help").textContent = self.help
            js.document.getElementById("relay-state").textContent = "pairing needed: type the code"

    def connect(self, relay: Any, wanted: bool) -> None:
        """Connect ``relay`` (an ``McpRelayClient``) now when this page's server or URL names it, or the
        page paired with it before; else (a static page) only once the person asks."""
        if wanted or relay.pairing.remembered():
            relay.connect()
        else:
            self.offer_local_relay(self.origin, relay.connect)

    def relay_status(self, connected: bool, show: Callable[[bool], None]) -> None:
        """The relay connected (paired) or dropped: ``show`` it; a paired page has no banner."""
        show(connected)
        if connected:
            self.banner.show(None)

    def offer_local_relay(self, origin: str, connect: Callable[[], None]) -> None:
        """A static page: say how to pair it with a local phone-agent, and connect when asked to."""
        help_node = js.document.getElementById("relay-static-help")
        help_node.textContent = static_help(origin)
        help_node.hidden = False
        button = js.document.getElementById("relay-reconnect")
        button.textContent = "Connect to phone-agent"
        js.document.getElementById("relay-state").textContent = "not connected (a static page: see below)"
        self.banner.show(
            "Not paired with a local phone-agent (optional): to offer this page to MCP clients, run "
            f"`phone-agent serve --allow-origin {origin}` and press Connect to phone-agent in the MCP relay "
            "card."
        )

        def start(_event: Any = None) -> None:
            button.textContent = "Reconnect now"
            self.banner.show(None)
            connect()

        self._events.listen("relay-reconnect", "click", start)

    def _submit(self, event: Any) -> None:
        event.preventDefault()
        field = js.document.getElementById("relay-pair-code")
        code = str(field.value or "").strip()
        field.value = ""
        if code and self.on_code is not None:
            self.on_code(code)
