"""An nkey identity for the MCP servers: ``--farm-nkey-seed FILE`` against a real nats-server whose mcp
user is known by its public nkey (the repository's config, the login swapped); the seed is never shown."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import nkeys
import pytest

from tests.farm.support import FarmBroker, PythonPage, structured
from tests.server.harness import PHONE_AGENT, free_port, http_session, serve_process, token
from tests.support import eventually, mcp_stdio_session, result_text


def user_seed() -> bytes:
    return nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER)


@pytest.fixture(scope="module")
def seeded(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[FarmBroker, Path]]:
    seed = user_seed()
    path = tmp_path_factory.mktemp("nkey") / "mcp.nk"
    path.write_bytes(seed + b"\n")
    path.chmod(0o600)
    broker = FarmBroker(mcp_nkey=nkeys.from_seed(bytearray(seed)).public_key.decode())
    broker.start()
    try:
        yield broker, path
    finally:
        broker.stop()


def farm_address(broker: FarmBroker) -> str:
    return f"nats://127.0.0.1:{broker.port}"


async def test_the_router_joins_with_an_nkey_seed_over_stdio_and_http(seeded, tmp_path: Path):
    broker, seed_file = seeded
    page = PythonPage(broker, "phone1", "nkey-phone")
    await page.start()
    try:
        args = ("--farm", farm_address(broker), "--farm-nkey-seed", str(seed_file))
        async with mcp_stdio_session(*args) as session:
            async def listed():
                devices = structured(await session.call_tool("list_devices", {}))["devices"]
                return [d["serial"] for d in devices] or None

            assert await eventually(listed, timeout_s=10) == ["nkey-phone"]
            status = await session.call_tool("get_device_status", {"device": "nkey-phone"})
            assert structured(status)["serial"] == "nkey-phone", result_text(status)

        port = free_port()
        with serve_process(["--port", str(port), *args], tmp_path / "serve.txt") as served:
            served.wait_stderr("MCP over streamable HTTP")
            async with http_session(port, token()) as http:
                status = await eventually(
                    lambda: _status(http, "nkey-phone"), timeout_s=10
                )
                assert status["serial"] == "nkey-phone"
            assert seed_file.read_text().strip() not in served.stderr()
    finally:
        await page.close()


async def _status(session, serial):
    answer = await session.call_tool("get_device_status", {"device": serial})
    return None if answer.is_error else structured(answer)


def test_a_wrong_seed_is_refused_and_never_shown(seeded, tmp_path: Path):
    broker, _seed_file = seeded
    wrong = tmp_path / "other.nk"
    other = user_seed()
    wrong.write_bytes(other)
    done = subprocess.run(
        [PHONE_AGENT, "serve", "--port", str(free_port()), "--farm", farm_address(broker),
         "--farm-nkey-seed", str(wrong)],
        capture_output=True, timeout=60, stdin=subprocess.DEVNULL,
    )
    err = done.stderr.decode()
    assert done.returncode == 1 and "refused the credentials" in err, err
    assert other.decode() not in err

    not_a_seed = tmp_path / "junk.nk"
    not_a_seed.write_text("hello")
    done = subprocess.run(
        [PHONE_AGENT, "serve", "--port", str(free_port()), "--farm", farm_address(broker),
         "--farm-nkey-seed", str(not_a_seed)],
        capture_output=True, timeout=60, stdin=subprocess.DEVNULL,
    )
    assert done.returncode != 0 and "holds no user nkey seed" in done.stderr.decode()
    with_password = broker.nats_url("phone1")
    done = subprocess.run(
        [PHONE_AGENT, "mcp", "--farm", with_password, "--farm-nkey-seed", str(wrong)],
        capture_output=True, timeout=60, stdin=subprocess.DEVNULL,
    )
    err = done.stderr.decode()
    assert done.returncode != 0 and "without credentials" in err
    assert broker.passwords["phone1"] not in err
