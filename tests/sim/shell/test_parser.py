"""The shell's parser: and-or lists read one pipeline at a time, pipelines into simple commands."""

from __future__ import annotations

import pytest

from phone_agent.sim.shell.lexer import ShellSyntaxError, Word, tokenize
from phone_agent.sim.shell.parser import Redirect, SimpleCommand, parse_pipeline, pipelines


def as_is(text: str) -> str:
    return text


def no_match(pattern: str) -> list[str]:
    return []


def test_each_pipeline_comes_with_the_list_operator_after_it():
    assert list(pipelines(tokenize("a; ; b && c || d"))) == [
        ([Word("a")], ";"),
        ([], ";"),
        ([Word("b")], "&&"),
        ([Word("c")], "||"),
        ([Word("d")], ";"),
    ]


def test_a_misplaced_and_or_is_reported_when_reached_after_the_pipelines_before_it():
    parsed = pipelines(tokenize("echo a; && b"))
    assert next(parsed) == ([Word("echo"), Word("a")], ";")
    with pytest.raises(ShellSyntaxError, match="'&&' unexpected"):
        next(parsed)


def test_a_pipeline_is_simple_commands_with_their_redirections():
    assert parse_pipeline(tokenize("cat f | grep x > out 2>&1 <in 2>>err"), as_is, no_match) == [
        SimpleCommand(["cat", "f"]),
        SimpleCommand(
            ["grep", "x"],
            [
                Redirect(1, ">", "out"),
                Redirect(2, ">&", "1"),
                Redirect(0, "<", "in"),
                Redirect(2, ">>", "err"),
            ],
        ),
    ]


def test_a_redirection_alone_is_a_command():
    assert parse_pipeline(tokenize("> f"), as_is, no_match) == [SimpleCommand([], [Redirect(1, ">", "f")])]


def test_words_are_expanded_and_globbed_with_the_interpreters_functions():
    def glob(pattern: str) -> list[str]:
        return {"*": ["m1", "m2"]}.get(pattern, [])

    commands = parse_pipeline(tokenize("echo a * b* > out"), str.upper, glob)
    assert commands == [SimpleCommand(["ECHO", "A", "m1", "m2", "B*"], [Redirect(1, ">", "OUT")])]


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("| a", "'|' unexpected"),
        ("a >", "'>' needs a file"),
        ("a > | b", "'>' needs a file"),
        ("a |", "empty command"),
        ("a ;; b", "';;' unexpected"),
    ],
)
def test_a_malformed_pipeline_is_a_syntax_error(line, message):
    with pytest.raises(ShellSyntaxError, match=message):
        parse_pipeline(tokenize(line), as_is, no_match)
