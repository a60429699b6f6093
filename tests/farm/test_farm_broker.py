"""The broker as farm/nats.conf sets it up: credentials required, pages confined to their own subjects."""

from __future__ import annotations

import asyncio

import nats
import pytest
from nats.errors import NoServersError

from tests.farm.support import FarmBroker


async def violations_of(url: str, subscribe: list[str], publish: list[str]) -> list[str]:
    found: list[str] = []

    async def on_error(exc: Exception) -> None:
        found.append(str(exc))

    nc = await nats.connect(url, error_cb=on_error, max_reconnect_attempts=0)
    try:
        for subject in subscribe:
            await nc.subscribe(subject)
        for subject in publish:
            await nc.publish(subject, b"{}")
        await nc.flush()
        await asyncio.sleep(0.2)
    finally:
        await nc.close()
    return found


async def test_wrong_credentials_are_refused(broker: FarmBroker):
    for url in (broker.nats_url("phone1", "not-the-password"), f"nats://127.0.0.1:{broker.port}",
                f"nats://somebody:{broker.passwords['phone1']}@127.0.0.1:{broker.port}"):
        with pytest.raises((NoServersError, nats.errors.Error, OSError)):
            await nats.connect(url, max_reconnect_attempts=0, allow_reconnect=False, connect_timeout=3)


async def test_a_page_may_use_only_its_own_subjects(broker: FarmBroker):
    own = await violations_of(
        broker.nats_url("phone1"),
        subscribe=["farm.page.phone1.abc", "farm.discover"],
        publish=["farm.presence.phone1.abc", "$KV.phone-farm-tasks.phone1.serial.task-1"],
    )
    assert own == []
    others = await violations_of(
        broker.nats_url("phone1"),
        subscribe=["farm.page.phone2.abc", "farm.presence.>", "_INBOX.>"],
        publish=["farm.presence.phone2.abc", "farm.page.phone2.abc", "$KV.phone-farm-tasks.phone2.s.t"],
    )
    assert len(others) == 6 and all("permissions violation" in text for text in others)


async def test_an_mcp_server_may_call_any_page_but_not_pose_as_one(broker: FarmBroker):
    allowed = await violations_of(
        broker.nats_url("mcp"),
        subscribe=["farm.presence.>", "_INBOX.x.>"],
        publish=["farm.page.phone1.a", "farm.page.phone3.b", "farm.discover"],
    )
    assert allowed == []
    refused = await violations_of(
        broker.nats_url("mcp"), subscribe=["farm.page.>"], publish=["farm.presence.x.y"]
    )
    assert len(refused) == 2


def test_docs_farm_md_step_1_starts_the_broker_as_written(tmp_path):
    """The shell lines of docs/farm.md's step 1, run as a reader would (free ports, a temporary store):
    the broker starts. A step that exports fewer passwords than the config names fails here."""
    import re
    import subprocess
    from pathlib import Path

    from tests.farm.support import nats_server_command, wait_port
    from tests.support import free_port

    root = Path(__file__).resolve().parents[2]
    text = (root / "docs" / "farm.md").read_text()
    step = text[text.index("1. The broker") : text.index("2. A page per phone")]
    (block,) = re.findall(r"```sh\n(.*?)```", step, re.S)
    port, ws_port = free_port(), free_port()
    script = (
        block.replace("PHONE_FARM_PORT=4222", f"PHONE_FARM_PORT={port}")
        .replace("PHONE_FARM_WS_PORT=4280", f"PHONE_FARM_WS_PORT={ws_port}")
        .replace("$HOME/.phone-farm", str(tmp_path / "store"))
        .replace(".venv/bin/nats-server", f"exec {nats_server_command()}")
    )
    assert f"PHONE_FARM_PORT={port}" in script and "exec " in script  # the step is what was run
    process = subprocess.Popen(
        ["bash", "-c", script], cwd=root, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        wait_port(port, process)
    finally:
        process.terminate()
        output = process.communicate(timeout=10)[0].decode(errors="replace")
    assert "can not be found" not in output, output
