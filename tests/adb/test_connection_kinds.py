"""The kinds of connection the page holds a phone by, and how each comes back after a drop."""

from __future__ import annotations

import pytest

from phone_agent.adb.connection_kinds import (
    ADB_SERVER,
    CONNECTION_KINDS,
    NETWORK,
    SIMULATED,
    USB,
    Reconnect,
    parse_device_spec,
    reconnect_delay_s,
)


def test_every_kind_reconnects_by_itself_and_the_four_are_there() -> None:
    assert list(CONNECTION_KINDS) == ["usb", "tcp", "adb-server", "sim"]
    assert {kind.reconnect for kind in CONNECTION_KINDS.values()} == set(Reconnect)
    assert USB.reconnect is Reconnect.WHEN_PLUGGED_IN  # nothing to retry until it is plugged in
    assert NETWORK.reconnect is ADB_SERVER.reconnect is Reconnect.SAME_TARGET
    assert SIMULATED.reconnect is Reconnect.ASK_THE_SERVER  # a restarted server runs another one
    # What get_device_status says: the simulated phone is a network adbd to the phone.
    assert [kind.transport for kind in CONNECTION_KINDS.values()] == ["usb", "tcp", "adb-server", "tcp"]


def test_the_wait_between_tries_doubles_up_to_eight_seconds() -> None:
    assert [reconnect_delay_s(n) for n in range(1, 8)] == [0.5, 1, 2, 4, 8, 8, 8]
    assert reconnect_delay_s(10_000) == 8


def test_a_device_spec_names_a_network_adbd_or_a_phone_of_the_adb_server_only() -> None:
    assert parse_device_spec("tcp:127.0.0.1:5555") == (NETWORK, "127.0.0.1:5555")
    assert parse_device_spec("adb-server:emulator-5554") == (ADB_SERVER, "emulator-5554")
    for refused in ("usb:1", "sim:127.0.0.1:5555", "tcp:", "tcp", "bluetooth:x"):
        with pytest.raises(ValueError, match="use tcp:HOST:PORT or adb-server:SERIAL"):
            parse_device_spec(refused)
