"""The shell runs loops, conditionals, substitutions, arithmetic and ``time`` as Android's mksh does
(``for i in 1 2 3; do echo $i; done`` prints 1 2 3, not "for: inaccessible or not found")."""

from __future__ import annotations

import re

import pytest

from tests.sim.shell.support import run


@pytest.mark.parametrize(
    ("line", "stdout"),
    [
        ("for i in 1 2 3; do echo $i; done", b"1\n2\n3\n"),
        ("for i in a b\ndo\n  echo x$i\ndone", b"xa\nxb\n"),
        ("i=0; while [ $i -lt 3 ]; do echo $i; i=$((i+1)); done", b"0\n1\n2\n"),
        ("n=3; until [ $n -eq 0 ]; do echo -n $n; n=$((n - 1)); done; echo", b"321\n"),
        ("if [ -d /sdcard ]; then echo dir; else echo no; fi", b"dir\n"),
        ("if false; then echo 1; elif test a = b; then echo 2; else echo 3; fi", b"3\n"),
        ('echo $(echo inner) `echo back` "$(echo  two   spaces)"', b"inner back two spaces\n"),
        ('x=$(getprop ro.x); echo "[$x]"', b"[getprop|ro.x]\n"),
        ("for w in $(echo a b c); do echo -n $w,; done; echo", b"a,b,c,\n"),
        ("echo $((3 * (2 + 4) / 4)) $((7 % 3)) $((-7 / 2)) $((1 < 2)) $((0x10))", b"4 1 -3 1 16\n"),
        ("for i in $(seq 5); do [ $i -eq 2 ] && continue; [ $i -eq 4 ] && break; echo $i; done", b"1\n3\n"),
        ("{ echo a; echo b; } | grep b", b"b\n"),
        ("echo done; echo for", b"done\nfor\n"),  # reserved words only where a command starts
        ('A=\'1 2\'; for v in $A "$A"; do echo "<$v>"; done', b"<1>\n<2>\n<1 2>\n"),
    ],
)
def test_compound_commands_and_expansions(sh, line, stdout):
    assert run(sh, line) == (stdout, b"", 0)


def test_compound_commands_take_redirections(sh):
    run(sh, "for i in 1 2; do echo $i; cat /nope; done > /sdcard/out 2>&1")
    assert sh.fs.read_file("/sdcard/out") == b"1\ncat: /nope: No such file or directory\n" * 1 + (
        b"2\ncat: /nope: No such file or directory\n"
    )
    assert run(sh, "{ echo a; echo b >&2; } 2>/dev/null") == (b"a\n", b"", 0)
    assert run(sh, "if true; then echo x; fi >> /sdcard/out; tail -n 1 /sdcard/out") == (b"x\n", b"", 0)


def test_time_reports_on_stderr_as_mksh_does(sh):
    out, err, code = run(sh, "time echo hi")
    assert (out, code) == (b"hi\n", 0)
    assert re.fullmatch(rb" +0m00\.\d\ds real +0m00\.00s user +0m00\.00s system\n", err), err


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("for i in 1 2; do echo $i", "'for' unmatched"),
        ("if true; then echo", "'if' unmatched"),
        ("done", "'done' unexpected"),
        ("while true; done", "'done' unexpected"),
    ],
)
def test_unfinished_compounds_are_syntax_errors(sh, line, message):
    assert run(sh, line) == (b"", f"/system/bin/sh: syntax error: {message}\n".encode(), 2)


def test_a_loop_that_never_ends_is_stopped(sh):
    out, err, code = run(sh, "while true; do :; done")
    assert (out, code) == (b"", 1) and b"loop stopped" in err


def test_arithmetic_errors_say_so(sh):
    assert run(sh, "echo $((1 / 0)); echo after") == (b"", b"/system/bin/sh: 1 / 0: zero divisor\n", 1)


@pytest.mark.adb
async def test_debian_adb_runs_a_for_loop_on_the_phone(sim, debian_adb, adb_serial):
    serial = adb_serial
    code, out, err = await debian_adb.run("-s", serial, "shell", "for i in 1 2 3; do echo $i; done")
    assert (code, out, err) == (0, b"1\n2\n3\n", b"")
    _, out, _ = await debian_adb.run(
        "-s", serial, "shell", 'n=0; for p in $(pm list packages); do n=$((n+1)); done; echo "$n"'
    )
    assert int(out) > 10
    code, out, err = await debian_adb.run("-s", serial, "shell", "time getprop ro.serialno")
    assert code == 0 and out.strip() == sim.serial.encode() and b" real " in err
