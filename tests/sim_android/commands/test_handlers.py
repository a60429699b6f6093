"""The table of Android commands: which names the phone runs, and Android's answer to any other."""

from __future__ import annotations

from tests.sim_android.conftest import Harness


def test_command_names_cover_the_android_tools(h: Harness) -> None:
    names = h.phone.command_names()
    for name in (
        "getprop",
        "wm",
        "screencap",
        "input",
        "am",
        "monkey",
        "pm",
        "cmd",
        "ime",
        "settings",
        "dumpsys",
        "uiautomator",
    ):
        assert name in names
    assert "echo" not in names  # the shell's own


def test_unknown_command_name_is_127(h: Harness) -> None:
    result = h.run("frobnicate")
    assert result.exit_code == 127 and b"inaccessible or not found" in result.stderr


def test_ps_lists_the_shells_processes_and_with_a_all_androids_own_too(h: Harness) -> None:
    h.phone.processes[4242] = "app_process"
    mine = h.out("ps").splitlines()
    assert mine[0].split()[:2] == ["USER", "PID"]
    assert [line.split()[-1] for line in mine[1:]] == ["adbd", "app_process"]
    everything = [line.split()[-1] for line in h.out("ps", "-A").splitlines()[1:]]
    assert everything[:2] == ["init", "[kthreadd]"] and everything[-1] == "app_process"
