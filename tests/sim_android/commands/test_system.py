"""`getprop`, `wm`, `ime`, `settings`: properties, display, input methods, settings, as Android prints."""

from __future__ import annotations

import re

from phone_agent.sim.android.phone import VirtualPhone
from tests.sim_android.conftest import Harness


def test_getprop_all_is_sorted_bracketed_lines(h: Harness) -> None:
    lines = h.out("getprop").splitlines()
    assert all(re.fullmatch(r"\[[^\]]+\]: \[[^\]]*\]", line) for line in lines)
    keys = [line.split("]")[0][1:] for line in lines]
    assert keys == sorted(keys)
    assert "[ro.product.model]: [Pixel 7]" in lines
    assert "[ro.build.version.sdk]: [34]" in lines


def test_getprop_by_key_and_unknown_key() -> None:
    phone = VirtualPhone(serial="SIM42")
    run = lambda *a: phone.run(list(a), b"", None).stdout  # noqa: E731 - the store is unused
    assert run("getprop", "ro.product.model") == b"Pixel 7\n"
    assert run("getprop", "ro.product.brand") == b"google\n"
    assert run("getprop", "ro.product.manufacturer") == b"Google\n"
    assert run("getprop", "ro.product.name") == b"phone_agent_sim\n"
    assert run("getprop", "ro.build.version.release") == b"14\n"
    assert run("getprop", "ro.serialno") == b"SIM42\n"
    assert run("getprop", "no.such.key") == b"\n"
    assert phone.serial == "SIM42" and phone.props["ro.serialno"] == "SIM42"


def test_wm_size_and_density(h: Harness) -> None:
    assert h.out("wm", "size") == "Physical size: 1080x2400\n"
    assert h.out("wm", "density") == "Physical density: 420\n"


def test_ime_lists_adbkeyboard(h: Harness) -> None:
    assert "com.android.adbkeyboard/.AdbIME" in h.out("ime", "list", "-s").splitlines()
    assert h.out("settings", "get", "secure", "default_input_method") == "com.android.adbkeyboard/.AdbIME\n"


def test_settings_get_put(h: Harness) -> None:
    assert h.out("settings", "get", "global", "wifi_on") == "1\n"
    assert h.out("settings", "get", "global", "bluetooth_on") == "0\n"
    h.out("settings", "put", "global", "bluetooth_on", "1")
    assert h.phone.state()["bluetooth"] is True
    assert h.out("settings", "get", "system", "no_such_key") == "null\n"
