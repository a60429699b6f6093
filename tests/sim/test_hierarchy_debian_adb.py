"""Debian's real adb drives the simulated phone's hierarchy server the way uiautomator2's client does:
``adb push`` u2.jar, ``adb shell CLASSPATH=/data/local/tmp/u2.jar app_process / com.wetest.uia2.Main
-p 9008``, then ``adb forward tcp:N tcp:9008`` and HTTP: ``GET /ping`` is ``pong``, JSON-RPC
``dumpWindowHierarchy`` answers the very XML ``uiautomator dump`` writes. A second server says "already
registered" and exits 1; without the jar the class is not found; ``kill`` ends it."""

from __future__ import annotations

import asyncio
import json
import urllib.error
import urllib.request

import pytest

from phone_agent.adb.hierarchy_protocol import JAR_MD5, JAR_PATH, start_command
from tests.support import ROOT, free_port

pytestmark = pytest.mark.adb
JAR = ROOT / "static" / "vendor" / "u2" / "u2.jar"


SIM_OPTIONS = {"scrcpy": True}


def _http(port: int, path: str, body: dict | None = None) -> bytes:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}{path}", data=data, method="POST" if data else "GET"
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.read()


async def _rpc(port: int, method: str, params: list) -> dict:
    call = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params}
    return json.loads(await asyncio.to_thread(_http, port, "/jsonrpc/0", call))


async def test_debian_adb_runs_and_reaches_the_hierarchy_server(sim, debian_adb, adb_serial):
    assert JAR.exists(), "run scripts/setup"
    serial = adb_serial
    adb = ("-s", serial)

    # no jar yet: the class is not found
    code, out, err = await debian_adb.run(*adb, "shell", start_command())
    assert code == 1 and b"could not find class 'com.wetest.uia2.Main'" in out + err

    await debian_adb.output(*adb, "push", str(JAR), JAR_PATH)
    assert (await debian_adb.output(*adb, "shell", f"md5sum {JAR_PATH}")).split()[0].decode() == JAR_MD5
    server = await asyncio.create_subprocess_exec(
        "adb", "-P", str(debian_adb.port), *adb, "shell", start_command(),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, env=debian_adb.env,
    )  # fmt: skip
    port = free_port()
    try:
        await debian_adb.output(*adb, "forward", f"tcp:{port}", "tcp:9008")
        for _ in range(100):
            try:
                if await asyncio.to_thread(_http, port, "/ping") == b"pong":
                    break
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
            await asyncio.sleep(0.05)
        else:
            pytest.fail("the hierarchy server never answered /ping")

        dumped = await _rpc(port, "dumpWindowHierarchy", [False, 50])
        by_dump = await debian_adb.output(
            *adb, "shell", "uiautomator dump /sdcard/d.xml >/dev/null && cat /sdcard/d.xml"
        )
        assert dumped["result"] == by_dump.decode()
        assert (await _rpc(port, "waitForIdle", [1000]))["result"] is True
        assert (await _rpc(port, "noSuchMethod", []))["error"]["code"] == -32601

        # one UiAutomation user at a time
        code, out, err = await debian_adb.run(*adb, "shell", start_command(9009))
        assert code == 1 and b"already registered" in out + err

        # ps lists it; kill ends it (and the forward then finds nothing listening)
        (process,) = sim.hierarchy.running()
        assert str(process.pid).encode() in await debian_adb.output(*adb, "shell", "ps")
        await debian_adb.output(*adb, "shell", f"kill {process.pid}")
        await asyncio.wait_for(server.wait(), 10)
        with pytest.raises((urllib.error.URLError, ConnectionError, OSError)):
            await asyncio.to_thread(_http, port, "/ping")
    finally:
        if server.returncode is None:
            server.kill()
            await server.wait()
        await debian_adb.run(*adb, "forward", "--remove", f"tcp:{port}")
