"""The relay's frames as the page sees them: parse what the server sends, build what the page answers.

server → page  ``{id, tool, args}`` (a call) and ``{id, type: "cancel"}``
page → server  ``{id, result}`` and ``{id, type: "progress", seq, message}``

Pairing comes first on every connection: the page's first frame is ``{type: "hello", secret}`` (the
secret from ``/api/config`` or remembered from an earlier pairing) or ``{type: "pair", code}`` (the code
the server's console shows). The server answers ``{type: "paired"}`` when the page is in (with
``secret`` after a code, for the page to remember); an unpaired page is closed with ``CLOSE_UNPAIRED``.

Pure: text in, events out, text to send. The browser's WebSocket adapter only moves the strings.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

DEFAULT_RELAY_URL = "ws://localhost:7788"
DEFAULT_RETRY_MS = 30_000
# The close code the server sends to a page that a newer page replaced. That page stops retrying on its
# own (two open tabs would otherwise take the relay from each other every 30 s) until a person asks.
CLOSE_REPLACED = 4000
# The close code for a page that did not pair (no secret, a wrong one, a wrong code).
CLOSE_UNPAIRED = 4401
# After a disconnect the page retries at once, then after 1 s, 2 s, 4 s … up to its retry interval.
FIRST_BACKOFF_MS = 1000


def retry_delay_ms(failures: int, max_ms: int) -> int:
    """How long the page waits before its next attempt after ``failures`` failed ones in a row (0 for
    the first retry after a connection was lost): 0, 1 s, 2 s, 4 s … never more than ``max_ms``."""
    if failures <= 0:
        return 0
    return min(max_ms, FIRST_BACKOFF_MS << min(failures - 1, 20))


def hello_frame(secret: str) -> str:
    return json.dumps({"type": "hello", "secret": secret})


def pair_frame(code: str) -> str:
    return json.dumps({"type": "pair", "code": code})


@dataclass(frozen=True)
class CallFrame:
    id: str
    tool: str
    args: Any


@dataclass(frozen=True)
class CancelFrame:
    id: str


@dataclass(frozen=True)
class BadFrame:
    """A frame the page cannot act on; ``id`` is set when the frame named one, so it can be answered."""

    reason: str
    id: str | None = None


@dataclass(frozen=True)
class PairedFrame:
    """The server accepted the page; ``secret`` (after a pairing code) is what it shows from now on."""

    secret: str | None = None


ServerFrame = CallFrame | CancelFrame | PairedFrame | BadFrame


def parse_server_frame(text: str) -> ServerFrame:
    try:
        data = json.loads(text)
    except (ValueError, TypeError) as exc:
        return BadFrame(f"not JSON: {exc}")
    if not isinstance(data, dict):
        return BadFrame("not a JSON object")
    if data.get("type") == "paired" and "id" not in data:
        secret = data.get("secret")
        return PairedFrame(secret if isinstance(secret, str) and secret else None)
    frame_id = data.get("id")
    if not isinstance(frame_id, str) or not frame_id:
        return BadFrame("no string id")
    if data.get("type") == "cancel":
        return CancelFrame(frame_id)
    if "type" in data:
        return BadFrame(f"unknown frame type {data['type']!r}", frame_id)
    tool = data.get("tool")
    if not isinstance(tool, str):
        return BadFrame("no tool name", frame_id)
    return CallFrame(frame_id, tool, data.get("args"))


def result_frame(frame_id: str, result: dict[str, Any]) -> str:
    return json.dumps({"id": frame_id, "result": result}, ensure_ascii=False)


class ProgressSequence:
    """Numbers progress frames per request id, from 1."""

    def __init__(self) -> None:
        self._next: dict[str, int] = {}

    def frame(self, frame_id: str, message: str) -> str:
        seq = self._next.get(frame_id, 1)
        self._next[frame_id] = seq + 1
        return json.dumps(
            {"id": frame_id, "type": "progress", "seq": seq, "message": message}, ensure_ascii=False
        )

    def forget(self, frame_id: str) -> None:
        self._next.pop(frame_id, None)


@dataclass(frozen=True)
class RelaySettings:
    url: str
    retry_ms: int
    # Why a ``?relay=`` was not used, for the page's console; empty when it was, or when none was given.
    refused: str = ""


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
    ws://localhost:7788. ``?relayRetryMs=`` shortens the
    30 s retry (tests).
    """
    parts = urlsplit(page_url)
    query = parse_qs(parts.query)
    url = DEFAULT_RELAY_URL
    refused = ""
    if server_config and server_config.get("server") == "phone-agent":
        scheme = "wss" if parts.scheme == "https" else "ws"
        url = f"{scheme}://{parts.netloc}{server_config.get('relay', '/relay')}"
    if query.get("relay"):
        wanted = query["relay"][0]
        if loopback_relay(wanted):
            url = wanted
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
    return RelaySettings(url=url, retry_ms=retry_ms, refused=refused)
