"""The shell's lexer: POSIX quoting removed, operators split, variables marked, glob patterns kept."""

from __future__ import annotations

import pytest

from phone_agent.sim.shell.lexer import (
    ARITH_END,
    ARITH_START,
    CMD_END,
    CMD_START,
    UNQUOTED,
    VAR_END,
    VAR_START,
    Operator,
    ShellSyntaxError,
    Word,
    glob_escape,
    glob_unescape,
    has_glob_magic,
    tokenize,
)


def var(name: str) -> str:
    return f"{VAR_START}{name}{VAR_END}"


def test_quotes_are_removed_as_posix_sh_does_for_what_adb_exec_out_sends():
    assert tokenize("echo 'a  b' \"c  $?\" d\\ e 'it'\\''s'") == [
        Word("echo"),
        Word("a  b"),
        Word(f"c  {var('?')}"),
        Word("d e"),
        Word("it's"),
    ]


def test_operators_split_words_even_without_spaces():
    assert tokenize("a;b&&c||d|e&") == [
        Word("a"),
        Operator(";"),
        Word("b"),
        Operator("&&"),
        Word("c"),
        Operator("||"),
        Word("d"),
        Operator("|"),
        Word("e"),
        Operator("&"),
    ]


def test_a_digit_glued_to_a_redirection_is_a_file_descriptor():
    assert tokenize("cat x 2>/dev/null 2>&1 >&2 >>f <in") == [
        Word("cat"),
        Word("x"),
        Operator("2>"),
        Word("/dev/null"),
        Operator("2>&1"),
        Operator("1>&2"),
        Operator(">>"),
        Word("f"),
        Operator("<"),
        Word("in"),
    ]
    assert tokenize("echo a2>f") == [Word("echo"), Word("a2"), Operator(">"), Word("f")]


def test_variables_are_left_marked_for_the_interpreter_to_expand_when_the_command_runs():
    # Outside double quotes an expansion is marked UNQUOTED too: its result splits into fields.
    assert tokenize("echo $HOME ${X}y '$Q' $ \"$Z\"") == [
        Word("echo"),
        Word(UNQUOTED + var("HOME")),
        Word(f"{UNQUOTED}{var('X')}y"),
        Word("$Q"),
        Word("$"),
        Word(var("Z")),
    ]


def test_command_and_arithmetic_substitutions_are_left_marked_with_their_source():
    assert tokenize("echo $(ls -l /x) \"$((1 + (2*3)))\" `id -u` $( echo ')' )") == [
        Word("echo"),
        Word(f"{UNQUOTED}{CMD_START}ls -l /x{CMD_END}"),
        Word(f"{ARITH_START}1 + (2*3){ARITH_END}"),
        Word(f"{UNQUOTED}{CMD_START}id -u{CMD_END}"),
        Word(f"{UNQUOTED}{CMD_START} echo ')' {CMD_END}"),
    ]
    with pytest.raises(ShellSyntaxError):
        tokenize("echo $(ls")


def test_unquoted_wildcards_make_a_pattern_and_quoted_ones_match_themselves():
    assert tokenize("ls *.png '*'.txt \"a*\"b* x") == [
        Word("ls"),
        Word("*.png", "*.png"),
        Word("*.txt"),
        Word("a*b*", "a[*]b*"),
        Word("x"),
    ]


def test_a_comment_runs_to_the_end_of_its_line_but_a_hash_inside_a_word_is_text():
    assert tokenize("echo a # b c\necho d#e") == [
        Word("echo"),
        Word("a"),
        Operator("\n"),
        Word("echo"),
        Word("d#e"),
    ]


@pytest.mark.parametrize("line", ["echo 'open", 'echo "open', "echo \"a 'b' c"])
def test_an_unterminated_quote_is_a_syntax_error(line):
    with pytest.raises(ShellSyntaxError, match="unterminated"):
        tokenize(line)


def test_an_escaped_wildcard_is_no_magic_and_unescapes_back_to_itself():
    assert has_glob_magic("*.png") and has_glob_magic("a[bc]")
    assert not has_glob_magic(glob_escape("*?["))
    assert glob_unescape(glob_escape("a*?[b")) == "a*?[b"
