"""Pairing a page with the relay: the pure gate, and the real server refusing
a page that does not pair (a process posing as the page) while pairing one that shows the secret or the
code from the console."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest
from websockets.exceptions import ConnectionClosed

from phone_agent.relay.frames import (
    CLOSE_UNPAIRED,
    PairedFrame,
    hello_frame,
    pair_frame,
    parse_server_frame,
)
from phone_agent.server.pairing import MAX_CODE_ATTEMPTS, Paired, PairingGate, Refused
from tests.server.harness import Peer, ServeProcess, api_config, free_port, serve_process

FOREIGN = "http://127.0.0.1:9"  # a page of another origin, allowed with --allow-origin


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_secret_pairs_any_allowed_page_and_anything_else_is_refused() -> None:
    gate = PairingGate("s3cret")
    assert isinstance(gate.check(hello_frame("s3cret"), own_origin=True), Paired)
    assert isinstance(gate.check(hello_frame("s3cret"), own_origin=False), Paired)
    for frame in (hello_frame("wrong"), hello_frame(""), "not json", None, '{"id": "x", "tool": "t"}'):
        verdict = gate.check(frame, own_origin=True)
        assert isinstance(verdict, Refused) and verdict.show_code is None  # own pages refetch the secret


def test_a_foreign_page_pairs_once_by_the_code_shown_and_learns_the_secret() -> None:
    gate = PairingGate("s3cret")
    refused = gate.check(hello_frame(""), own_origin=False)
    assert isinstance(refused, Refused) and refused.show_code and re.fullmatch(r"\d{6}", refused.show_code)
    code = refused.show_code
    assert gate.check(hello_frame(""), own_origin=False).show_code is None  # shown once, not on every retry
    paired = gate.check(pair_frame(code), own_origin=False)
    assert isinstance(paired, Paired) and paired.by_code
    assert parse_server_frame(paired.reply) == PairedFrame("s3cret")
    # One code, one page: it does not pair a second one.
    assert isinstance(gate.check(pair_frame(code), own_origin=False), Refused)
    # Own pages never pair by code (they get the secret from /api/config).
    assert isinstance(gate.check(pair_frame(gate.current_code()[0]), own_origin=True), Refused)


def test_wrong_codes_use_up_the_code_and_an_old_code_expires() -> None:
    clock = Clock()
    gate = PairingGate("s3cret", clock=clock)
    code, fresh = gate.current_code()
    assert fresh
    wrong = "000000" if code != "000000" else "111111"
    verdicts = [gate.check(pair_frame(wrong), own_origin=False) for _ in range(MAX_CODE_ATTEMPTS)]
    assert all(isinstance(v, Refused) for v in verdicts)
    assert [v.show_code is not None for v in verdicts] == [False] * (MAX_CODE_ATTEMPTS - 1) + [True]
    assert isinstance(gate.check(pair_frame(code), own_origin=False), Refused)  # that code is spent
    new_code, _ = gate.current_code()
    clock.now += 601
    assert isinstance(gate.check(pair_frame(new_code), own_origin=False), Refused)  # expired


def test_the_gate_never_shows_its_secret_in_repr() -> None:
    assert "s3cret" not in repr(PairingGate("s3cret"))


# -- the real server -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def relay_server(page_root: Path, tmp_path_factory: pytest.TempPathFactory) -> ServeProcess:
    port = free_port()
    args = [
        "--port",
        str(port),
        "--root",
        str(page_root),
        "--allow-origin",
        FOREIGN,
        "--self-check-delay",
        "0",
    ]
    with serve_process(args, tmp_path_factory.mktemp("pairing") / "serve.txt") as process:
        yield process


async def closed_with(peer: Peer) -> int | None:
    try:
        return await peer.wait_closed(timeout=20)
    finally:
        await peer.close()


@pytest.mark.parametrize("hello", [None, hello_frame("not the secret"), '{"id": "1", "result": {}}'])
async def test_a_page_that_does_not_show_the_secret_is_closed_unpaired(
    relay_server: ServeProcess, hello: str | None
) -> None:
    # hello=None: a process that opens the socket and waits for calls (closed after the 10 s limit).
    peer = await Peer.connect(relay_server.port, hello=hello)
    assert await asyncio.wait_for(closed_with(peer), 25) == CLOSE_UNPAIRED


async def test_the_secret_comes_only_to_the_servers_own_pages(relay_server: ServeProcess) -> None:
    import urllib.request

    assert api_config(relay_server.port)["pairing"]
    request = urllib.request.Request(
        f"http://127.0.0.1:{relay_server.port}/api/config", headers={"Sec-Fetch-Site": "cross-site"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        assert "pairing" not in json.loads(response.read())
        assert response.headers["Cross-Origin-Resource-Policy"] == "same-origin"
        assert "Access-Control-Allow-Origin" not in response.headers


async def test_a_foreign_page_pairs_by_the_code_on_the_console(relay_server: ServeProcess) -> None:
    refused = await Peer.connect(relay_server.port, origin=FOREIGN, hello=hello_frame(""))
    assert await asyncio.wait_for(closed_with(refused), 15) == CLOSE_UNPAIRED
    log = relay_server.wait_stderr(f"a page at {FOREIGN} asks to use the relay: type the pairing code")
    code = re.findall(r"type the pairing code (\d{6})", log)[-1]
    paired = await Peer.connect(relay_server.port, origin=FOREIGN, hello=pair_frame(code))
    try:
        answer = await paired.next_frame()
        assert answer["type"] == "paired" and answer["secret"] == api_config(relay_server.port)["pairing"]
    finally:
        await paired.close()
    # From now on that page shows the secret, like the server's own pages.
    again = await Peer.connect(relay_server.port, origin=FOREIGN, hello=hello_frame(answer["secret"]))
    try:
        assert await again.next_frame() == {"type": "paired"}
        with pytest.raises((TimeoutError, ConnectionClosed)):
            await again.next_frame(timeout=0.3)  # still open, nothing more to say
    finally:
        await again.close()
