"""The shell's interpreter: lists, exit status, pipes, redirections, globs, and where a command goes
(a builtin, the phone, or Android's "not found")."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from phone_agent.device.shell_result import ShellResult
from phone_agent.sim.shell.interpreter import Shell
from phone_agent.sim.vfs import VirtualFileSystem
from tests.sim.shell.support import EchoPhone, run


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


def test_redirection_to_a_directory_fails_as_sh_does(sh):
    for op in (">", ">>"):
        assert run(sh, f"echo x {op} /sdcard") == (b"", b"/system/bin/sh: /sdcard: Is a directory\n", 1)
    assert sh.fs.is_dir("/sdcard")


def test_unknown_command_is_127_with_androids_message(sh):
    assert run(sh, "nosuch arg") == (b"", b"/system/bin/sh: nosuch: inaccessible or not found\n", 127)


def test_android_commands_go_to_the_phone(sh):
    assert run(sh, "/system/bin/getprop ro.product.model") == (b"getprop|ro.product.model\n", b"", 0)


def test_syntax_errors_are_reported_not_raised(sh):
    _stdout, stderr, code = run(sh, "echo 'unterminated")
    assert (code, stderr) == (2, b"/system/bin/sh: syntax error: unterminated '\n")
    assert run(sh, "echo a; && echo b") == (b"a\n", b"/system/bin/sh: syntax error: '&&' unexpected\n", 2)


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
