"""The server's listening socket: bound before uvicorn starts, so a taken port is one clear line; and
what the bind address means (this machine only or not, the page's URL)."""

from __future__ import annotations

import errno
import ipaddress
import socket
from collections.abc import Mapping
from typing import TextIO
from urllib.parse import quote

from .access import host_for_url
from .options import DEFAULT_HOST, PORT_ENV


class StartupError(Exception):
    """The server could not start, or stopped by itself; the message is the one line to print."""


def bind_socket(host: str, port: int) -> socket.socket:
    """A listening socket on host:port, or StartupError with a clear one-line message."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise StartupError(f"cannot listen on {host!r}: {exc.strerror}") from exc
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        # SO_REUSEADDR lets a restart bind through TIME_WAIT; on POSIX it does not let two servers share.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise StartupError(
                f"port {port} on {host} is already in use (another phone-agent running?); stop it, or choose "
                f"another port with --port or {PORT_ENV}"
            ) from exc
        raise StartupError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    sock.setblocking(False)
    return sock


def is_loopback(host: str) -> bool:
    """Whether binding ``host`` keeps the server on this machine."""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def page_url(host: str, port: int) -> str:
    shown = DEFAULT_HOST if host_for_url(host) in ("", "0.0.0.0", "[::]") else host_for_url(host)
    return f"http://{shown}:{port}/"


def page_link(url: str, token: str) -> str:
    """The page's link: ``url`` with ``?token=`` (the bearer token; ``phone-agent url`` prints it)."""
    return f"{url}?token={quote(token, safe='')}"


def shows_link(stream: TextIO, environ: Mapping[str, str], page_paired: bool) -> bool:
    """Whether the token-bearing link may be printed on ``stream``: only while no page is paired, only to a
    person at a terminal (never into a log, a pipe or CI's output, where the token would be kept)."""
    if page_paired or environ.get("CI"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or odd stream
        return False


def open_page_line(
    link: str, port: int, stream: TextIO, environ: Mapping[str, str], page_paired: bool
) -> str | None:
    """What the console says about opening the page: the link itself (``shows_link``), else, while no page
    is paired, the command that prints it; None once a page is paired."""
    if page_paired:
        return None
    if shows_link(stream, environ, page_paired):
        return f"phone-agent: open {link} in Chrome"
    return (
        f"phone-agent: no page is paired yet: `phone-agent url --port {port}` prints the page's link to "
        "open in Chrome"
    )
