"""The server's listening socket: a taken port or a bad address is one clear line; loopback or not."""

from __future__ import annotations

import socket

import pytest

from phone_agent.server.listen import StartupError, bind_socket, is_loopback, page_url


def test_only_loopback_binds_count_as_this_machine():
    for host in ("127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2"):
        assert is_loopback(host), host
    for host in ("0.0.0.0", "::", "192.168.1.10", "example.com"):
        assert not is_loopback(host), host


def test_the_page_url_names_loopback_for_a_bind_to_every_address():
    assert page_url("0.0.0.0", 7788) == "http://127.0.0.1:7788/"
    assert page_url("127.0.0.1", 8000) == "http://127.0.0.1:8000/"
    assert page_url("::1", 7788) == "http://[::1]:7788/"


def test_a_bound_socket_listens_without_blocking_on_the_port_asked_for():
    sock = bind_socket("127.0.0.1", 0)
    try:
        assert sock.getsockname()[1] > 0 and not sock.getblocking()
        probe = socket.create_connection(sock.getsockname(), timeout=2)
        probe.close()
    finally:
        sock.close()


def test_a_taken_port_is_a_startup_error_that_says_what_to_do():
    taken = bind_socket("127.0.0.1", 0)
    port = taken.getsockname()[1]
    try:
        with pytest.raises(StartupError) as caught:
            bind_socket("127.0.0.1", port)
    finally:
        taken.close()
    assert str(caught.value) == (
        f"port {port} on 127.0.0.1 is already in use (another phone-agent running?); stop it, or choose "
        "another port with --port or PHONE_AGENT_WS_PORT"
    )


def test_an_unknown_host_is_a_startup_error():
    with pytest.raises(StartupError, match=r"cannot listen on 'no-such-host\.invalid'"):
        bind_socket("no-such-host.invalid", 0)
