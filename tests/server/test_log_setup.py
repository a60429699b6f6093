"""The server's log lines: all to stderr, ``phone-agent:`` first, the level named from warning up."""

from __future__ import annotations

import logging
import urllib.request

import pytest

from phone_agent.server.log_setup import configure_logging
from tests.server.harness import free_port, serve_process


def test_our_lines_and_the_libraries_lines_are_prefixed_and_go_to_stderr(restored_logging, capsys):
    configure_logging(verbose=False)
    logging.getLogger("phone_agent.server").info("serving")
    logging.getLogger("phone_agent.relay").warning("slow page")
    logging.getLogger("uvicorn.error").error("boom")
    logging.getLogger("uvicorn.error").info("not shown unless verbose")
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.splitlines() == [
        "phone-agent: serving",
        "phone-agent: warning: slow page",
        "phone-agent [uvicorn.error]: error: boom",
    ]


def test_verbose_shows_the_libraries_info_and_our_debug(restored_logging, capsys):
    configure_logging(verbose=True)
    logging.getLogger("uvicorn.error").info("started")
    logging.getLogger("phone_agent.server").debug("detail")
    assert capsys.readouterr().err.splitlines() == [
        "phone-agent [uvicorn.error]: started",
        "phone-agent: detail",
    ]


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        (
            '127.0.0.1:5 - "GET /?device=tcp:1&farm=ws://phone1:s3cret-pw@127.0.0.1:4280 HTTP/1.1" 200',
            '127.0.0.1:5 - "GET /?device=tcp:1&farm=ws://phone1:***@127.0.0.1:4280 HTTP/1.1" 200',
        ),
        (
            "GET /?farm=ws%3A%2F%2Fphone1%3As3cret-pw%40h%3A1&x=1",
            "GET /?farm=ws%3A%2F%2Fphone1%3A***%40h%3A1&x=1",
        ),
        ("joining nats://s3cret-pw@h:4222 and wss://u:s3cret-pw@h/", "joining nats://***@h:4222 and wss://u:***@h/"),
        ("at nats://mcp:***@h:4222 (already masked)", "at nats://mcp:***@h:4222 (already masked)"),
        ("http://h:1/mcp?a=b@c, git@example.com", "http://h:1/mcp?a=b@c, git@example.com"),
    ],
)
def test_no_line_shows_the_secret_of_a_urls_credentials(restored_logging, capsys, line, shown):
    configure_logging(verbose=True)
    logging.getLogger("uvicorn.access").info(line)
    assert capsys.readouterr().err.splitlines() == [f"phone-agent [uvicorn.access]: {shown}"]


def test_serve_verbose_does_not_log_the_farm_password_of_a_page_url(tmp_path):
    """`serve -v` logs every request line; a page opened with ?farm=ws://USER:PASSWORD@… must not put
    the password in the log."""
    port = free_port()
    with serve_process(["--port", str(port), "-v"], tmp_path / "serve.txt") as served:
        url = f"http://127.0.0.1:{port}/?farm=ws://phone1:s3cret-pw@127.0.0.1:4280&scrcpy=0"
        with urllib.request.urlopen(url, timeout=10) as answer:
            assert answer.status == 200
        log = served.wait_stderr("farm=ws://phone1:***@127.0.0.1:4280")
    assert "s3cret-pw" not in log
