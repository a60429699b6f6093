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


async def test_serve_with_a_realistic_sim_costs_like_a_phone_and_says_so(host_key):
    import time
    import urllib.request

    web, sim_port = free_port(), free_port()
    process = await start(
        "serve",
        "--port",
        str(web),
        "--sim",
        "--sim-port",
        str(sim_port),
        "--realistic",
        "--realistic-seed",
        "4",
    )
    try:
        await wait_for_line(process, rf"listening on 127.0.0.1:{sim_port}")
        host = await RawHost.connect(sim_port)
        await host.handshake(host_key)
        started = time.monotonic()
        dump = await host.run("exec:uiautomator dump /dev/tty")
        assert time.monotonic() - started >= 1.0 and b"<hierarchy" in dump
        await host.close()

        def identity() -> dict:
            from phone_agent.server.credentials import load_token

            request = urllib.request.Request(
                f"http://127.0.0.1:{web}/api/server", headers={"Authorization": f"Bearer {load_token()}"}
            )
            with urllib.request.urlopen(request, timeout=5) as answer:
                return json.loads(answer.read())

        found = await asyncio.to_thread(identity)
        assert found["sim"] is True and found["realistic"] is True
    finally:
        await stop(process)


def test_mcp_passes_realistic_to_the_server_it_starts():
    from phone_agent.cli import background_server_args, build_parser

    argv = ["mcp", "--sim", "--realistic", "--realistic-seed", "9"]
    args = build_parser().parse_args(argv)
    args.raw_argv = argv
    assert args.realistic is True and args.realistic_seed == 9
    server_args = background_server_args(args)
    assert server_args[:4] == ["--sim", "--realistic", "--realistic-seed", "9"]
    serve = build_parser().parse_args(["serve", *server_args])
    assert serve.realistic is True and serve.realistic_seed == 9


async def test_the_pages_simulated_phone_of_a_realistic_server_is_realistic(host_key):
    import time
    import urllib.request

    from tests.support import ServedPhoneAgent

    served = await asyncio.to_thread(ServedPhoneAgent, "--realistic")
    try:

        def start_sim() -> dict:
            headers = {"Origin": served.base, "Sec-Fetch-Site": "same-origin"}
            request = urllib.request.Request(served.base + "/api/sim", method="POST", headers=headers)
            with urllib.request.urlopen(request, timeout=15) as answer:
                return json.loads(answer.read())

        device = (await asyncio.to_thread(start_sim))["device"]
        host = await RawHost.connect(int(device.rsplit(":", 1)[1]))
        await host.handshake(host_key)
        started = time.monotonic()
        assert b"<hierarchy" in await host.run("exec:uiautomator dump /dev/tty")
        assert time.monotonic() - started >= 1.0  # a real phone's dump, not the instant one
        await host.close()
    finally:
        await asyncio.to_thread(served.stop)
