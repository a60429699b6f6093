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


def test_kill_ends_what_the_shell_started_and_refuses_androids_own(h: Harness) -> None:
    stopped: list[int] = []
    h.phone.processes[4242] = "app_process"
    h.phone.process_stoppers[4242] = lambda: stopped.append(4242)
    assert h.run("kill", "4242").exit_code == 0 and stopped == [4242]
    assert h.run("kill", "-9", "4242").exit_code == 0 and h.run("kill", "-s", "TERM", "4242").exit_code == 0
    refused = h.run("kill", "1")
    assert (refused.exit_code, refused.stderr) == (1, b"kill: 1: Operation not permitted\n")
    gone = h.run("kill", "31337")
    assert (gone.exit_code, gone.stderr) == (1, b"kill: 31337: No such process\n")
    assert h.run("kill", "abc").stderr == b"kill: bad pid 'abc'\n"
    assert h.run("kill").exit_code == 1
