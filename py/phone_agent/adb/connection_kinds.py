"""The kinds of connection the page holds a phone by — USB, a network adbd, the host's adb server, the
simulated phone — each saying what names the phone, what the phone reports as its transport, and how
a dropped connection comes back.

One table, ``CONNECTION_KINDS``: the page's phone panel (``browser/phone.py``) opens and reconnects a
phone by its kind's entry, and ``?device=NAME:TARGET`` (and the server's default phone) is read by it.
Every kind reconnects by itself after a drop; only the Disconnect button or another phone forgets it.
Pure: no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum


class Reconnect(Enum):
    """How a dropped connection of a kind comes back by itself."""

    # USB: when the browser lists the phone again (its ``connect`` event): nothing to retry before.
    WHEN_PLUGGED_IN = "when plugged in again"
    # Over the server's bridge: the same target again, after a wait that grows (``reconnect_delays``).
    SAME_TARGET = "the same target, with backoff"
    # The server's simulated phone: ask the server where it is now (it may have restarted and started
    # another), then connect there, with the same backoff.
    ASK_THE_SERVER = "where the server says, with backoff"


@dataclass(frozen=True)
class ConnectionKind:
    """One kind of connection: ``name`` (``?device=NAME:TARGET``), ``title`` (what the page calls it),
    ``target`` (what names the phone in it), ``transport`` (get_device_status's ``transport``), how it
    reconnects, and whether a ``?device=`` may name it (a USB phone needs the person's choice; the
    simulated phone is asked of the server)."""

    name: str
    title: str
    target: str
    transport: str
    reconnect: Reconnect
    in_device_spec: bool


USB = ConnectionKind("usb", "USB phone", "SERIAL", "usb", Reconnect.WHEN_PLUGGED_IN, in_device_spec=False)
NETWORK = ConnectionKind(
    "tcp", "network adbd", "HOST:PORT", "tcp", Reconnect.SAME_TARGET, in_device_spec=True
)
ADB_SERVER = ConnectionKind(
    "adb-server", "adb server", "SERIAL", "adb-server", Reconnect.SAME_TARGET, in_device_spec=True
)
SIMULATED = ConnectionKind(
    "sim", "simulated phone", "HOST:PORT", "tcp", Reconnect.ASK_THE_SERVER, in_device_spec=False
)

CONNECTION_KINDS: dict[str, ConnectionKind] = {
    kind.name: kind for kind in (USB, NETWORK, ADB_SERVER, SIMULATED)
}

RECONNECT_FIRST_S = 0.5  # the first try after a drop; each failed try doubles the wait…
RECONNECT_MAX_S = 8.0  # …up to this


def reconnect_delay_s(failures: int) -> float:
    """How long to wait after ``failures`` failed tries in a row: 0.5 s, 1 s, 2 s … at most 8 s."""
    return min(RECONNECT_FIRST_S * 2 ** min(max(failures - 1, 0), 8), RECONNECT_MAX_S)


def parse_device_spec(spec: str) -> tuple[ConnectionKind, str]:
    """``tcp:HOST:PORT`` → (NETWORK, "HOST:PORT"); ``adb-server:SERIAL`` → (ADB_SERVER, SERIAL)."""
    name, sep, rest = spec.partition(":")
    kind = CONNECTION_KINDS.get(name)
    if not sep or kind is None or not kind.in_device_spec or not rest:
        named = " or ".join(f"{k.name}:{k.target}" for k in CONNECTION_KINDS.values() if k.in_device_spec)
        raise ValueError(f"unknown device {spec!r}: use {named}")
    return kind, rest
