"""The browser tests' rigs: a simulated phone, the page connected to it (booted once for a module, again
only after a crash), and whoever calls the page — what the ``rig`` and ``fresh`` fixtures of
tests/browser/conftest.py give a module, as its ``RIG`` says.

- ``PhoneRigSpec`` (the default): the phone, the page, an MCP session through ``phone-agent mcp``
  relayed to it, and Debian's adb on the same phone (``PhoneRig``).
- ``AgentRigSpec``: the phone, the scripted model, a ``phone-agent serve`` that hands the page that
  model, and the page, whose relay is on a port of the tests' own (``AgentRig``: each test starts the
  ``phone-agent mcp`` it needs there).

And what tests of the live view need: where a device pixel is on the page, where a label is on the phone.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import jsonschema
import pytest

from phone_agent.sim.server import SimulatedPhoneServer
from phone_agent.tools.catalog import TOOLS_BY_NAME
from tests.agent.model_server import ScriptedModelServer
from tests.support import KeptPage, ServedPhoneAgent, eventually, free_port, mcp_stdio_session, webmcp_call

# The two ways a tool is called: through the MCP session relayed to the page, and WebMCP in the page.
CHANNELS = ("mcp", "webmcp")


async def started_sim(**options: Any) -> SimulatedPhoneServer:
    """A simulated phone on a free port whose status-bar clock stays at 12:00 (screenshots compare)."""
    sim = SimulatedPhoneServer("127.0.0.1", free_port(), **options)
    sim.phone.clock = lambda: "12:00"
    await sim.start()
    return sim


@contextlib.asynccontextmanager
async def held_mcp_session(*args: str) -> AsyncIterator[Any]:
    """``mcp_stdio_session(*args)`` held open by a task of its own: the SDK's stdio client must be
    entered and left in one task, and a module fixture's teardown runs in another."""
    ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    done = asyncio.Event()

    async def hold() -> None:
        try:
            async with mcp_stdio_session(*args) as session:
                ready.set_result(session)
                await done.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    holder = asyncio.ensure_future(hold())
    try:
        yield await asyncio.wait_for(ready, 60)
    finally:
        done.set()
        await asyncio.wait_for(holder, 30)


# -- the phone rig -------------------------------------------------------------------------------------


@dataclass
class PhoneRig:
    """The sim, the page connected to it, the MCP session relayed to that page, and Debian's adb on the
    same phone (``serial``)."""

    sim: SimulatedPhoneServer
    kept: KeptPage
    session: Any
    adb: Any
    serial: str
    page: Any = None

    async def fresh(self) -> PhoneRig:
        """The page up (booted again if the last one crashed) and the phone as new (and no longer
        hostile), before a test."""
        self.page, _watch = await self.kept.get()
        self.sim.set_hostile([])
        self.sim.phone.reset()
        return self

    async def call(self, channel: str, tool: str, **args: Any) -> dict[str, Any]:
        """``tool`` through ``channel`` (``mcp``: the relayed session; ``webmcp``: the page's own), its
        result in wire form; an answer is checked against the tool's output schema."""
        if channel == "webmcp":
            result = await webmcp_call(self.page, tool, args)
        else:
            answer = await self.session.call_tool(tool, args)
            result = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
        if not result.get("isError"):
            jsonschema.validate(result["structuredContent"], TOOLS_BY_NAME[tool].output_schema)
        return result

    async def ok(self, channel: str, tool: str, **args: Any) -> dict[str, Any]:
        result = await self.call(channel, tool, **args)
        assert not result.get("isError"), result
        return result["structuredContent"]

    async def fails(self, channel: str, tool: str, code: str, **args: Any) -> dict[str, Any]:
        """The failure ``tool`` answers, which must be ``code`` with its message, remedy and retryable."""
        result = await self.call(channel, tool, **args)
        assert result.get("isError") is True, result
        error = result["structuredContent"]
        assert error["code"] == code, error
        assert result["content"][0]["text"] == error["message"]
        assert error["remedy"] and isinstance(error["retryable"], bool)
        return error

    async def adb_shell(self, command: str) -> str:
        out = await self.adb.output("-s", self.serial, "shell", command)
        return out.decode("utf-8", "replace").strip()

    async def ui_dump(self) -> str:
        command = "uiautomator dump /sdcard/check.xml >/dev/null && cat /sdcard/check.xml"
        return (await self.adb.output("-s", self.serial, "shell", command)).decode("utf-8", "replace")


