"""Where phone-agent keeps what must outlive one process, and the secrets kept there.

- The config directory holds the bearer token of ``/mcp`` (``token``), the token of the page's link
  (``page-token``: the browser that opens the link is the user's, see ``pairing.PageKey``; a secret of
  its own, so that the link printed on the console never carries the bearer token) and the relay's
  pairing secret (``pairing-secret``), each a file of mode 0600 in a directory of mode 0700.
- The state directory holds the log of a server started in the background and a record of each running
  server (``server-PORT.json``: pid, port, version), which ``phone-agent stop`` falls back on.

``PHONE_AGENT_HOME`` puts both under one directory (``config/`` and ``state/``; tests use it); otherwise
they follow the XDG base directories (``~/.config/phone-agent``, ``~/.local/state/phone-agent``).
``PHONE_AGENT_TOKEN`` replaces the token file. Secrets are never logged.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import secrets
from pathlib import Path
from typing import Any

HOME_ENV = "PHONE_AGENT_HOME"
TOKEN_ENV = "PHONE_AGENT_TOKEN"
TOKEN_FILE = "token"
PAIRING_FILE = "pairing-secret"
PAGE_TOKEN_FILE = "page-token"
# 32 bytes of secrets.token_urlsafe: 256 bits, well above the 128 asked for.
SECRET_BYTES = 32


def config_dir() -> Path:
    """The user's phone-agent config directory (not created here)."""
    home = os.environ.get(HOME_ENV, "").strip()
    if home:
        return Path(home) / "config"
    base = os.environ.get("XDG_CONFIG_HOME", "").strip()
    return (Path(base) if base else Path.home() / ".config") / "phone-agent"


def state_dir() -> Path:
    """The user's phone-agent state directory (logs, running servers; not created here)."""
    home = os.environ.get(HOME_ENV, "").strip()
    if home:
        return Path(home) / "state"
    base = os.environ.get("XDG_STATE_HOME", "").strip()
    return (Path(base) if base else Path.home() / ".local" / "state") / "phone-agent"


def private_dir(path: Path) -> Path:
    """``path`` created if missing, mode 0700 (its parents with the default mode)."""
    path.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        path.chmod(0o700)
    return path


def _write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` atomically, readable by the owner only from the first byte."""
    private_dir(path.parent)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as file:
            file.write(text + "\n")
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def _read_or_create(name: str) -> str:
    path = config_dir() / name
    with contextlib.suppress(FileNotFoundError):
        value = path.read_text().strip()
        if value:
            return value
    value = secrets.token_urlsafe(SECRET_BYTES)
    # Two processes starting at once must agree: the first file written wins, the other reads it.
    private_dir(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        existing = path.read_text().strip()
        if existing:
            return existing
        _write_private(path, value)
        return value
    with os.fdopen(fd, "w") as file:
        file.write(value + "\n")
    return value


def token_from_environment() -> str | None:
    value = os.environ.get(TOKEN_ENV, "").strip()
    return value or None


def load_token() -> str:
    """The bearer token of ``/mcp``: ``PHONE_AGENT_TOKEN``, else the config file (made on first use)."""
    return token_from_environment() or _read_or_create(TOKEN_FILE)


def rotate_token() -> str:
    """A new token in the config file (a running server keeps the old one until it restarts)."""
    value = secrets.token_urlsafe(SECRET_BYTES)
    _write_private(config_dir() / TOKEN_FILE, value)
    return value


def load_page_token() -> str:
    """The token of the page's link (``phone-agent url``), made on first use; valid until rotated."""
    return _read_or_create(PAGE_TOKEN_FILE)


def rotate_page_token() -> str:
    """A new page link token (a running server keeps the old one until it restarts)."""
    value = secrets.token_urlsafe(SECRET_BYTES)
    _write_private(config_dir() / PAGE_TOKEN_FILE, value)
    return value


def load_pairing_secret() -> str:
    """The secret a page must show the relay; kept, so that a page paired by code stays paired."""
    return _read_or_create(PAIRING_FILE)


def same_secret(given: str | None, expected: str) -> bool:
    """Constant-time comparison of a presented secret with the expected one."""
    if given is None:
        return False
    return hmac.compare_digest(given.encode("utf-8", "surrogateescape"), expected.encode())


# -- records of running servers ---------------------------------------------------------------------


def server_record_path(port: int) -> Path:
    return state_dir() / f"server-{port}.json"


def write_server_record(port: int, record: dict[str, Any]) -> Path:
    path = server_record_path(port)
    _write_private(path, json.dumps(record))
    return path


def read_server_record(port: int) -> dict[str, Any] | None:
    try:
        record = json.loads(server_record_path(port).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def remove_server_record(port: int, pid: int) -> None:
    """Remove the record of ``port`` if it is still this process's (a newer server may own it now)."""
    record = read_server_record(port)
    if record is not None and record.get("pid") == pid:
        with contextlib.suppress(OSError):
            server_record_path(port).unlink()


def background_log_path(port: int) -> Path:
    return state_dir() / f"server-{port}.log"
