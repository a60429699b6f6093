"""A phone farm over NATS, without I/O: subjects, farm URLs and their credentials, presence, call frames.

A page joins a farm with ``?farm=ws://USER:PASSWORD@HOST:PORT`` (or ``ws://TOKEN@HOST:PORT``) and serves its
phone on subjects of its own; ``phone-agent mcp --farm nats://…`` routes each tool call to one page. The
calls are the relay's frames (``relay.frames``), each in an envelope that carries the frame's text as it
is beside the phone it is meant for (the farm never decodes a frame to address it); the answers are the
relay's frames as they are::

    farm.presence.NAME.PAGE  page → all   {"serial", "model", "release", "screen", "host", "busy", …}
    farm.page.NAME.PAGE      mcp → page   {"device", "frame"}   frame: {"id", "tool", "args"} or
                                                                {"id", "type": "cancel"}, as text
    (the call's reply)       page → mcp   {"id", "result"} and {"id", "type": "progress", "seq", "message"}
    farm.discover            mcp → pages  "announce yourselves now"
    $KV.phone-farm-tasks.NAME.SERIAL.TASK   the page's task records (JetStream key-value)
    $KV.phone-farm-devices.SERIAL           the NATS user a serial is pinned to (the MCP servers write it)

NAME is the page's NATS user (the broker confines each user to its own subjects), PAGE a random id per
page load. Pure: used by the page (Pyodide) and the MCP server (CPython) alike.
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

PRESENCE_PREFIX = "farm.presence"
PAGE_PREFIX = "farm.page"
DISCOVER_SUBJECT = "farm.discover"
TASKS_BUCKET = "phone-farm-tasks"
# Which NATS user's pages may serve each serial: written by the MCP servers (pages cannot), the first
# page to claim a serial pins it to its user (key: the serial as a subject token).
DEVICES_BUCKET = "phone-farm-devices"
# The user a page takes its subjects from when the farm URL carries a token instead of a user.
TOKEN_USER = "token"
DEFAULT_HEARTBEAT_MS = 1_000
# A page unheard of for this long has left the farm (three missed heartbeats and a half).
DEFAULT_PRESENCE_TTL_MS = 3_500

_TOKEN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def subject_token(text: str) -> str:
    """``text`` as one NATS subject token: itself when plain, else ``b32-`` and its base32 (no dots,
    wildcards or spaces can reach a subject, and the mapping is one to one)."""
    if _TOKEN.match(text) and not text.startswith("b32-"):
        return text
    encoded = base64.b32encode(text.encode("utf-8")).decode("ascii").rstrip("=").lower()
    return f"b32-{encoded}"


def presence_subject(user: str, page_id: str) -> str:
    return f"{PRESENCE_PREFIX}.{subject_token(user)}.{subject_token(page_id)}"


def page_subject(user: str, page_id: str) -> str:
    return f"{PAGE_PREFIX}.{subject_token(user)}.{subject_token(page_id)}"


def page_subject_for_presence(subject: str) -> str | None:
    """The call subject of the page that announced itself on ``subject`` (never taken from the body, so a
    page cannot make calls for another page come to it); None for a subject that is not a presence."""
    parts = subject.split(".")
    if len(parts) != 4 or ".".join(parts[:2]) != PRESENCE_PREFIX:
        return None
    return f"{PAGE_PREFIX}.{parts[2]}.{parts[3]}"


def user_of_presence(subject: str) -> str | None:
    """The NATS user (as its subject token) whose page announced itself on ``subject``: the broker lets a
    user publish only under its own name, so this is who the page is, whatever its body says."""
    parts = subject.split(".")
    if len(parts) != 4 or ".".join(parts[:2]) != PRESENCE_PREFIX:
        return None
    return parts[2]


def task_key(user: str, serial: str, task_id: str) -> str:
    """The key of a task record in the farm's bucket: under the page's user, so the broker lets only that
    page write it."""
    return f"{subject_token(user)}.{subject_token(serial)}.{subject_token(task_id)}"


def task_subject(user: str, serial: str, task_id: str) -> str:
    """Where a page publishes a task record (a key-value put is a publish to this subject)."""
    return f"$KV.{TASKS_BUCKET}.{task_key(user, serial, task_id)}"


# -- farm URLs ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class FarmUrl:
    """A broker URL with its credentials taken out. ``repr`` and ``shown`` never carry a secret."""

    server: str
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    token: str | None = field(default=None, repr=False)

    @property
    def subject_user(self) -> str:
        """The name the page's subjects live under: its NATS user, or ``token`` for a token login."""
        return self.user or TOKEN_USER

    @property
    def shown(self) -> str:
        """The URL for logs and the page: credentials replaced by ``***``."""
        parts = urlsplit(self.server)
        who = f"{self.user}:***@" if self.user else ("***@" if self.token else "")
        return f"{parts.scheme}://{who}{parts.netloc}{parts.path}"


