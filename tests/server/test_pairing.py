"""Pairing a page with the relay: the pure gate, and the real server refusing
a page that does not pair (a process posing as the page) while pairing one that shows the secret or the
code from the console."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed

from phone_agent.relay.frames import CLOSE_UNPAIRED, HelloFrame, PairedFrame, PairFrame, parse_server_frame
from phone_agent.server.pairing import LOCKOUT_S, MAX_CODE_ATTEMPTS, Paired, PairingGate, Refused
from tests.server.harness import Peer, ServeProcess, api_config, free_port, serve_process

FOREIGN = "http://127.0.0.1:9"  # a page of another origin, allowed with --allow-origin


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_secret_pairs_any_allowed_page_and_anything_else_is_refused() -> None:
    gate = PairingGate("s3cret")
    assert isinstance(gate.check(HelloFrame("s3cret").to_wire(), own_origin=True), Paired)
    assert isinstance(gate.check(HelloFrame("s3cret").to_wire(), own_origin=False), Paired)
    for frame in (HelloFrame("wrong").to_wire(), "not json", None, '{"id": "x", "tool": "t"}'):
        verdict = gate.check(frame, own_origin=True)
        assert isinstance(verdict, Refused) and verdict.show_code is None  # own pages refetch the secret


def test_an_own_page_opened_without_the_link_pairs_by_the_code() -> None:
    gate = PairingGate("s3cret")
    refused = gate.check(HelloFrame("").to_wire(), own_origin=True)  # no cookie: /api/config gave no secret
    assert isinstance(refused, Refused) and refused.show_code and "phone-agent url" in refused.reason
    paired = gate.check(PairFrame(refused.show_code).to_wire(), own_origin=True)
    assert isinstance(paired, Paired) and parse_server_frame(paired.reply) == PairedFrame("s3cret")


def test_a_foreign_page_pairs_once_by_the_code_shown_and_learns_the_secret() -> None:
    gate = PairingGate("s3cret")
    refused = gate.check(HelloFrame("").to_wire(), own_origin=False)
    assert isinstance(refused, Refused) and refused.show_code and re.fullmatch(r"\d{6}", refused.show_code)
    code = refused.show_code
    no_secret = HelloFrame("").to_wire()
    assert gate.check(no_secret, own_origin=False).show_code is None  # shown once, not on every retry
    paired = gate.check(PairFrame(code).to_wire(), own_origin=False)
    assert isinstance(paired, Paired) and paired.by_code
    assert parse_server_frame(paired.reply) == PairedFrame("s3cret")
    # One code, one page: it does not pair a second one.
    assert isinstance(gate.check(PairFrame(code).to_wire(), own_origin=False), Refused)


def test_wrong_codes_use_up_the_code_and_an_old_code_expires() -> None:
    clock = Clock()
    gate = PairingGate("s3cret", clock=clock)
    code, fresh = gate.current_code()
    assert fresh
    wrong = "000000" if code != "000000" else "111111"
    verdicts = [gate.check(PairFrame(wrong).to_wire(), own_origin=False) for _ in range(MAX_CODE_ATTEMPTS)]
    assert all(isinstance(v, Refused) and v.show_code is None for v in verdicts)
    assert "too many wrong pairing codes" in verdicts[-1].reason
    assert isinstance(gate.check(PairFrame(code).to_wire(), own_origin=False), Refused)  # that code is spent
    # Locked: no code is taken, none is shown, for LOCKOUT_S (a script cannot guess a million codes).
    locked = gate.check(HelloFrame("").to_wire(), own_origin=False)
    assert isinstance(locked, Refused) and locked.show_code is None
    clock.now += LOCKOUT_S
    shown = gate.check(HelloFrame("").to_wire(), own_origin=False).show_code
    assert shown and shown == gate.current_code()[0]
    assert isinstance(gate.check(PairFrame(shown).to_wire(), own_origin=False), Paired)
    new_code, _ = gate.current_code()
    clock.now += 601
    assert isinstance(gate.check(PairFrame(new_code).to_wire(), own_origin=False), Refused)  # expired


def test_the_gate_never_shows_its_secret_in_repr() -> None:
    assert "s3cret" not in repr(PairingGate("s3cret"))


# -- the real server -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def relay_server(page_root: Path, tmp_path_factory: pytest.TempPathFactory) -> ServeProcess:
    port = free_port()
    args = ["--port", str(port), "--root", str(page_root), "--self-check-delay", "0"]
    args += ["--allow-origin", FOREIGN]
    with serve_process(args, tmp_path_factory.mktemp("pairing") / "serve.txt") as process:
        yield process


async def closed_with(peer: Peer) -> int | None:
    try:
        return await peer.wait_closed(timeout=20)
    finally:
        await peer.close()


@pytest.mark.parametrize("hello", [None, HelloFrame("not the secret").to_wire(), '{"id": "1", "result": {}}'])
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
    refused = await Peer.connect(relay_server.port, origin=FOREIGN, hello=HelloFrame("").to_wire())
    assert await asyncio.wait_for(closed_with(refused), 15) == CLOSE_UNPAIRED
    log = relay_server.wait_stderr(f"a page at {FOREIGN} asks to use the relay: type the pairing code")
    code = re.findall(r"type the pairing code (\d{6})", log)[-1]
    paired = await Peer.connect(relay_server.port, origin=FOREIGN, hello=PairFrame(code).to_wire())
    try:
        answer = await paired.next_frame()
        assert answer["type"] == "paired" and answer["secret"] == api_config(relay_server.port)["pairing"]
    finally:
        await paired.close()
    # From now on that page shows the secret, like the server's own pages.
    hello = HelloFrame(answer["secret"]).to_wire()
    again = await Peer.connect(relay_server.port, origin=FOREIGN, hello=hello)
    try:
        assert await again.next_frame() == {"type": "paired"}
        with pytest.raises((TimeoutError, ConnectionClosed)):
            await again.next_frame(timeout=0.3)  # still open, nothing more to say
    finally:
        await again.close()


# -- only the user's browser: the page link's token, traded for the page cookie ----------------------

BROWSER_HEADERS = {"Sec-Fetch-Site": "same-origin", "Sec-Fetch-Mode": "cors", "Sec-Fetch-Dest": "empty"}


def http(port: int, path: str, headers: dict[str, str], body: bytes | None = None) -> tuple[int, Any, bytes]:
    import urllib.error
    import urllib.request

    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", data=body, headers=headers, method="POST" if body else "GET"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers, exc.read()


async def test_a_local_script_that_forges_a_browsers_headers_neither_reads_the_secret_nor_pairs(
    relay_server: ServeProcess,
) -> None:
    port = relay_server.port
    forged = {**BROWSER_HEADERS, "Origin": f"http://127.0.0.1:{port}", "Referer": f"http://127.0.0.1:{port}/"}
    status, _, body = http(port, "/api/config", forged)
    config = json.loads(body)
    assert status == 200 and "pairing" not in config and config["pageKey"] is False
    # A cookie it made up, or a token it guessed, is no page cookie.
    made_up = {**forged, "Cookie": f"phone-agent-page-{port}=" + "0" * 64}
    assert "pairing" not in json.loads(http(port, "/api/config", made_up)[2])
    guessed = json.dumps({"token": "a-guess"}).encode()
    status, headers, _ = http(port, "/api/page-key", {**forged, "Content-Type": "application/json"}, guessed)
    assert status == 403 and "Set-Cookie" not in headers
    # It poses as the page with the server's own Origin: refused, whatever it shows.
    for hello in (HelloFrame("").to_wire(), HelloFrame("a-guess").to_wire(), PairFrame("123456").to_wire()):
        peer = await Peer.connect(port, hello=hello)
        assert await asyncio.wait_for(closed_with(peer), 15) == CLOSE_UNPAIRED


async def test_the_links_token_buys_the_page_cookie(
    relay_server: ServeProcess,
) -> None:
    from phone_agent.server.credentials import load_page_token, load_token

    port = relay_server.port
    origin = {"Origin": f"http://127.0.0.1:{port}", "Content-Type": "application/json"}
    # Only a page of this server may trade the token (a page of another site cannot even send it here).
    trade = json.dumps({"token": load_page_token()}).encode()
    assert http(port, "/api/page-key", {**origin, "Origin": FOREIGN}, trade)[0] == 403
    status, headers, _ = http(port, "/api/page-key", origin, trade)
    assert status == 204
    attributes = [part.strip().lower() for part in headers["Set-Cookie"].split(";")]
    assert "httponly" in attributes and "samesite=strict" in attributes and "path=/" in attributes
    cookie = headers["Set-Cookie"].split(";", 1)[0]
    assert cookie.startswith(f"phone-agent-page-{port}=") and load_page_token() not in cookie
    # The bearer token of /mcp is not the link's: it buys no cookie (and is never printed with the link).
    assert http(port, "/api/page-key", origin, json.dumps({"token": load_token()}).encode())[0] == 403
    config = json.loads(http(port, "/api/config", {**BROWSER_HEADERS, "Cookie": cookie})[2])
    assert config["pageKey"] is True and config["pairing"]
    peer = await Peer.connect(port, hello=HelloFrame(config["pairing"]).to_wire())
    try:
        assert await peer.next_frame() == {"type": "paired"}
    finally:
        await peer.close()
    # Even with the cookie, another site's fetch gets no secret.
    cross = {**BROWSER_HEADERS, "Sec-Fetch-Site": "cross-site", "Cookie": cookie}
    assert "pairing" not in json.loads(http(port, "/api/config", cross)[2])


def test_phone_agent_url_prints_the_link_that_outlives_restarts_until_the_token_is_rotated(
    page_root: Path, tmp_path: Path
) -> None:
    import subprocess

    from tests.server.harness import PHONE_AGENT, serve_process

    env = {"PHONE_AGENT_HOME": str(tmp_path / "home")}
    run_env = {**__import__("os").environ, **env}
    port = free_port()

    def url() -> str:
        done = subprocess.run(
            [PHONE_AGENT, "url", "--port", str(port)], capture_output=True, text=True, env=run_env, timeout=30
        )
        assert done.returncode == 0, done.stderr
        return done.stdout.strip()

    link = url()
    token = link.split("?token=", 1)[1]
    assert link == f"http://127.0.0.1:{port}/?token={token}" and len(token) >= 43
    trade = json.dumps({"token": token}).encode()
    origin = {"Origin": f"http://127.0.0.1:{port}", "Content-Type": "application/json"}
    args = ["--port", str(port), "--root", str(page_root), "--self-check-delay", "0"]
    with serve_process(args, tmp_path / "first.txt", env=env) as first:
        assert f"`phone-agent url --port {port}`" in first.wait_stderr("in Chrome")  # how to get that link
        cookie = http(port, "/api/page-key", origin, trade)[1]["Set-Cookie"].split(";", 1)[0]
        secret = json.loads(http(port, "/api/config", {"Cookie": cookie})[2])["pairing"]
    with serve_process(args, tmp_path / "second.txt", env=env):  # restarted: the page keeps working
        assert json.loads(http(port, "/api/config", {"Cookie": cookie})[2])["pairing"] == secret
        assert url() == link
    rotate = [PHONE_AGENT, "url", "--rotate", "--port", str(port)]
    subprocess.run(rotate, capture_output=True, env=run_env, timeout=30, check=True)
    with serve_process(args, tmp_path / "third.txt", env=env):  # rotated: the old link and cookie are void
        assert "pairing" not in json.loads(http(port, "/api/config", {"Cookie": cookie})[2])
        assert http(port, "/api/page-key", origin, trade)[0] == 403
        assert url() != link


async def test_task_records_come_only_from_the_users_page_and_reach_the_page_on_the_relay(
    relay_server: ServeProcess,
) -> None:
    from tests.server.harness import page_cookie

    port = relay_server.port
    own = {"Origin": f"http://127.0.0.1:{port}", "Content-Type": "application/json"}
    record = {"taskId": "task-1", "status": "aborted", "goal": "g"}
    body = json.dumps(record).encode()
    assert http(port, "/api/task-record", {**own, **BROWSER_HEADERS}, body)[0] == 403  # a script
    peer = await Peer.connect(port)
    try:
        cookie = page_cookie(port)
        assert http(port, "/api/task-record", {**own, "Cookie": cookie}, body)[0] == 204
        assert await peer.next_frame() == {"type": "task", "record": record}
        secret = api_config(port)["pairing"]  # a page paired by code shows the secret instead
        later = json.dumps({**record, "goal": "h"}).encode()
        assert http(port, "/api/task-record", {**own, "X-Phone-Agent-Pairing": secret}, later)[0] == 204
        assert (await peer.next_frame())["record"]["goal"] == "h"
        bad = http(port, "/api/task-record", {**own, "Cookie": cookie}, b'{"status": "x"}')
        assert bad[0] == 400
    finally:
        await peer.close()
    # A page that pairs later is handed the records kept.
    again = await Peer.connect(port)
    try:
        assert (await again.next_frame())["record"]["taskId"] == "task-1"
    finally:
        await again.close()
