"""``phone-agent doctor``: each check passes and fails as the machine says, with how to fix it; the
command exits 0 when all pass, 1 otherwise, and prints JSON with ``--json``."""

from __future__ import annotations

import json
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from phone_agent.server.doctor import (
    ListedPhone,
    UsbPhone,
    adb_server,
    chrome_version,
    jars,
    page_paired,
    port_check,
    report_json,
    report_text,
    run_checks,
    usb_access,
    webmcp_flag,
)
from phone_agent.server.doctor_probe import LocalMachine
from tests.support import ROOT, DebianAdbServer, ServedPhoneAgent, free_port, phone_agent_command


@dataclass
class FakeMachine:
    """A machine where every check passes, each answer replaceable by a test."""

    versions: list[tuple[str, str]] = field(
        default_factory=lambda: [("/usr/bin/google-chrome", "Google Chrome 150.0.7000.1")]
    )
    flags: list[tuple[str, list[str]]] = field(
        default_factory=lambda: [("Chrome", ["enable-webmcp-testing@1"])]
    )
    devices: list[ListedPhone] | None = None
    is_linux: bool = True
    phones: list[UsbPhone] = field(default_factory=list)
    user_groups: set[str] = field(default_factory=lambda: {"plugdev"})
    holder: dict[str, object] | bool | None = field(
        default_factory=lambda: {"version": "0.1.0", "pagePaired": True}
    )
    root: Path = ROOT

    def browsers(self):
        return self.versions

    def browser_flags(self):
        return self.flags

    def adb_devices(self):
        return self.devices

    def linux(self):
        return self.is_linux

    def usb_phones(self):
        return self.phones

    def groups(self):
        return self.user_groups

    def port_holder(self, port):
        return self.holder

    def page_root(self):
        return self.root


def test_a_machine_where_everything_is_set_up_passes_every_check():
    results = run_checks(FakeMachine(), 7788)
    names = ["chrome", "webmcp", "adb-server", "usb-access", "port", "page", "jars"]
    assert [r.name for r in results] == names
    assert all(r.ok for r in results), results
    assert report_text(results).endswith("all checks passed")
    assert json.loads(report_json(results))["ok"] is True


def test_chrome_missing_or_too_old_fails_with_how_to_get_one():
    none = chrome_version(FakeMachine(versions=[]))
    assert not none.ok and "install Google Chrome 149" in none.fix
    old = chrome_version(FakeMachine(versions=[("chromium", "Chromium 140.0.1.2")]))
    assert not old.ok and "140.0.1.2" in old.detail and "149 or newer" in old.fix


def test_webmcp_off_or_disabled_fails_with_the_flag_to_turn_on():
    for flags in ([("Chrome", [])], [("Chrome", ["enable-webmcp-testing@2"])], []):
        result = webmcp_flag(FakeMachine(flags=flags))
        assert not result.ok and "chrome://flags/#enable-webmcp-testing" in result.fix, flags


def test_a_host_adb_server_holding_the_usb_phone_fails_and_says_adb_kill_server():
    held = adb_server(FakeMachine(devices=[ListedPhone("R58M123", "device", usb=True)]))
    assert not held.ok and "R58M123" in held.detail and "adb kill-server" in held.fix
    network = adb_server(FakeMachine(devices=[ListedPhone("127.0.0.1:5555", "device", usb=False)]))
    assert network.ok


def test_a_usb_phone_this_user_may_not_open_fails_with_a_udev_rule_and_plugdev():
    blocked = UsbPhone("Pixel 7", "/dev/bus/usb/001/004", "18d1", usable=False)
    result = usb_access(FakeMachine(phones=[blocked], user_groups=set()))
    assert not result.ok and "/dev/bus/usb/001/004" in result.detail
    assert 'ATTR{idVendor}=="18d1"' in result.fix and "usermod -aG plugdev" in result.fix
    member = usb_access(FakeMachine(phones=[blocked]))
    assert not member.ok and "usermod" not in member.fix  # already in plugdev: the rule alone
    assert usb_access(FakeMachine(phones=[UsbPhone("Pixel 7", "/dev/bus/usb/001/004", "18d1", True)])).ok
    assert usb_access(FakeMachine(phones=[blocked], is_linux=False)).ok


def test_a_port_held_by_something_else_fails_and_an_unpaired_server_says_how_to_pair():
    assert not port_check(FakeMachine(holder=None), 7788).ok
    assert port_check(FakeMachine(holder=False), 7788).ok
    unpaired = page_paired(FakeMachine(holder={"version": "0.1.0", "pagePaired": False}), 7788)
    assert not unpaired.ok and "`phone-agent url --port 7788`" in unpaired.fix
    no_server = page_paired(FakeMachine(holder=False), 7788)
    assert not no_server.ok and "phone-agent serve --port 7788" in no_server.fix


def test_missing_jars_fail_with_how_to_get_them(tmp_path: Path):
    result = jars(FakeMachine(root=tmp_path))
    assert not result.ok and "scrcpy-server" in result.detail and "u2.jar" in result.detail


def test_the_probes_read_this_machine_ports_and_pages(tmp_path: Path):
    machine = LocalMachine(root=tmp_path)
    free = free_port()
    assert machine.port_holder(free) is False
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        assert machine.port_holder(holder.getsockname()[1]) is None
    served = ServedPhoneAgent()
    try:
        identity = machine.port_holder(served.port)
        assert isinstance(identity, dict) and identity["pagePaired"] is False
        assert not page_paired(machine, served.port).ok
    finally:
        served.stop()
    assert not jars(machine).ok and jars(LocalMachine()).ok  # the checkout's vendored jars


async def test_the_adb_probe_reads_a_real_adb_server(tmp_path: Path, make_sim):
    adb = DebianAdbServer(tmp_path)
    try:
        machine = LocalMachine(adb_port=adb.port)
        assert machine.adb_devices() == []
        sim = await make_sim()
        await adb.output("connect", f"127.0.0.1:{sim.port}")
        await adb.wait_for_state(f"127.0.0.1:{sim.port}", "device")
        devices = machine.adb_devices()
        assert devices == [ListedPhone(f"127.0.0.1:{sim.port}", "device", usb=False)]
        assert adb_server(machine).ok
    finally:
        adb.stop()
    assert LocalMachine(adb_port=free_port()).adb_devices() is None


@pytest.mark.parametrize("as_json", [False, True])
def test_the_command_exits_1_when_a_check_fails_and_prints_each_fix(as_json: bool):
    port = free_port()  # no server there: the page check fails
    done = subprocess.run(
        [phone_agent_command(), "doctor", "--port", str(port), *(["--json"] if as_json else [])],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1
    if as_json:
        report = json.loads(done.stdout)
        page = next(check for check in report["checks"] if check["name"] == "page")
        assert report["ok"] is False and page["ok"] is False and "phone-agent serve" in page["fix"]
    else:
        assert "FAIL page:" in done.stdout and "fix: start one" in done.stdout
