"""Property tests of what keeps outside input in its place: any words made into a command line by
``device.shell_args.command`` parse back (POSIX sh rules, ``shlex``) to exactly those words; what the kind
checks accept holds no shell syntax; a flow's accepted output path never leaves its folder; and the
hierarchy server's answer, whatever its bytes, parses to a response within the cap or fails with the
protocol's own errors. At the ``fuzz-ci`` profile's count (``PHONE_AGENT_FUZZ_PROFILE=fuzz-soak`` for
more)."""

from __future__ import annotations

import posixpath
import shlex

from hypothesis import given
from hypothesis import strategies as st

from phone_agent.adb.client import AdbOutputTooLarge
from phone_agent.adb.hierarchy_protocol import HttpProtocolError, HttpResponseParser
from phone_agent.device.shell_args import (
    ShellValueError,
    command,
    device_path,
    package_name,
    permission_name,
)
from phone_agent.flows.output_paths import OutputPathError, output_path
from tests.fuzz.targets import FUZZ

SHELL_SYNTAX = set(";&|`$()<>\"'\\\n\r\t *?[]{}~#=%!")
words = st.text(st.characters(blacklist_characters="\x00", blacklist_categories=("Cs",)), max_size=40)
nasty = st.text(st.sampled_from(sorted(SHELL_SYNTAX) + list("ab.-_/1x")), max_size=30)


@FUZZ
@given(st.lists(words | nasty, min_size=1, max_size=6))
def test_a_command_line_parses_back_to_its_words(items: list[str]) -> None:
    assert shlex.split(command(*items)) == items


@FUZZ
@given(words | nasty)
def test_what_the_kind_checks_accept_holds_no_shell_syntax(value: str) -> None:
    for check in (package_name, permission_name):
        try:
            accepted = check(value)
        except ShellValueError as exc:
            assert exc.problem and exc.remedy
            continue
        assert not SHELL_SYNTAX & set(accepted) and not accepted.startswith("-"), accepted
    try:
        path = device_path(value)
    except ShellValueError:
        return
    assert path.startswith("/") and not {"\x00", "\n", "\r"} & set(path)


@FUZZ
@given(st.lists(st.sampled_from([*"./\\~:Ca b", "..", "x"]), max_size=15).map("".join) | words)
def test_an_accepted_output_path_stays_in_its_folder(path: str) -> None:
    try:
        accepted = output_path(path)
    except OutputPathError:
        return
    joined = posixpath.normpath(posixpath.join("/base/run", accepted.replace("\\", "/")))
    assert joined.startswith("/base/run/") or joined == "/base/run", (path, joined)


answers = st.one_of(
    st.binary(max_size=400),
    st.tuples(
        st.sampled_from([b"HTTP/1.1 200 OK", b"HTTP/1.1 404 Not Found", b"HTTP/1.0 200"]),
        st.lists(
            st.sampled_from(
                [b"Content-Length: 10", b"Content-Length: 99999999", b"Transfer-Encoding: chunked",
                 b"Connection: close", b"Content-Length: x"]
            ),
            max_size=2,
        ),
        st.binary(max_size=300),
    ).map(lambda t: t[0] + b"\r\n" + b"".join(h + b"\r\n" for h in t[1]) + b"\r\n" + t[2]),
)  # fmt: skip


@FUZZ
@given(answers, st.lists(st.integers(1, 50), max_size=8), st.booleans())
def test_any_hierarchy_answer_parses_within_the_cap_or_fails_as_documented(
    data: bytes, cuts: list[int], closed: bool
) -> None:
    parser = HttpResponseParser(max_body=64)
    response = None
    try:
        start = 0
        for size in [*cuts, len(data)]:
            response = parser.feed(data[start : start + size])
            start += size
            if response is not None or start >= len(data):
                break
        if response is None and closed:
            response = parser.close()
    except (HttpProtocolError, AdbOutputTooLarge):
        return
    if response is not None:
        assert len(response.body) <= 64