@dataclass(frozen=True)
class PhoneRigSpec:
    """A module's phone rig: the sim's options (``SimulatedPhoneServer``'s keywords) and what the page's
    URL adds (``&scrcpy=0``: the live view on screenshots). ``alone``: the module's tests leave the
    page in a state no other module may inherit, so it shares its rig with none."""

    sim: dict[str, Any] = field(default_factory=dict)
    query: str = ""
    alone: bool = False

    @contextlib.asynccontextmanager
    async def start(self, browser: Any, request: pytest.FixtureRequest) -> AsyncIterator[PhoneRig]:
        adb = request.getfixturevalue("debian_adb")
        sim = await started_sim(**self.sim)
        port = free_port()
        url = f"http://127.0.0.1:{port}/?device=tcp:127.0.0.1:{sim.port}&relayRetryMs=300{self.query}"
        try:
            async with held_mcp_session("--port", str(port), "--self-check-delay", "0") as session:

                async def prepare(page: Any) -> None:
                    await phone_connected(page)
                    await _relayed(session)

                kept = KeptPage(browser, url, prepare=prepare)
                try:
                    async with adb.holding(sim.port) as serial:
                        yield PhoneRig(sim, kept, session, adb, serial)  # each test's `fresh` boots the page
                    if kept.watch is not None and not kept.watch.gone:
                        kept.watch.assert_clean()
                finally:
                    await kept.close()
        finally:
            await sim.close()


async def phone_connected(page: Any) -> None:
    """The page holds the phone; its live view is off (its screenshots would only add noise, and the
    tests alone use the phone)."""
    await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=30_000)
    await page.uncheck("#live-toggle")


async def _relayed(session: Any) -> None:
    """The relay is up once a relayed call reaches the page."""
    for _ in range(100):
        status = await session.call_tool("get_device_status", {})
        if not status.is_error:
            return
        await asyncio.sleep(0.1)


# -- the agent rig -------------------------------------------------------------------------------------


