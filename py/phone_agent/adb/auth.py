"""ADB authentication as pluggable strategies, as Tango's ``AdbAuthenticator``: who answers AUTH.

``AdbConnection`` runs the AUTH handshake and asks its strategy what to do. On the host, a
``HostAuthenticator`` answers each TOKEN the device sends (``host.KeyAuthenticator`` signs with each
stored key, then offers the first key's public key once); on the device, a ``DeviceAuthenticator``
checks signatures and offered keys (the simulated adbd's trusted keys and "Allow USB debugging?").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from phone_agent.adb.keys import AdbPublicKey
from phone_agent.adb.packet import AuthType

__all__ = ["AuthAnswer", "DeviceAuthenticator", "HostAuthenticator"]


@dataclass(frozen=True, slots=True)
class AuthAnswer:
    """What a host sends for a token: ``AuthType.SIGNATURE`` or ``AuthType.RSAPUBLICKEY`` and its payload."""

    type: AuthType
    payload: bytes


class HostAuthenticator(Protocol):
    """The host's side of AUTH: answers each TOKEN the device sends."""

    key_name: str

    def answer(self, token: bytes) -> AuthAnswer | None:
        """The next thing to try (a signature, then the public key once), or None when nothing is left."""
        ...


class DeviceAuthenticator(Protocol):
    """The device's side of AUTH: which hosts may connect."""

    @property
    def required(self) -> bool:
        """False: a host is online as soon as it connects (adbd with auth off)."""
        ...

    def verify(self, token: bytes, signature: bytes) -> AdbPublicKey | None:
        """The trusted key that made ``signature`` over ``token``, or None."""
        ...

    def offer(self, key: AdbPublicKey) -> bool:
        """The host offered ``key``: True to accept it now, False to wait for the user (``authorize``)."""
        ...
