"""Where the page's relay client connects, and how it retries after a disconnect.

A page served by phone-agent uses its own origin's ``/relay``; ``?relay=ws://…`` on this machine wins
(any other is refused and said so, because the relay receives the page's screenshots and goals); any
other page uses ws://localhost:7788. Pure: the page's URL and ``/api/config`` in, settings out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

DEFAULT_RELAY_URL = "ws://localhost:7788"
DEFAULT_RETRY_MS = 30_000
# After a disconnect the page retries at once, then after 1 s, 2 s, 4 s … up to its retry interval.
FIRST_BACKOFF_MS = 1000


def retry_delay_ms(failures: int, max_ms: int) -> int:
    """How long the page waits before its next attempt after ``failures`` failed ones in a row (0 for
    the first retry after a connection was lost): 0, 1 s, 2 s, 4 s … never more than ``max_ms``."""
    if failures <= 0:
        return 0
    return min(max_ms, FIRST_BACKOFF_MS << min(failures - 1, 20))


@dataclass(frozen=True)
class RelaySettings:
    url: str
    retry_ms: int
    # Why a ``?relay=`` was not used, for the page's console; empty when it was, or when none was given.
    refused: str = ""
    # Whether the page's URL named its relay (``?relay=``, used): it then connects at load even when it
    # is a static page.
    named: bool = False


LOOPBACK_HOSTS = frozenset({"127.0.0.1", "localhost", "::1"})


def loopback_relay(url: str) -> bool:
    """Whether ``url`` is a ws:// or wss:// URL on this machine. The relay sends the page tool calls
    (screenshots, agent goals): a link in a web page must not be able to point it elsewhere."""
    try:
        parts = urlsplit(url)
        return parts.scheme in ("ws", "wss") and (parts.hostname or "") in LOOPBACK_HOSTS and parts.port != 0
    except ValueError:
        return False


def relay_settings(page_url: str, server_config: dict[str, Any] | None) -> RelaySettings:
    """Where the page's relay client connects, and how often it retries.

    ``?relay=ws://…`` on this machine wins (any other is refused and said so); a page served by
    phone-agent (``server_config`` from ``/api/config``) uses its own origin; any other page uses
    ws://localhost:7788 (a static page connects to it only when asked: ``named`` says whether the URL
    named a relay). ``?relayRetryMs=`` shortens the
    30 s retry (tests).
    """
    parts = urlsplit(page_url)
    query = parse_qs(parts.query)
    url = DEFAULT_RELAY_URL
    refused = ""
    named = False
    if server_config and server_config.get("server") == "phone-agent":
        scheme = "wss" if parts.scheme == "https" else "ws"
        url = f"{scheme}://{parts.netloc}{server_config.get('relay', '/relay')}"
    if query.get("relay"):
        wanted = query["relay"][0]
        if loopback_relay(wanted):
            url = wanted
            named = True
        else:
            refused = (
                f"?relay={wanted} is ignored: the relay must be a ws:// URL on this machine "
                "(127.0.0.1, localhost or [::1]), because it receives this page's screenshots and tasks"
            )
    retry_ms = DEFAULT_RETRY_MS
    if query.get("relayRetryMs"):
        try:
            retry_ms = max(100, int(query["relayRetryMs"][0]))
        except ValueError:
            pass
    return RelaySettings(url=url, retry_ms=retry_ms, refused=refused, named=named)
