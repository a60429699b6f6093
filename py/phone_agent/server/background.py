"""The shared server, the adb way: find the phone-agent server on a port, start one in the background
when none answers, and stop it.

``probe`` tells apart: nothing listening (start one), our own server (use it), a phone-agent server that
does not take this user's token (another user's, or one started with another token), a phone-agent of
another version, and a port held by something else. Only our own server is ever used; every other case
is one clear sentence. A background server is ``phone-agent serve`` detached from the terminal and the
client (its own session, stdin closed), its output in ``server-PORT.log`` in the state directory.
Clients that find no server at the same moment take turns, as adb's server start does: the first to
lock ``server-PORT.lock`` starts it, the others wait on the lock and then join the server it started.
``stop_server`` signals a recorded process only when it is a phone-agent server (a pid may be reused).
Blocking (urllib, subprocess): callers in an event loop run these in a thread.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .. import __version__
from . import credentials

PROBE_TIMEOUT_S = 3.0
START_TIMEOUT_S = 40.0
# A client waiting for another to start the server waits this long for the lock (the start's own limit,
# and a little): a holder that hangs longer has failed, and the waiter says so.
LOCK_TIMEOUT_S = START_TIMEOUT_S + 10.0
STOP_TIMEOUT_S = 10.0


class ServerProblem(Exception):
    """A server on the port that must not be used, or one that could not be started; one sentence."""


@dataclass(frozen=True)
class Probe:
    """What answers on a port. ``state`` is one of: ``none``, ``ours``, ``not_ours``, ``other_version``,
    ``not_phone_agent``."""

    state: str
    message: str = ""
    identity: dict[str, Any] = field(default_factory=dict)


def stop_command(port: int, host: str = "127.0.0.1") -> str:
    """The whole ``phone-agent stop`` command for the server on ``port``, as a hint to copy: the port
    (and a host other than loopback) spelled out, so it stops that server and no other."""
    from .options import DEFAULT_HOST, DEFAULT_PORT, PORT_ENV

    command = "phone-agent stop"
    if host not in (DEFAULT_HOST, "localhost", "0.0.0.0", "::", ""):
        command += f" --host {host}"
    if port != DEFAULT_PORT or os.environ.get(PORT_ENV):
        command += f" --port {port}"
    return command


def connect_host(host: str) -> str:
    """Where a client on this machine reaches a server bound to ``host`` (a wildcard: loopback)."""
    name = host.strip("[]")
    if name in ("", "0.0.0.0", "::"):
        return "127.0.0.1"
    return f"[{name}]" if ":" in name else name


def _get(url: str, token: str | None = None, method: str = "GET") -> tuple[int, bytes]:
    request = urllib.request.Request(url, method=method)
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=PROBE_TIMEOUT_S) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def probe(host: str, port: int, token: str) -> Probe:
    """Who answers on ``host:port``."""
    base = f"http://{connect_host(host)}:{port}"
    where = f"port {port} on {host}"
    try:
        status, body = _get(f"{base}/api/config")
    except (ConnectionRefusedError, FileNotFoundError):
        return Probe("none")
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, ConnectionRefusedError):
            return Probe("none")
        return Probe(
            "not_phone_agent",
            f"{where} is already in use by something that is not phone-agent "
            f"({exc.reason}); stop it, or choose another port with --port or PHONE_AGENT_WS_PORT",
        )
    except (OSError, ValueError) as exc:
        return Probe(
            "not_phone_agent",
            f"{where} is already in use by something that is not phone-agent "
            f"({exc or type(exc).__name__}); stop it, or choose another port with --port or "
            "PHONE_AGENT_WS_PORT",
        )
    try:
        config = json.loads(body) if status == 200 else None
    except ValueError:
        config = None
    if not isinstance(config, dict) or config.get("server") != "phone-agent":
        return Probe(
            "not_phone_agent",
            f"{where} is already in use by something that is not phone-agent; "
            "stop it, or choose another port with --port or PHONE_AGENT_WS_PORT",
        )
    version = config.get("version")
    if version != __version__:
        return Probe(
            "other_version",
            f"{where} holds phone-agent {version}, not this phone-agent "
            f"{__version__}; stop it (`{stop_command(port, host)}` with that version, or end its "
            "process), or "
            "choose another port with --port or PHONE_AGENT_WS_PORT",
        )
    try:
        status, body = _get(f"{base}/api/server", token)
    except OSError as exc:
        return Probe("not_phone_agent", f"{where}: the phone-agent server there does not answer ({exc})")
    if status == 401:
        return Probe(
            "not_ours",
            f"{where} holds a phone-agent server that does not accept your token: "
            "another user's server, or one started with another PHONE_AGENT_TOKEN or before "
            "`phone-agent token --rotate`; stop it, or choose another port with --port or "
            "PHONE_AGENT_WS_PORT",
        )
    try:
        identity = json.loads(body) if status == 200 else None
    except ValueError:
        identity = None
    if not isinstance(identity, dict):
        return Probe(
            "other_version",
            f"{where} holds a phone-agent server that does not answer "
            f"/api/server as phone-agent {__version__} does; stop it, or choose another port",
        )
    uid = os.getuid() if hasattr(os, "getuid") else None
    if identity.get("uid") is not None and uid is not None and identity.get("uid") != uid:
        return Probe(
            "not_ours",
            f"{where} holds the phone-agent server of another user (uid "
            f"{identity.get('uid')}); choose another port with --port or PHONE_AGENT_WS_PORT",
        )
    return Probe("ours", identity=identity)


def start_background(server_args: Sequence[str], port: int) -> subprocess.Popen[bytes]:
    """``phone-agent serve SERVER_ARGS`` detached, its output appended to the state directory's log."""
    credentials.private_dir(credentials.state_dir())
    log_path = credentials.background_log_path(port)
    # Private: the log shows pairing codes.
    with os.fdopen(os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600), "ab") as log:
        log.write(f"\n--- phone-agent serve started by phone-agent mcp at {time.ctime()} ---\n".encode())
        log.flush()
        return subprocess.Popen(
            [sys.executable, "-m", "phone_agent.cli", "serve", *server_args],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            start_new_session=True,  # not in the client's process group: its Ctrl-C or exit is not ours
            close_fds=True,
        )


