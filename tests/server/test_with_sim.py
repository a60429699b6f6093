"""``serve --sim``: a simulated phone that cannot listen stops the start with one line and exit code 1."""

from __future__ import annotations

import socket

from phone_agent.server.options import ServerOptions
from phone_agent.server.with_sim import run_server_with_sim


def test_a_taken_sim_port_is_a_one_line_error_and_no_server_starts(restored_logging, capsys):
    taken = socket.socket()
    taken.bind(("127.0.0.1", 0))
    taken.listen()
    sim_port = taken.getsockname()[1]
    options = ServerOptions(port=0)
    try:
        assert run_server_with_sim(options, sim_port=sim_port) == 1
    finally:
        taken.close()
    err = capsys.readouterr().err
    assert err.startswith(f"phone-agent: error: the simulated phone cannot listen on port {sim_port}: ")
    assert len(err.splitlines()) == 1
    assert options.default_device is None  # the page was never told of a phone
