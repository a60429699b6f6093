"""The simulated phone's sh: quoting, lists, pipes, redirections, builtins and Android's error texts."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from phone_agent.sim.android import ShellResult
from phone_agent.sim.shell import Shell, ShellSyntaxError, tokenize
from phone_agent.sim.vfs import VirtualFileSystem


class EchoPhone:
    def command_names(self) -> frozenset[str]:
        return frozenset({"getprop"})

    def run(self, argv, stdin, fs) -> ShellResult:
        return ShellResult(stdout=("|".join(argv) + "\n").encode())


@pytest.fixture
def sh() -> Shell:
    return Shell(VirtualFileSystem(), EchoPhone())


def run(sh: Shell, line: str) -> tuple[bytes, bytes, int]:
    result = sh.run(line)
    return result.stdout, result.stderr, result.exit_code


def test_posix_quoting_as_adb_exec_out_sends_it(sh):
    assert run(sh, "echo 'a  b' \"c  $?\" d\\ e 'it'\\''s'") == (b"a  b c  0 d e it's\n", b"", 0)


def test_and_or_lists_and_exit_status(sh):
    assert run(sh, "echo hi && false || echo fallback") == (b"hi\nfallback\n", b"", 0)
    assert run(sh, "false; echo $?") == (b"1\n", b"", 0)
    assert run(sh, "true && false") == (b"", b"", 1)
    assert run(sh, "false && echo never") == (b"", b"", 1)


def test_exit_ends_the_list(sh):
    assert run(sh, "echo a; exit 3; echo b") == (b"a\n", b"", 3)
    assert run(sh, "sh -c 'exit 4'; echo $?") == (b"4\n", b"", 0)


def test_redirections(sh):
    run(sh, "echo one > /sdcard/f; echo two >> /sdcard/f")
    assert sh.fs.read_file("/sdcard/f") == b"one\ntwo\n"
    assert run(sh, "cat /missing 2>/dev/null") == (b"", b"", 1)
    assert run(sh, "cat /missing 2>&1") == (b"cat: /missing: No such file or directory\n", b"", 1)
    assert run(sh, "echo err 1>&2") == (b"", b"err\n", 0)
    run(sh, "cat /missing > /sdcard/out 2>&1")
    assert sh.fs.read_file("/sdcard/out") == b"cat: /missing: No such file or directory\n"
    assert run(sh, "grep two < /sdcard/f") == (b"two\n", b"", 0)


def test_pipes_into_grep(sh):
    run(sh, "echo Apple > /sdcard/l; echo banana >> /sdcard/l; echo cherry >> /sdcard/l")
    assert run(sh, "cat /sdcard/l | grep an") == (b"banana\n", b"", 0)
    assert run(sh, "cat /sdcard/l | grep -v an") == (b"Apple\ncherry\n", b"", 0)
    assert run(sh, "cat /sdcard/l | grep -i apple") == (b"Apple\n", b"", 0)
    assert run(sh, "cat /sdcard/l | grep -E 'ch(e|x)rry|Ap+le'") == (b"Apple\ncherry\n", b"", 0)
    assert run(sh, "cat /sdcard/l | grep -c e") == (b"2\n", b"", 0)
    assert run(sh, "cat /sdcard/l | grep zzz") == (b"", b"", 1)
    assert run(sh, "getprop ro.x | grep getprop") == (b"getprop|ro.x\n", b"", 0)


def test_unknown_command_is_127_with_androids_message(sh):
    assert run(sh, "nosuch arg") == (b"", b"/system/bin/sh: nosuch: inaccessible or not found\n", 127)


def test_file_builtins(sh):
    assert run(sh, "mkdir /sdcard/a/b")[2] == 1
    assert run(sh, "mkdir -p /sdcard/a/b && touch /sdcard/a/b/f && ls /sdcard/a/b") == (b"f\n", b"", 0)
    assert b"No such file" in run(sh, "ls /nope")[1]
    assert run(sh, "rm /sdcard/a")[2] == 1
    assert run(sh, "rm -r /sdcard/a && ls /sdcard/a")[2] == 1
    assert run(sh, "rm -f /sdcard/never")[2] == 0
    listing = run(sh, "ls -la /data/local")[0].decode()
    assert listing.splitlines()[1].startswith("drwx") and listing.rstrip().endswith("tmp")


def test_android_commands_go_to_the_phone(sh):
    assert run(sh, "/system/bin/getprop ro.product.model") == (b"getprop|ro.product.model\n", b"", 0)


def test_syntax_errors_are_reported_not_raised(sh):
    _stdout, stderr, code = run(sh, "echo 'unterminated")
    assert code == 2 and b"syntax error" in stderr
    with pytest.raises(ShellSyntaxError):
        tokenize('echo "open')


def test_globs_expand_unquoted_patterns_only(sh):
    for name in ("a.png", "b.png", "c.txt", ".hidden.png"):
        sh.fs.write_file(f"/sdcard/{name}", b"")
    assert run(sh, "echo /sdcard/*.png")[0] == b"/sdcard/a.png /sdcard/b.png\n"
    assert run(sh, "echo '/sdcard/*.png' \"/sdcard/?.txt\"")[0] == b"/sdcard/*.png /sdcard/?.txt\n"
    assert run(sh, "cd /sdcard && echo [bc].* && echo /s*/D*")[0] == (
        b"b.png c.txt\n/sdcard/DCIM /sdcard/Documents /sdcard/Download\n"
    )
    assert run(sh, "echo /nowhere/*")[0] == b"/nowhere/*\n"  # no match: the word stays
    assert run(sh, "rm /sdcard/*.png && ls /sdcard/*.png") == (
        b"",
        b"ls: /sdcard/*.png: No such file or directory\n",
        1,
    )


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=" ab*?[]|;&<>'\"\\$#12-/\n", max_size=40))
def test_any_command_line_gives_a_result_never_an_exception(line):
    result = Shell(VirtualFileSystem(), EchoPhone()).run(line)
    assert 0 <= result.exit_code <= 255


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


def test_android_commands_resolve_relative_paths_against_the_working_directory():
    class WritingPhone(EchoPhone):
        def command_names(self) -> frozenset[str]:
            return frozenset({"screencap"})

        def run(self, argv, stdin, fs) -> ShellResult:
            fs.write_file(argv[-1], b"PNG")
            return ShellResult()

    fs = VirtualFileSystem()
    shell = Shell(fs, WritingPhone())
    assert shell.run("cd /sdcard && screencap -p shot.png").exit_code == 0
    assert fs.read_file("/sdcard/shot.png") == b"PNG"
