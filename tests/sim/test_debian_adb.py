"""Debian's real adb (its own server, its own key) against the simulated phone."""

from __future__ import annotations

import asyncio
import io
import json
import os
import re
import struct
import urllib.request
from xml.etree import ElementTree

import pytest
from PIL import Image

from phone_agent.sim.state_http import StateClient

pytestmark = pytest.mark.adb


async def shell(debian_adb, serial: str, *args: str) -> tuple[int, bytes, bytes]:
    return await debian_adb.run("-s", serial, "shell", *args)


async def test_connect_shows_device_with_banner_properties(debian_adb, adb_serial):
    _code, out, _ = await debian_adb.run("devices", "-l")
    line = next(line for line in out.decode().splitlines() if line.startswith(adb_serial))
    assert " device " in line
    assert "model:Pixel_7" in line or "model:" in line
    assert "device:" in line and "product:" in line


async def test_getprop_model(sim, debian_adb, adb_serial):
    code, out, _ = await shell(debian_adb, adb_serial, "getprop", "ro.product.model")
    assert code == 0
    assert out.decode().strip() == sim.phone.props["ro.product.model"]


async def test_exit_codes_travel_through_shell_v2(debian_adb, adb_serial):
    assert (await shell(debian_adb, adb_serial, "false"))[0] == 1
    assert (await shell(debian_adb, adb_serial, "true"))[0] == 0
    assert (await shell(debian_adb, adb_serial, "exit 3"))[0] == 3


async def test_command_lists_redirection_and_pipes(debian_adb, adb_serial):
    code, out, _ = await shell(debian_adb, adb_serial, "echo hi && false || echo fallback")
    assert (code, out) == (0, b"hi\nfallback\n")
    code, out, _ = await shell(
        debian_adb,
        adb_serial,
        "echo one > /data/local/tmp/f; echo two >> /data/local/tmp/f; cat /data/local/tmp/f",
    )
    assert out == b"one\ntwo\n"
    code, out, _ = await shell(debian_adb, adb_serial, "cat /data/local/tmp/f | grep -v one")
    assert out == b"two\n"
    code, out, err = await shell(debian_adb, adb_serial, "cat /nope 2>/dev/null; echo $?")
    assert (out, err) == (b"1\n", b"")


async def test_shell_joins_arguments_like_ssh_and_exec_out_quotes_each(debian_adb, adb_serial):
    # adb 29 sends `shell:` arguments joined by spaces, unescaped (like ssh); the device's sh parses them.
    _code, out, _ = await shell(debian_adb, adb_serial, "echo", "'a  b'", '"c  d"')
    assert out == b"a  b c  d\n"
    # exec-out single-quotes each argument.
    _code, out, _ = await debian_adb.run("-s", adb_serial, "exec-out", "echo", "a  b", "it's")
    assert out == b"a  b it's\n"


async def test_unknown_command_answers_like_android_sh(debian_adb, adb_serial):
    code, _out, err = await shell(debian_adb, adb_serial, "frobnicate")
    assert code == 127
    assert err == b"/system/bin/sh: frobnicate: inaccessible or not found\n"


async def test_push_pull_16_mib_round_trips(debian_adb, adb_serial, tmp_path):
    data = os.urandom(16 * 1024 * 1024)
    (tmp_path / "in.bin").write_bytes(data)
    code, _, err = await debian_adb.run(
        "-s", adb_serial, "push", str(tmp_path / "in.bin"), "/sdcard/Download/x.bin"
    )
    assert code == 0, err
    code, out, _ = await shell(debian_adb, adb_serial, "ls", "-l", "/sdcard/Download/x.bin")
    assert str(len(data)).encode() in out
    code, _, err = await debian_adb.run(
        "-s", adb_serial, "pull", "/sdcard/Download/x.bin", str(tmp_path / "out.bin")
    )
    assert code == 0, err
    assert (tmp_path / "out.bin").read_bytes() == data


