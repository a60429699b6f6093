"""Who may talk to the server: the Host and Origin checks, pure, plus the ASGI guard that applies them.

The server listens on loopback and holds a phone: a web page on another site must not reach it. A
DNS-rebinding page arrives with a foreign Host header, so every request and WebSocket handshake must
name a loopback host on the server's own port; a cross-site page arrives with a foreign Origin, so every
WebSocket handshake must come from the server's own origin or one the user allowed (``--allow-origin``).
A handshake without Origin (a script, not a browser) is refused too: the relay is for the page.

``/mcp`` (MCP over HTTP, bearer token) is for programs, not pages: a request with a browser's Origin is
refused unless it is the page's own. Bound to every interface (``--host 0.0.0.0``), ``/mcp`` accepts
any Host on the server's port — agents on other machines name the host as they know it, and a
DNS-rebinding page cannot present the token anyway.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket

log = logging.getLogger("phone_agent.access")

LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
_WILDCARDS = {"", "0.0.0.0", "::", "[::]"}
_DEFAULT_PORTS = {"http": 80, "https": 443}


def host_for_url(host: str) -> str:
    """``host`` as it appears in a URL or a Host header (IPv6 in brackets)."""
    host = host.strip().lower()
    if ":" in host and not host.startswith("["):
        return f"[{host}]"
    return host


def normalize_origin(origin: str) -> str:
    """An origin as browsers send it: ``scheme://host[:port]``, lower case, default port dropped.

    Raises ValueError for anything that is not an origin (a path, a query, no scheme or host).
    """
    parts = urlsplit(origin.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"not an http(s) origin: {origin!r}")
    if parts.path not in ("", "/") or parts.query or parts.fragment or parts.username or parts.password:
        raise ValueError(f"an origin has no path, query or user part: {origin!r}")
    port = parts.port
    host = host_for_url(parts.hostname)
    if port is None or port == _DEFAULT_PORTS[parts.scheme]:
        return f"{parts.scheme}://{host}"
    return f"{parts.scheme}://{host}:{port}"


@dataclass(frozen=True)
class AccessPolicy:
    """The Host values and WebSocket origins the server accepts."""

    hosts: frozenset[str]
    origins: frozenset[str]
    # The server's own origins (a subset of ``origins``, which adds --allow-origin ones).
    own_origins: frozenset[str] = frozenset()
    port: int = 0
    # Bound to a wildcard address: /mcp takes any Host on ``port``.
    any_host_for_mcp: bool = False
    mcp_path: str = "/mcp"

    @classmethod
    def for_server(cls, bind_host: str, port: int, allow_origins: Iterable[str] = ()) -> AccessPolicy:
        """The server's own loopback names on ``port``, plus the bound host when it is a specific one."""
        names = list(LOOPBACK_NAMES)
        bound = host_for_url(bind_host)
        if bound not in _WILDCARDS and bound not in names:
            names.append(bound)
        hosts = {f"{name}:{port}" for name in names}
        if port == 80:  # browsers leave the default port out of Host
            hosts.update(names)
        own_origins = {normalize_origin(f"http://{name}:{port}") for name in names}
        return cls(
            frozenset(hosts),
            frozenset(own_origins | {normalize_origin(o) for o in allow_origins}),
            own_origins=frozenset(own_origins),
            port=port,
            any_host_for_mcp=bound in _WILDCARDS,
        )

    def host_allowed(self, host: str | None) -> bool:
        return host is not None and host.strip().lower() in self.hosts

    def mcp_host_allowed(self, host: str | None) -> bool:
        if self.host_allowed(host):
            return True
        if not self.any_host_for_mcp or host is None:
            return False
        name, _, port = host.strip().rpartition(":")
        return bool(name) and port == str(self.port)

    def own_origin(self, origin: str | None) -> bool:
        return _origin_in(origin, self.own_origins)

    def origin_allowed(self, origin: str | None) -> bool:
        return _origin_in(origin, self.origins)


class AccessGuard:
    """ASGI middleware: refuses a request with a foreign Host (421) and a handshake with a foreign Host or
    Origin (403, before the WebSocket is accepted)."""

    def __init__(self, app: ASGIApp, policy: AccessPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        host = headers.get("host")
        problem = None
        is_mcp = scope["type"] == "http" and scope.get("path", "").rstrip("/") == self.policy.mcp_path
        host_ok = self.policy.mcp_host_allowed(host) if is_mcp else self.policy.host_allowed(host)
        if not host_ok:
            problem = f"Host {host!r} is not this server (use http://127.0.0.1 or http://localhost)"
        elif is_mcp and headers.get("origin") and not self.policy.own_origin(headers.get("origin")):
            problem = f"Origin {headers.get('origin')!r} may not use /mcp (it is for MCP clients, not pages)"
        elif scope["type"] == "websocket" and not self.policy.origin_allowed(headers.get("origin")):
            origin = headers.get("origin")
            problem = (
                "a WebSocket handshake without Origin is refused"
                if not origin
                else f"Origin {origin!r} may not use the relay (phone-agent --allow-origin allows it)"
            )
        if problem is None:
            await self.app(scope, receive, send)
            return
        log.warning("refused %s %s: %s", scope["type"], scope.get("path", ""), problem)
        if scope["type"] == "http":
            status = 421 if not host_ok else 403
            await PlainTextResponse(f"phone-agent: {problem}\n", status_code=status)(scope, receive, send)
            return
        websocket = WebSocket(scope, receive, send)
        if "websocket.http.response" in scope.get("extensions", {}):
            await websocket.send_denial_response(
                PlainTextResponse(f"phone-agent: {problem}\n", status_code=403)
            )
        else:  # pragma: no cover - uvicorn's websockets implementations all offer the denial response
            await websocket.close(code=1008)


def _origin_in(origin: str | None, origins: Collection[str]) -> bool:
    """Whether ``origin`` (as a browser sends it) is one of ``origins`` (normalized); a missing or
    malformed origin is not."""
    if not origin:
        return False
    try:
        return normalize_origin(origin) in origins
    except ValueError:
        return False
