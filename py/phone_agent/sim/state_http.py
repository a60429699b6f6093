"""The simulated phone's control endpoint: a small JSON-over-HTTP server on 127.0.0.1.

Lets tests in other processes (and people) see and steer what a phone's owner would:

    GET  /state            adbd and phone state (connections, keys, the phone's ``state()``)
    GET  /phone            the phone's ``state()`` alone ("is Wi-Fi on", "what was sent")
    GET  /connections      the adb connections and their states
    GET  /auth/pending     keys waiting for "Allow USB debugging?"
    POST /auth/approve     {"fingerprint": …} or {} for all pending keys
    POST /auth/deny        same shape
    POST /reset            phone and files back to their initial state
    POST /hostile          {"modes": [...]}: what a hostile phone sends (sim/hostile.py); [] is off
    GET  /files?path=P     a file from the phone's file system (base64), or a directory listing

Only loopback Host headers are served (a web page cannot DNS-rebind its way in); every read has a
size and time bound. ``StateClient`` is the same from another process (tests, scripts).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import urllib.error
import urllib.request
from typing import Any, Protocol
from urllib.parse import parse_qs, quote, urlsplit

from phone_agent.sim.vfs import VirtualFileSystem

log = logging.getLogger("phone_agent.sim")

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")
MAX_HEADER = 16 * 1024
MAX_BODY = 64 * 1024
REQUEST_TIMEOUT = 10.0
REASONS = {200: "OK", 400: "Bad Request", 403: "Forbidden", 404: "Not Found", 405: "Method Not Allowed"}


class ObservedPhone(Protocol):
    """What the control interface reads and drives (``SimulatedPhoneServer`` is one)."""

    phone: Any
    fs: VirtualFileSystem

    def state(self) -> dict[str, Any]: ...
    def connections(self) -> list[dict[str, Any]]: ...
    def pending_keys(self) -> list[dict[str, Any]]: ...
    def approve(self, fingerprint: str | None = None) -> list[str]: ...
    def deny(self, fingerprint: str | None = None) -> list[str]: ...
    def reset(self) -> None: ...
    def set_hostile(self, modes: list[str]) -> list[str]: ...


class StateServer:
    """HTTP/1.1 (one request per connection) on ``127.0.0.1:port``; ``port=0`` picks a free one."""

    def __init__(self, sim: ObservedPhone, port: int = 0, host: str = "127.0.0.1") -> None:
        self.sim = sim
        self.host = host
        self._requested_port = port
        self._server: asyncio.Server | None = None

    @property
    def port(self) -> int:
        assert self._server is not None
        return self._server.sockets[0].getsockname()[1]

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, self.host, self._requested_port)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._server.wait_closed(), 5.0)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            status, body = await asyncio.wait_for(self._respond(reader), REQUEST_TIMEOUT)
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
            status, body = 400, {"error": f"bad request: {exc!r}"}
        except Exception as exc:  # a control request must never take the sim down
            log.exception("control request failed")
            status, body = 400, {"error": repr(exc)}
        data = json.dumps(body).encode()
        head = (
            f"HTTP/1.1 {status} {REASONS.get(status, 'Error')}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(data)}\r\nConnection: close\r\n\r\n"
        )
        with contextlib.suppress(ConnectionError):
            writer.write(head.encode() + data)
            await asyncio.wait_for(writer.drain(), REQUEST_TIMEOUT)
        writer.close()

    async def _respond(self, reader: asyncio.StreamReader) -> tuple[int, Any]:
        raw = await reader.readuntil(b"\r\n\r\n")
        if len(raw) > MAX_HEADER:
            return 400, {"error": "header too large"}
        lines = raw.decode("latin-1").split("\r\n")
        method, target, _ = lines[0].split(" ", 2)
        headers = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        host = headers.get("host", "")
        if host.rsplit(":", 1)[0] not in LOOPBACK_HOSTS:
            return 403, {"error": f"Host {host!r} refused: only loopback"}
        length = int(headers.get("content-length", "0") or 0)
        if length > MAX_BODY:
            return 400, {"error": "body too large"}
        body = await reader.readexactly(length) if length else b""
        payload = json.loads(body) if body.strip() else {}
        url = urlsplit(target)
        return self.route(method, url.path, parse_qs(url.query), payload)

    def route(self, method: str, path: str, query: dict[str, list[str]], payload: Any) -> tuple[int, Any]:
        """Dispatch one request (also callable directly, without HTTP)."""
        sim = self.sim
        gets = {
            "/state": sim.state,
            "/connections": sim.connections,
            "/auth/pending": sim.pending_keys,
            "/phone": sim.phone.state,
        }
        fingerprint = payload.get("fingerprint") if isinstance(payload, dict) else None
        posts = {
            "/auth/approve": lambda: {"approved": sim.approve(fingerprint)},
            "/auth/deny": lambda: {"denied": sim.deny(fingerprint)},
            "/reset": lambda: (sim.reset(), {"reset": True})[1],
            "/hostile": lambda: {"hostile": sim.set_hostile(_modes(payload))},
        }
        if path == "/files" and method == "GET":
            return self._file(query.get("path", ["/"])[0])
        if path in gets:
            return (200, gets[path]()) if method == "GET" else (405, {"error": "use GET"})
        if path in posts:
            return (200, posts[path]()) if method == "POST" else (405, {"error": "use POST"})
        return 404, {"error": f"no route {path}", "routes": sorted([*gets, *posts, "/files"])}

    def _file(self, path: str) -> tuple[int, Any]:
        fs = self.sim.fs
        try:
            if fs.is_dir(path):
                return 200, {"path": path, "entries": [name for name, _ in fs.list_dir(path)]}
            return 200, {"path": path, "base64": base64.b64encode(fs.read_file(path)).decode()}
        except OSError as exc:
            return 404, {"error": f"{path}: {exc.__class__.__name__}"}


def _modes(payload: Any) -> list[str]:
    modes = payload.get("modes") if isinstance(payload, dict) else None
    if not isinstance(modes, list) or not all(isinstance(mode, str) for mode in modes):
        raise ValueError('give {"modes": ["flood-output", …]} ([] turns it off)')
    return modes


class StateError(Exception):
    """The control endpoint answered with an error status."""


class StateClient:
    """Blocking client of the control endpoint, for tests and scripts in another process."""

    def __init__(self, port: int, host: str = "127.0.0.1", timeout: float = 10.0) -> None:
        self.base = f"http://{host}:{port}"
        self.timeout = timeout

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = json.dumps(body).encode() if body is not None else (b"{}" if method == "POST" else None)
        request = urllib.request.Request(self.base + path, data=data, method=method)
        request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.load(response)
        except urllib.error.HTTPError as exc:
            raise StateError(f"{method} {path}: {exc.code} {exc.read().decode(errors='replace')}") from None

    def state(self) -> dict[str, Any]:
        """Everything: serial, auth mode, connections, keys, and ``phone`` (the phone's state)."""
        return self._call("GET", "/state")

    def phone_state(self) -> dict[str, Any]:
        """The virtual phone's own ``state()``."""
        return self._call("GET", "/phone")

    def connections(self) -> list[dict[str, Any]]:
        return self._call("GET", "/connections")

    def pending_keys(self) -> list[dict[str, Any]]:
        return self._call("GET", "/auth/pending")

    def approve(self, fingerprint: str | None = None) -> list[str]:
        """Allow a pending key (all of them without a fingerprint); the fingerprints approved."""
        return self._call("POST", "/auth/approve", {"fingerprint": fingerprint} if fingerprint else {})[
            "approved"
        ]

    def deny(self, fingerprint: str | None = None) -> list[str]:
        return self._call("POST", "/auth/deny", {"fingerprint": fingerprint} if fingerprint else {})["denied"]

    def reset(self) -> None:
        self._call("POST", "/reset")

    def set_hostile(self, modes: list[str]) -> list[str]:
        """Make the phone hostile in these ways (sim/hostile.py); ``[]`` makes it a good phone again."""
        return self._call("POST", "/hostile", {"modes": modes})["hostile"]

    def read_file(self, path: str) -> bytes:
        """A file from the phone's file system."""
        return base64.b64decode(self._call("GET", f"/files?path={quote(path)}")["base64"])
