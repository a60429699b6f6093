"""What an ADB connection reports: the events ``AdbConnection.events_received`` returns.

Plain frozen dataclasses, the same on both sides (``Side.HOST`` and ``Side.DEVICE``); a driver acts
on them (``client.AdbClient`` on the host, ``sim/connection.py`` on the device). The handshake
reports ``AuthPromptShown``, ``Connected`` and ``ConnectionReset``; the streams (``streams.py``)
report ``StreamRequested``, ``StreamOpened``, ``StreamData`` and ``StreamClosed``; any packet that
had no effect is reported as ``PacketIgnored``, never dropped in silence.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "AuthPromptShown",
    "Connected",
    "ConnectionReset",
    "Event",
    "PacketIgnored",
    "StreamClosed",
    "StreamData",
    "StreamOpened",
    "StreamRequested",
]


@dataclass(frozen=True, slots=True)
class AuthPromptShown:
    """Our public key was sent: the user must accept "Allow USB debugging?" on the phone."""

    key_name: str


@dataclass(frozen=True, slots=True)
class Connected:
    """The handshake is done. ``features`` are those both sides list; ``properties`` the peer's banner's."""

    version: int
    max_payload: int
    banner: str
    peer_features: frozenset[str]
    features: frozenset[str]
    properties: dict[str, str] = field(hash=False, compare=False)


@dataclass(frozen=True, slots=True)
class StreamRequested:
    """(Device) the host asks for ``service``: answer with ``accept(remote_id)`` or ``refuse(remote_id)``."""

    remote_id: int
    service: str


@dataclass(frozen=True, slots=True)
class StreamOpened:
    local_id: int


@dataclass(frozen=True, slots=True)
class StreamData:
    """Bytes for a stream; answer them with ``acknowledge(local_id, len(data))`` once taken."""

    local_id: int
    data: bytes


@dataclass(frozen=True, slots=True)
class StreamClosed:
    """The peer closed the stream (or the connection went); ``refused`` when it never opened."""

    local_id: int
    refused: bool


@dataclass(frozen=True, slots=True)
class ConnectionReset:
    """(Device) the host started over (a new CNXN, an unknown AUTH type): every stream is gone."""

    reason: str


@dataclass(frozen=True, slots=True)
class PacketIgnored:
    """A packet that had no effect here, and why (wrong state, unknown stream, bad payload…)."""

    command: int
    arg0: int
    arg1: int
    reason: str


Event = (
    AuthPromptShown
    | Connected
    | StreamRequested
    | StreamOpened
    | StreamData
    | StreamClosed
    | ConnectionReset
    | PacketIgnored
)