async def test_push_creates_missing_directories_and_pull_of_missing_file_fails(
    debian_adb, adb_serial, tmp_path
):
    (tmp_path / "a.txt").write_bytes(b"hello")
    code, _, err = await debian_adb.run(
        "-s", adb_serial, "push", str(tmp_path / "a.txt"), "/sdcard/new/dir/a.txt"
    )
    assert code == 0, err
    assert (await shell(debian_adb, adb_serial, "cat", "/sdcard/new/dir/a.txt"))[1] == b"hello"
    code, out, err = await debian_adb.run("-s", adb_serial, "pull", "/sdcard/missing", str(tmp_path / "m"))
    assert code != 0 and b"No such file" in out + err, out + err


async def test_exec_out_screencap_is_a_1080x2400_png(debian_adb, adb_serial):
    code, png, _ = await debian_adb.run("-s", adb_serial, "exec-out", "screencap", "-p")
    assert code == 0 and png.startswith(b"\x89PNG\r\n\x1a\n")
    assert struct.unpack(">II", png[16:24]) == (1080, 2400)
    assert Image.open(io.BytesIO(png)).size == (1080, 2400)


async def dump_nodes(debian_adb, serial: str) -> list[dict[str, str]]:
    """The nodes of a fresh ``uiautomator dump``, read back with ``cat`` (as an agent does)."""
    code, _, err = await shell(debian_adb, serial, "uiautomator", "dump", "/sdcard/window_dump.xml")
    assert code == 0, err
    _, xml, _ = await shell(debian_adb, serial, "cat", "/sdcard/window_dump.xml")
    return [dict(node.attrib) for node in ElementTree.fromstring(xml).iter("node")]


