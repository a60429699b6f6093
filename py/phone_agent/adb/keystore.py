"""Where the host's ADB key lives: the ``KeyStore`` protocol, a JSON form of the key, a file store.

One RSA-2048 key per browser profile (or per user in CPython), created once, so the phone asks "Allow
USB debugging?" only the first time. The page keeps it in IndexedDB (the lead's adapter implements
``KeyStore``); CPython keeps it in ``$XDG_CONFIG_HOME/phone-agent/adbkey`` (mode 0600). Both store
the same bytes: ``key_to_json`` (a small JWK-like JSON: ``{"kty": "RSA", "n", "e", "d"}``, base64url
big-endian integers, the names of RFC 7517), so a key made with WebCrypto (``exportKey("jwk")``) can
be stored as is.
"""

from __future__ import annotations

import base64
import json
import os
from pathlib import Path
from typing import Protocol

from phone_agent.adb.keys import KEY_BITS, AdbKeyError, AdbPrivateKey, generate_private_key


class KeyStore(Protocol):
    """Load and save the host's private key as bytes (``key_to_json``'s encoding)."""

    async def load(self) -> bytes | None:
        """The stored key, or None when there is none yet."""
        ...

    async def save(self, data: bytes) -> None: ...


def _b64url_int(value: int) -> str:
    raw = value.to_bytes((value.bit_length() + 7) // 8 or 1, "big")
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _int_b64url(text: str) -> int:
    padded = text + "=" * (-len(text) % 4)
    return int.from_bytes(base64.urlsafe_b64decode(padded), "big")


def key_to_json(key: AdbPrivateKey) -> bytes:
    """The key as JWK-like JSON bytes (``kty``, ``n``, ``e``, ``d``)."""
    jwk = {"kty": "RSA", "n": _b64url_int(key.n), "e": _b64url_int(key.e), "d": _b64url_int(key.d)}
    return json.dumps(jwk, separators=(",", ":")).encode()


def key_from_json(data: bytes | str) -> AdbPrivateKey:
    """Parse ``key_to_json``'s output (or a WebCrypto RSA JWK); AdbKeyError when unusable."""
    try:
        jwk = json.loads(data)
        if jwk.get("kty") != "RSA":
            raise AdbKeyError(f"not an RSA key (kty {jwk.get('kty')!r})")
        key = AdbPrivateKey(_int_b64url(jwk["n"]), _int_b64url(jwk["d"]), _int_b64url(jwk["e"]))
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise AdbKeyError(f"the stored ADB key is unreadable: {exc}") from exc
    if key.n.bit_length() != KEY_BITS:
        raise AdbKeyError(f"the stored ADB key has {key.n.bit_length()} bits, adb needs {KEY_BITS}")
    check = 0x1234567
    if pow(pow(check, key.e, key.n), key.d, key.n) != check:
        raise AdbKeyError("the stored ADB key is inconsistent (d does not invert e)")
    return key


async def load_or_create_key(store: KeyStore) -> AdbPrivateKey:
    """The stored key; a new one (generated and saved) when there is none or it is unreadable."""
    data = await store.load()
    if data:
        try:
            return key_from_json(data)
        except AdbKeyError:
            pass  # replaced below: a broken key would fail every connection
    key = generate_private_key()
    await store.save(key_to_json(key))
    return key


def default_key_path() -> Path:
    """``$XDG_CONFIG_HOME/phone-agent/adbkey`` (``~/.config/…`` when unset)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "phone-agent" / "adbkey"


class FileKeyStore:
    """A ``KeyStore`` in one file, created with mode 0600 (its directory 0700)."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else default_key_path()

    async def load(self) -> bytes | None:
        try:
            return self.path.read_bytes()
        except FileNotFoundError:
            return None

    async def save(self, data: bytes) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = self.path.with_name(self.path.name + ".tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, data)
        finally:
            os.close(fd)
        os.chmod(temporary, 0o600)
        os.replace(temporary, self.path)


class MemoryKeyStore:
    """A ``KeyStore`` in memory (tests, or a page that must not persist)."""

    def __init__(self, data: bytes | None = None) -> None:
        self.data = data

    async def load(self) -> bytes | None:
        return self.data

    async def save(self, data: bytes) -> None:
        self.data = data
