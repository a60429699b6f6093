"""The shell's builtins (toybox's commands and messages), run by a shell session."""

from __future__ import annotations

from phone_agent.sim.shell.builtins import BUILTINS
from tests.sim.shell.support import run


def test_echo_is_a_function_of_the_session_argv_and_stdin(sh):
    assert BUILTINS["echo"](sh, ["echo", "-n", "a", "b"], None).stdout == b"a b"
    assert BUILTINS["cat"](sh, ["cat"], b"piped").stdout == b"piped"


def test_pipes_into_grep(sh):
    run(sh, "echo Apple > /sdcard/l; echo banana >> /sdcard/l; echo cherry >> /sdcard/l")
    assert run(sh, "cat /sdcard/l | grep an") == (b"banana\n", b"", 0)
    assert run(sh, "cat /sdcard/l | grep -v an") == (b"Apple\ncherry\n", b"", 0)
    assert run(sh, "cat /sdcard/l | grep -i apple") == (b"Apple\n", b"", 0)
    assert run(sh, "cat /sdcard/l | grep -E 'ch(e|x)rry|Ap+le'") == (b"Apple\ncherry\n", b"", 0)
    assert run(sh, "cat /sdcard/l | grep -c e") == (b"2\n", b"", 0)
    assert run(sh, "cat /sdcard/l | grep zzz") == (b"", b"", 1)
    assert run(sh, "getprop ro.x | grep getprop") == (b"getprop|ro.x\n", b"", 0)


def test_file_builtins(sh):
    assert run(sh, "mkdir /sdcard/a/b")[2] == 1
    assert run(sh, "mkdir -p /sdcard/a/b && touch /sdcard/a/b/f && ls /sdcard/a/b") == (b"f\n", b"", 0)
    assert b"No such file" in run(sh, "ls /nope")[1]
    assert run(sh, "rm /sdcard/a")[2] == 1
    assert run(sh, "rm -r /sdcard/a && ls /sdcard/a")[2] == 1
    assert run(sh, "rm -f /sdcard/never")[2] == 0
    listing = run(sh, "ls -la /data/local")[0].decode()
    assert listing.splitlines()[1].startswith("drwx") and listing.rstrip().endswith("tmp")


def test_small_toybox_commands(sh):
    sh.fs.write_file("/sdcard/n", b"".join(f"{i}\n".encode() for i in range(1, 21)))
    assert run(sh, "head -n 2 /sdcard/n; tail -1 /sdcard/n; cat /sdcard/n | wc -l")[0] == b"1\n2\n20\n20\n"
    assert run(sh, "export X=1; echo $X")[0] == b"1\n"
    assert run(sh, "exec echo replaced")[0] == b"replaced\n"
    assert run(sh, "which ls getprop nosuch") == (b"/system/bin/ls\n/system/bin/getprop\n", b"", 1)
    assert run(sh, "id")[0].startswith(b"uid=2000(shell)")
    assert run(sh, "sleep 0.01 && echo ok")[0] == b"ok\n"
    # What `adb logcat` sends: it must end, not stream forever.
    assert b"beginning of main" in run(sh, 'export ANDROID_LOG_TAGS=""; exec logcat')[0]


def test_sh_runs_a_line_in_a_subshell_that_keeps_the_working_directory_but_not_its_own(sh):
    assert run(sh, "cd /sdcard; sh -c 'pwd; cd /'; pwd") == (b"/sdcard\n/sdcard\n", b"", 0)
    assert run(sh, "export X=1; sh -c 'echo $X'")[0] == b"1\n"
    assert run(sh, "echo echo from stdin | sh")[0] == b"from stdin\n"
    assert run(sh, "sh /nowhere") == (b"", b"/system/bin/sh: /nowhere: can't open\n", 127)
