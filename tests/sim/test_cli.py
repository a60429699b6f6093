"""``phone-agent sim`` and ``serve --sim`` as real processes."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import sys

import pytest

from tests.sim.raw_host import RawHost
from tests.support import free_port


async def start(*args: str) -> asyncio.subprocess.Process:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return await asyncio.create_subprocess_exec(
        sys.executable, "-m", "phone_agent.cli", *args, env=env,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip


async def wait_for_line(process: asyncio.subprocess.Process, pattern: str, timeout: float = 15.0) -> re.Match:
    async with asyncio.timeout(timeout):
        while True:
            line = (await process.stderr.readline()).decode()
            if not line:
                raise AssertionError(f"the process ended before printing {pattern!r}")
            if match := re.search(pattern, line):
                return match


async def stop(process: asyncio.subprocess.Process) -> int:
    if process.returncode is None:
        process.send_signal(signal.SIGTERM)
    try:
        return await asyncio.wait_for(process.wait(), 10)
    except TimeoutError:
        process.kill()
        await process.wait()
        pytest.fail("the process did not stop on SIGTERM")


async def test_sim_command_serves_adb_and_the_control_endpoint(host_key):
    port = free_port()
    process = await start("sim", "--port", str(port), "--control-port", "0", "--serial", "CLI0001")
    try:
        control = int((await wait_for_line(process, r"control endpoint: http://127.0.0.1:(\d+)/state"))[1])
        host = await RawHost.connect(port)
        await host.handshake(host_key)  # accept mode: signature refused, public key accepted
        assert await host.run("exec:getprop ro.serialno") == b"CLI0001\n"
        reader, writer = await asyncio.open_connection("127.0.0.1", control)
        writer.write(f"GET /state HTTP/1.1\r\nHost: 127.0.0.1:{control}\r\n\r\n".encode())
        body = (await asyncio.wait_for(reader.read(), 5)).partition(b"\r\n\r\n")[2]
        writer.close()
        assert json.loads(body)["serial"] == "CLI0001"
        await host.close()
    finally:
        assert await stop(process) == 0


async def test_serve_with_sim_runs_both_in_one_process(host_key):
    web, sim_port = free_port(), free_port()
    process = await start("serve", "--port", str(web), "--sim", "--sim-port", str(sim_port))
    try:
        await wait_for_line(process, rf"listening on 127.0.0.1:{sim_port}")
        host = await RawHost.connect(sim_port)
        await host.handshake(host_key)
        assert await host.run("shell:echo hello from --sim") == b"hello from --sim\n"
        await host.close()
        _, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", web), 10)
        writer.close()
    finally:
        await stop(process)
