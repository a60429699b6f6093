"""The host end of an ADB connection: ``AdbConnection`` on ``Side.HOST`` with key authentication.

The protocol itself lives in ``connection.py`` (both ends; its events in ``events.py``, its streams
in ``streams.py``); this module adds what only a host has: ``KeyAuthenticator``, the
``auth.HostAuthenticator`` strategy that answers the device's AUTH tokens with a signature per stored
key, then the first key's public key once (the phone shows "Allow USB debugging?": the core reports
``AuthPromptShown``), and ``AdbHostProtocol``, the core set up as a host with the features this host
implements. ``client.AdbClient`` is its asyncio driver.
"""

from __future__ import annotations

from phone_agent.adb.auth import AuthAnswer
from phone_agent.adb.connection import AdbConnection, Side
from phone_agent.adb.keys import AdbPrivateKey
from phone_agent.adb.packet import MAX_PAYLOAD, VERSION, AdbPacket, AuthType, command_name

__all__ = ["DEFAULT_KEY_NAME", "HOST_FEATURES", "AdbHostProtocol", "KeyAuthenticator", "describe_packet"]

# What this host implements (shell protocol, stat/list v2, mkdir on push, delayed ack). A feature is
# used only when the device lists it too.
HOST_FEATURES = ("shell_v2", "stat_v2", "ls_v2", "fixed_push_mkdir", "delayed_ack")
DEFAULT_KEY_NAME = "phone-agent@browser"


class KeyAuthenticator:
    """Answers AUTH tokens with each stored key's signature in turn, then the first key's public key once."""

    def __init__(self, keys: list[AdbPrivateKey] | tuple[AdbPrivateKey, ...], key_name: str) -> None:
        self.keys = list(keys)
        self.key_name = key_name
        self._key_index = 0
        self._public_key_sent = False

    def answer(self, token: bytes) -> AuthAnswer | None:
        if self._key_index < len(self.keys):
            key = self.keys[self._key_index]
            self._key_index += 1
            return AuthAnswer(AuthType.SIGNATURE, key.sign(token))
        if self._public_key_sent or not self.keys:
            return None
        self._public_key_sent = True
        return AuthAnswer(AuthType.RSAPUBLICKEY, self.keys[0].public_key(self.key_name).encode())


class AdbHostProtocol(AdbConnection):
    """One host-side ADB connection. Call ``connect()`` first, then feed it what the device sends."""

    def __init__(
        self,
        keys: list[AdbPrivateKey] | tuple[AdbPrivateKey, ...] = (),
        *,
        key_name: str = DEFAULT_KEY_NAME,
        features: tuple[str, ...] | list[str] = HOST_FEATURES,
        version: int = VERSION,
        max_payload: int = MAX_PAYLOAD,
    ) -> None:
        super().__init__(
            Side.HOST,
            features=features,
            host_auth=KeyAuthenticator(keys, key_name),
            version=version,
            max_payload=max_payload,
        )

    @property
    def device_banner(self) -> str:
        return self.peer_banner


def describe_packet(packet: AdbPacket) -> str:
    """A one-line summary for logs."""
    return f"{command_name(packet.command)}({packet.arg0}, {packet.arg1}, {len(packet.payload)} bytes)"
