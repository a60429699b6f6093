"""Option value types shared by the command lines: a TCP port."""

from __future__ import annotations

import argparse

import pytest

from phone_agent.arg_types import port_number


def test_a_port_is_a_whole_number_from_0_to_65535():
    assert [port_number(text) for text in ("0", "7788", "65535")] == [0, 7788, 65535]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("http", "not a port number: 'http'"),
        ("7.5", "not a port number: '7.5'"),
        ("65536", "port out of range: 65536"),
        ("-1", "port out of range: -1"),
    ],
)
def test_anything_else_is_refused_with_the_line_argparse_prints(text, message):
    with pytest.raises(argparse.ArgumentTypeError) as refused:
        port_number(text)
    assert str(refused.value) == message