def parse_farm_url(url: str, schemes: tuple[str, ...] = ("nats", "tls", "ws", "wss")) -> FarmUrl:
    """``SCHEME://USER:PASSWORD@HOST:PORT`` or ``SCHEME://TOKEN@HOST:PORT`` → FarmUrl; ValueError (whose
    message never repeats the credentials) for anything else."""
    try:
        parts = urlsplit(url.strip())
        host = parts.hostname
        port = parts.port
    except ValueError:
        raise ValueError("not a URL") from None
    if parts.scheme not in schemes:
        raise ValueError(f"the scheme must be one of {', '.join(s + '://' for s in schemes)}")
    if not host:
        raise ValueError("no host")
    netloc = f"[{host}]" if ":" in host else host
    if port is not None:
        netloc += f":{port}"
    server = f"{parts.scheme}://{netloc}{parts.path if parts.path not in ('', '/') else ''}"
    user = unquote(parts.username) if parts.username else None
    password = unquote(parts.password) if parts.password is not None else None
    if user and password is None:
        return FarmUrl(server, token=user)
    return FarmUrl(server, user=user, password=password)


@dataclass(frozen=True)
class FarmPageSettings:
    """How a page joins a farm: from ``?farm=`` (wins) or the page's stored settings."""

    url: FarmUrl | None
    heartbeat_ms: int = DEFAULT_HEARTBEAT_MS
    # Why a farm URL was not used, for the page's console (never with its credentials).
    refused: str = ""
    # Whether the URL came from the page's own URL (``?farm=``), which wins over the stored one.
    from_query: bool = False


def farm_page_settings(page_url: str, stored: str | None = None) -> FarmPageSettings:
    """The page's farm from its URL (``?farm=``, ``?farmHeartbeatMs=``) or the stored farm URL."""
    query = parse_qs(urlsplit(page_url).query)
    wanted = query["farm"][0] if query.get("farm") else (stored or "")
    heartbeat = DEFAULT_HEARTBEAT_MS
    if query.get("farmHeartbeatMs"):
        try:
            heartbeat = max(100, int(query["farmHeartbeatMs"][0]))
        except ValueError:
            pass
    from_query = bool(query.get("farm"))
    if not wanted:
        return FarmPageSettings(None, heartbeat)
    try:
        return FarmPageSettings(parse_farm_url(wanted, ("ws", "wss")), heartbeat, from_query=from_query)
    except ValueError as exc:
        return FarmPageSettings(None, heartbeat, f"the farm URL is not used: {exc}", from_query)


# -- presence -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Presence:
    """One page's announcement of its phone."""

    serial: str
    model: str = ""
    release: str = ""
    screen: str = ""
    host: str = ""
    busy: bool = False
    since_ms: int = 0
    ttl_ms: int = DEFAULT_PRESENCE_TTL_MS
    leaving: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "serial": self.serial,
            "model": self.model,
            "release": self.release,
            "screen": self.screen,
            "host": self.host,
            "busy": self.busy,
            "since": self.since_ms,
            "ttlMs": self.ttl_ms,
            "leaving": self.leaving,
        }

    def message(self) -> str:
        return json.dumps(self.to_json(), ensure_ascii=False)


def presence_from_device_info(
    info: dict[str, Any], host: str, busy: bool, since_ms: int, ttl_ms: int = DEFAULT_PRESENCE_TTL_MS
) -> Presence | None:
    """A page's presence from get_device_status's answer; None when no phone is connected."""
    if not info.get("connected") or not info.get("serial"):
        return None
    width, height = info.get("screenWidth"), info.get("screenHeight")
    screen = f"{width}x{height}" if width and height else ""
    return Presence(
        serial=str(info["serial"]),
        model=str(info.get("model") or ""),
        release=str(info.get("release") or ""),
        screen=screen,
        host=host,
        busy=busy,
        since_ms=since_ms,
        ttl_ms=ttl_ms,
    )


def parse_presence(text: str | bytes) -> Presence | None:
    """A presence body, or None when it is not one (ignored: a page cannot break the registry)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("serial"), str) or not data["serial"]:
        return None

    def text_of(key: str) -> str:
        value = data.get(key)
        return value[:200] if isinstance(value, str) else ""

    def int_of(key: str, default: int) -> int:
        value = data.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default

    return Presence(
        serial=data["serial"][:200],
        model=text_of("model"),
        release=text_of("release"),
        screen=text_of("screen"),
        host=text_of("host"),
        busy=data.get("busy") is True,
        since_ms=int_of("since", 0),
        ttl_ms=min(max(int_of("ttlMs", DEFAULT_PRESENCE_TTL_MS), 500), 60_000),
        leaving=data.get("leaving") is True,
    )


# -- calls ------------------------------------------------------------------------------------


def farm_envelope(device: str, frame: str) -> str:
    """A relay frame addressed to one phone: the frame's text, untouched, beside the phone's serial."""
    return json.dumps({"device": device, "frame": frame}, ensure_ascii=False)


@dataclass(frozen=True)
class FarmEnvelope:
    """What a page receives on its call subject: the phone it is meant for (None: none named) and the
    relay frame's text exactly as the MCP server's relay wrote it."""

    device: str | None
    frame: str


def open_farm_envelope(text: str) -> FarmEnvelope:
    """The envelope of a message on a page's call subject. A body that is not an envelope is taken as a
    bare frame meant for no phone: a call in it is refused, a cancel still cancels, a bad frame with an
    id is answered."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return FarmEnvelope(None, text)
    if not isinstance(data, dict) or not isinstance(data.get("frame"), str):
        return FarmEnvelope(None, text)
    device = data.get("device")
    return FarmEnvelope(device if isinstance(device, str) else None, data["frame"])