@dataclass
class AgentRig:
    """The sim, the scripted model, the server that hands the page its model, and the page; the page's
    relay is ``relay_port``, where each test starts the ``phone-agent mcp`` it needs (``relay_args``)."""

    sim: SimulatedPhoneServer
    model: ScriptedModelServer
    served: ServedPhoneAgent
    relay_port: int
    kept: KeptPage
    page: Any = None
    watch: Any = None
    finished_ids: list[str] = field(default_factory=list)  # tasks this page's history holds

    async def fresh(self) -> AgentRig:
        """The page up, a clean script and an idle agent before a test."""
        await self.page_up()
        await self.idle()
        self.model.script.clear()
        self.model.requests.clear()
        self.model.headers.clear()
        self.sim.phone.reset()
        return self

    async def page_up(self) -> None:
        """The module's page, booted again (a new context: an empty history) if the last one crashed."""
        boots = self.kept.boots
        self.page, self.watch = await self.kept.get()
        if self.kept.boots != boots:
            self.finished_ids = []

    def relay_args(self, *extra: str) -> tuple[str, ...]:
        return (
            "--port",
            str(self.relay_port),
            "--self-check-delay",
            "0",
            "--allow-origin",
            self.served.base,
            *extra,
        )

    @contextlib.asynccontextmanager
    async def relayed(self, *extra: str, **session_options: Any) -> AsyncIterator[Any]:
        """``phone-agent mcp`` on the page's relay port (``extra`` its options): it starts the shared
        server the page relays to; its stdio session once the page's relay is connected."""
        async with mcp_stdio_session(*self.relay_args(*extra), **session_options) as session:
            await self.relay_connected()
            yield session

    async def webmcp(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        return await webmcp_call(self.page, tool, args)

    async def webmcp_json(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        result = await self.webmcp(tool, args)
        assert not result.get("isError"), result
        return json.loads(result["content"][0]["text"])

    async def relay_connected(self) -> None:
        async def ready() -> bool:
            classes = await self.page.get_attribute("#relay-badge", "class")
            return "mcp-badge--ready" in classes.split()

        await eventually(ready, timeout_s=15)

    async def agent_is(self, state: str) -> None:
        async def there() -> bool:
            return await self.page.get_attribute("html", "data-agent") == state

        await eventually(there, timeout_s=10)

    async def running(self) -> None:
        await self.agent_is("running")

    async def idle(self) -> None:
        await self.agent_is("idle")

    async def requests_at_least(self, count: int) -> None:
        async def enough() -> bool:
            return len(self.model.requests) >= count

        await eventually(enough, timeout_s=10)


@dataclass(frozen=True)
class AgentRigSpec:
    """A module's agent rig: the model's API key the server hands the page (it must never reach the
    server's log), and what the page may say in its console as an error."""

    api_key: str = "sk-page-test-SECRET-42"
    allowed_console: tuple[str, ...] = (
        r"WebSocket connection to .* failed",  # the relay is not always running between tests
        r"Failed to load resource",  # the model's HTTP 500 and the CORS test's refused request
        r"has been blocked by CORS policy",
    )

    @contextlib.asynccontextmanager
    async def start(self, browser: Any, request: pytest.FixtureRequest) -> AsyncIterator[AgentRig]:
        sim = await started_sim(auth="accept")
        model = await ScriptedModelServer().start()
        served = await self._served(model)
        model.allow_origin = served.base  # the page fetches another port: CORS for exactly its origin
        relay_port = free_port()
        url = (
            f"{served.base}/?device=tcp:127.0.0.1:{sim.port}&relay=ws://127.0.0.1:{relay_port}/relay"
            "&relayRetryMs=300&agentSettleMs=0"
        )

        kept = KeptPage(browser, url, allowed_console=self.allowed_console, prepare=phone_connected)
        try:
            yield AgentRig(sim, model, served, relay_port, kept)  # each test's `fresh` boots the page
            if kept.watch is not None and not kept.watch.gone:
                kept.watch.assert_clean()
        finally:
            await kept.close()
            log = await asyncio.to_thread(served.stop)
            await model.stop()
            await sim.close()
        assert self.api_key not in log, "the API key reached the server's log"

    async def _served(self, model: ScriptedModelServer) -> ServedPhoneAgent:
        """``phone-agent serve`` handing the page ``model``, its key from the environment as users give it."""
        old_key = os.environ.get("PHONE_AGENT_MODEL_API_KEY")
        os.environ["PHONE_AGENT_MODEL_API_KEY"] = self.api_key
        try:
            return await asyncio.to_thread(
                ServedPhoneAgent, "--model-base-url", model.base_url, "--model", "scripted"
            )
        finally:
            if old_key is None:
                os.environ.pop("PHONE_AGENT_MODEL_API_KEY", None)
            else:
                os.environ["PHONE_AGENT_MODEL_API_KEY"] = old_key


# -- the live view -------------------------------------------------------------------------------------


async def page_point(page: Any, x: int, y: int) -> tuple[float, float]:
    """Where device pixel (x, y) is on the page: the view draws the 1080x2400 screen as object-fit:
    contain (the sim's size, not the image's: a frame being replaced has no natural size for a moment)."""
    return await page.evaluate(
        """([x, y]) => {
            const el = document.getElementById('screen');
            const r = el.getBoundingClientRect();
            const [w, h] = [1080, 2400];
            const scale = Math.min(el.clientWidth / w, el.clientHeight / h);
            const left = r.left + el.clientLeft + (el.clientWidth - w * scale) / 2;
            const top = r.top + el.clientTop + (el.clientHeight - h * scale) / 2;
            return [left + x * scale, top + y * scale];
        }""",
        [x, y],
    )


def centre_of(sim: SimulatedPhoneServer, label: str) -> tuple[int, int]:
    """The centre of the element showing ``label`` (its text or description) on the sim's screen."""
    from phone_agent.adb.ui_dump import parse_ui_dump
    from phone_agent.sim.android.ui import dump_xml

    for node in parse_ui_dump(dump_xml(sim.phone.windows())):
        if node.text == label or node.content_desc == label:
            return node.bounds.center
    raise AssertionError(f"no {label!r} on the sim's screen")
