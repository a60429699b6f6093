"""The token-bearing link is printed only to a person at a terminal, only while no page is paired, and
never when ``CI`` is set: a log, a pipe or CI's output never keeps the page's token."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import time

from phone_agent.server.listen import open_page_line, shows_link
from tests.support import free_port, phone_agent_command, stop_process

LINK = "http://127.0.0.1:7788/?token=SECRET"


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_link_shows_on_a_terminal_while_no_page_is_paired_and_never_in_ci_or_a_file():
    assert shows_link(Terminal(), {}, page_paired=False)
    assert not shows_link(Terminal(), {}, page_paired=True)
    assert not shows_link(Terminal(), {"CI": "true"}, page_paired=False)
    assert not shows_link(io.StringIO(), {}, page_paired=False)
    assert open_page_line(LINK, 7788, Terminal(), {}, False) == f"phone-agent: open {LINK} in Chrome"
    hint = open_page_line(LINK, 7788, io.StringIO(), {}, False)
    assert hint is not None and "`phone-agent url --port 7788`" in hint and "SECRET" not in hint
    assert open_page_line(LINK, 7788, Terminal(), {}, True) is None  # a page is paired: nothing to do


def _serve_on_a_terminal(env: dict[str, str]) -> str:
    """What ``phone-agent serve`` writes to a pseudo-terminal in its first seconds."""
    port = free_port()
    leader, follower = pty.openpty()
    process = subprocess.Popen(
        [phone_agent_command(), "serve", "--port", str(port), "--self-check-delay", "0"],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        env=env,
    )
    os.close(follower)
    seen = b""
    try:
        deadline = time.monotonic() + 30
        while b"in Chrome" not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([leader], [], [], 0.5)
            if ready:
                try:
                    seen += os.read(leader, 4096)
                except OSError:
                    break
    finally:
        stop_process(process)
        os.close(leader)
    return seen.decode(errors="replace")


def test_serve_on_a_terminal_prints_the_link_but_not_when_ci_is_set():
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    shown = _serve_on_a_terminal(env)
    assert "phone-agent: open http://127.0.0.1:" in shown and "?token=" in shown, shown
    quiet = _serve_on_a_terminal({**env, "CI": "true"})
    assert "in Chrome" in quiet and "?token=" not in quiet, quiet
