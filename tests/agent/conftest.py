"""Fixtures for the agent's tests: the scripted model server, the simulated phone as a Device (in
process, ``device``; or the test's ``sim`` over ADB, ``adb_device``), the Pillow image codec, and an
agent wired to them with short time bounds."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from phone_agent.adb.device import AdbDevice
from phone_agent.agent.config import AgentConfig
from phone_agent.agent.extract import ExtractConfig
from phone_agent.agent.openai_client import OpenAIChatModel
from phone_agent.agent.settings import ModelSettings
from phone_agent.agent.task_runner import PlanAndResolveAgent
from phone_agent.server.adb_tcp import connect_adbd
from tests.agent.http_client import AsyncioHttpClient
from tests.agent.model_server import ScriptedModelServer
from tests.agent.pillow_codec import PillowCodec
from tests.agent.sim_device import SimDevice

FAST = AgentConfig(
    settle_ms=0,
    retry_delay_ms=10,
    stop_grace_ms=1_000,
    extract=ExtractConfig(settle_ms=0),
)


@pytest.fixture
async def model_server() -> AsyncIterator[ScriptedModelServer]:
    server = await ScriptedModelServer().start()
    yield server
    await server.stop()


@pytest.fixture
async def adb_device(sim, host_key) -> AsyncIterator[AdbDevice]:
    """The test's ``sim`` as the page holds a phone: an ``AdbDevice`` over our own ADB client (TCP)."""
    client = await connect_adbd("127.0.0.1", sim.port, host_key)
    try:
        yield AdbDevice(client, transport="tcp")
    finally:
        await client.close()


@pytest.fixture
def http() -> AsyncioHttpClient:
    return AsyncioHttpClient()


@pytest.fixture
def settings(model_server: ScriptedModelServer) -> ModelSettings:
    return model_server.settings()


@pytest.fixture
def model(settings: ModelSettings, http: AsyncioHttpClient) -> OpenAIChatModel:
    return OpenAIChatModel(settings, http, page_origin="http://127.0.0.1:7788")


@pytest.fixture
def codec() -> PillowCodec:
    return PillowCodec()


@pytest.fixture
def device() -> SimDevice:
    return SimDevice()


@pytest.fixture
def agent(model: OpenAIChatModel, codec: PillowCodec) -> PlanAndResolveAgent:
    return PlanAndResolveAgent(model, codec, config=FAST)