def log_tail(port: int, lines: int = 5) -> str:
    try:
        text = credentials.background_log_path(port).read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.strip().splitlines()[-lines:])


@contextlib.contextmanager
def start_lock(port: int, timeout_s: float = LOCK_TIMEOUT_S) -> Any:
    """Hold ``server-PORT.lock`` (in the state directory) while starting the server on ``port``: one
    client at a time. The kernel releases it if the holder dies."""
    credentials.private_dir(credentials.state_dir())
    path = credentials.state_dir() / f"server-{port}.lock"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise ServerProblem(
                        f"another phone-agent has been starting the server on port {port} for more than "
                        f"{timeout_s:g} s; see {credentials.background_log_path(port).name} in the state "
                        "directory"
                    ) from None
                time.sleep(0.05)
        yield
    finally:
        os.close(fd)  # releases the lock


def ensure_server(host: str, port: int, token: str, server_args: Sequence[str]) -> tuple[Probe, bool]:
    """Our server on ``port``, started in the background if nothing answers; (probe, started by us).
    Raises ServerProblem for a server that must not be used or one that would not start."""
    found = probe(host, port, token)
    if found.state == "ours":
        return found, False
    if found.state != "none":
        raise ServerProblem(found.message)
    with start_lock(port):
        # Another client may have started it while this one waited for the lock: join it.
        found = probe(host, port, token)
        if found.state == "ours":
            return found, False
        if found.state != "none":
            raise ServerProblem(found.message)
        return _start_and_wait(host, port, token, server_args)


def _start_and_wait(host: str, port: int, token: str, server_args: Sequence[str]) -> tuple[Probe, bool]:
    child = start_background(server_args, port)
    deadline = time.monotonic() + START_TIMEOUT_S
    exited_at: float | None = None
    while time.monotonic() < deadline:
        found = probe(host, port, token)
        if found.state == "ours":
            # Another client may have won the race to start it: either way, ours to use.
            return found, child.poll() is None
        if found.state not in ("none", "not_phone_agent"):
            raise ServerProblem(found.message)
        if child.poll() is not None:
            exited_at = exited_at or time.monotonic()
            # It lost a race for the port, or failed: give a winner a moment to answer.
            if time.monotonic() - exited_at > 3.0:
                tail = log_tail(port)
                raise ServerProblem(
                    f"the background server exited with {child.returncode}"
                    + (
                        f"; its log ({credentials.background_log_path(port).name} in the state "
                        f"directory) ends:\n{tail}"
                        if tail
                        else ""
                    )
                )
        time.sleep(0.1)
    with contextlib.suppress(OSError):
        child.terminate()
    raise ServerProblem(f"the background server did not answer on port {port} within {START_TIMEOUT_S:g} s")


def stop_server(host: str, port: int, token: str) -> str:
    """Stop our server on ``port``; a sentence saying what happened. Raises ServerProblem when the
    server there is not ours to stop."""
    base = f"http://{connect_host(host)}:{port}"
    found = probe(host, port, token)
    if found.state == "none":
        return f"no phone-agent server on port {port}"
    if found.state == "ours":
        with contextlib.suppress(OSError):
            _get(f"{base}/api/stop", token, method="POST")
        if _wait_gone(host, port):
            return f"stopped the phone-agent server on port {port}"
    # Not reachable by token (rotated, an older version): our own recorded process may still be stopped.
    record = credentials.read_server_record(port) or {}
    pid = record.get("pid")
    if isinstance(pid, int) and pid > 0 and _is_alive(pid) and is_phone_agent_server(pid):
        os.kill(pid, signal.SIGTERM)
        if _wait_gone(host, port):
            return f"stopped the phone-agent server on port {port} (pid {pid})"
    if found.state != "ours":
        raise ServerProblem(found.message)
    raise ServerProblem(f"the phone-agent server on port {port} did not stop within {STOP_TIMEOUT_S:g} s")


def _is_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return False  # not ours
    return True


def is_phone_agent_server(pid: int) -> bool:
    """Whether process ``pid`` runs ``phone-agent serve`` (a recorded pid may since belong to another
    program); False when that cannot be told."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            args = [arg.decode(errors="replace") for arg in cmdline.read().split(b"\0")]
    except OSError:
        try:  # no /proc (macOS): ps
            line = subprocess.run(
                ["ps", "-p", str(pid), "-o", "command="], capture_output=True, text=True, timeout=5
            ).stdout
        except (OSError, subprocess.SubprocessError):
            return False
        args = line.split()
    names = ("phone-agent", "phone_agent.cli", "phone_agent", "phone_agent/cli.py")
    runs_us = any(arg == name or arg.endswith("/" + name) for arg in args for name in names)
    return runs_us and "serve" in args


def _wait_gone(host: str, port: int) -> bool:
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            sock.settimeout(0.5)
            if sock.connect_ex((connect_host(host).strip("[]"), port)) != 0:
                return True
        time.sleep(0.05)
    return False
