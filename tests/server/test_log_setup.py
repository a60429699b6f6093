"""The server's log lines: all to stderr, ``phone-agent:`` first, the level named from warning up."""

from __future__ import annotations

import logging

from phone_agent.server.log_setup import configure_logging


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