def center(node: dict[str, str]) -> tuple[str, str]:
    x1, y1, x2, y2 = map(int, re.fullmatch(r"\[(\d+),(\d+)\]\[(\d+),(\d+)\]", node["bounds"]).groups())
    return str((x1 + x2) // 2), str((y1 + y2) // 2)


async def clickable_center(debian_adb, serial: str) -> tuple[str, str]:
    """The centre of the first clickable node of a fresh UI dump (the screen's centre if none)."""
    for node in await dump_nodes(debian_adb, serial):
        if node.get("clickable") == "true" and node.get("bounds"):
            return center(node)
    return "540", "1200"


async def test_tap_changes_the_next_screenshot(sim, debian_adb, adb_serial):
    x, y = await clickable_center(debian_adb, adb_serial)
    _, before, _ = await debian_adb.run("-s", adb_serial, "exec-out", "screencap", "-p")
    code, _, err = await shell(debian_adb, adb_serial, "input", "tap", x, y)
    assert code == 0, err
    _, after, _ = await debian_adb.run("-s", adb_serial, "exec-out", "screencap", "-p")
    assert Image.open(io.BytesIO(before)).tobytes() != Image.open(io.BytesIO(after)).tobytes()


async def test_uiautomator_dump_then_pull(debian_adb, adb_serial, tmp_path):
    code, _out, err = await shell(debian_adb, adb_serial, "uiautomator", "dump", "/sdcard/window_dump.xml")
    assert code == 0, err
    code, _, err = await debian_adb.run(
        "-s", adb_serial, "pull", "/sdcard/window_dump.xml", str(tmp_path / "d.xml")
    )
    assert code == 0, err
    assert b"<hierarchy" in (tmp_path / "d.xml").read_bytes()


async def test_prompt_mode_is_unauthorized_until_approved(debian_adb, make_sim):
    sim = await make_sim("prompt")
    serial = f"127.0.0.1:{sim.port}"
    try:
        await debian_adb.run("connect", serial)
        assert await debian_adb.wait_for_state(serial, "unauthorized") == "unauthorized"
        assert len(sim.pending_keys()) == 1

        def approve() -> dict:
            request = urllib.request.Request(
                f"http://127.0.0.1:{sim.control_port}/auth/approve", data=b"{}", method="POST"
            )
            with urllib.request.urlopen(request, timeout=5) as response:
                return json.load(response)

        approved = await asyncio.to_thread(approve)
        assert len(approved["approved"]) == 1
        assert await debian_adb.wait_for_state(serial, "device") == "device"
        assert (await shell(debian_adb, serial, "echo", "ok"))[1] == b"ok\n"
    finally:
        await debian_adb.run("disconnect", serial)


async def test_send_a_message_through_adb_and_read_it_on_the_control_endpoint(sim, debian_adb, adb_serial):
    launch = (
        "monkey",
        "-p",
        "com.google.android.apps.messaging",
        "-c",
        "android.intent.category.LAUNCHER",
        "1",
    )
    assert (await shell(debian_adb, adb_serial, *launch))[0] == 0
    nodes = await dump_nodes(debian_adb, adb_serial)
    await shell(
        debian_adb, adb_serial, "input", "tap", *center(next(n for n in nodes if n["text"] == "Zhang San"))
    )
    nodes = await dump_nodes(debian_adb, adb_serial)
    field = next(n for n in nodes if n["class"] == "android.widget.EditText")
    await shell(debian_adb, adb_serial, "input", "tap", *center(field))
    await shell(debian_adb, adb_serial, "input", "text", "See%syou%sat%s7")
    nodes = await dump_nodes(debian_adb, adb_serial)
    send = next(n for n in nodes if "send" in n["resource-id"].lower() and n["clickable"] == "true")
    await shell(debian_adb, adb_serial, "input", "tap", *center(send))
    phone = await asyncio.to_thread(StateClient(sim.control_port).phone_state)
    assert {"to": "Zhang San", "text": "See you at 7"} in phone["sent"]


async def test_stdin_through_shell_v2_and_exec_in(debian_adb, adb_serial):
    data = os.urandom(200_000)
    code, _, err = await debian_adb.run("-s", adb_serial, "shell", "cat > /data/local/tmp/in.bin", stdin=data)
    assert code == 0, err
    code, _, err = await debian_adb.run(
        "-s", adb_serial, "exec-in", "cat > /data/local/tmp/in2.bin", stdin=data
    )
    assert code == 0, err
    for path in ("/data/local/tmp/in.bin", "/data/local/tmp/in2.bin"):
        assert (await debian_adb.run("-s", adb_serial, "exec-out", "cat", path))[1] == data


async def test_commands_from_stdin_without_a_terminal(debian_adb, adb_serial):
    code, out, _ = await debian_adb.run("-s", adb_serial, "shell", stdin=b"echo from stdin\nexit 5\n")
    assert (code, out) == (5, b"from stdin\n")


async def test_first_connect_succeeds_with_this_computers_key(make_sim, debian_adb, monkeypatch):
    """A sim in accept mode knows the local user's adb key (as a phone paired with this computer):
    the first ``adb connect`` says "connected to", not "failed to authenticate"."""
    assert (debian_adb.home / ".android" / "adbkey.pub").exists()
    monkeypatch.setenv("HOME", str(debian_adb.home))  # the sim and adb: one user, one key
    for name in ("ANDROID_USER_HOME", "ANDROID_SDK_HOME"):
        monkeypatch.delenv(name, raising=False)
    sim = await make_sim(auth="accept")
    serial = f"127.0.0.1:{sim.port}"
    try:
        _code, out, _ = await debian_adb.run("connect", serial)
        assert out.decode().strip() == f"connected to {serial}"
        assert await debian_adb.wait_for_state(serial, "device") == "device"
        assert len(sim.trusted_keys) == 1
    finally:
        await debian_adb.run("disconnect", serial)


async def test_prompt_mode_does_not_trust_this_computers_key(make_sim, debian_adb, monkeypatch):
    monkeypatch.setenv("HOME", str(debian_adb.home))
    sim = await make_sim(auth="prompt")
    serial = f"127.0.0.1:{sim.port}"
    try:
        await debian_adb.run("connect", serial)
        assert await debian_adb.wait_for_state(serial, "unauthorized") == "unauthorized"
        assert not sim.trusted_keys
    finally:
        await debian_adb.run("disconnect", serial)
