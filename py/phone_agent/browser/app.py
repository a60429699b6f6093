"""The page's start-up: builds the shared context, the UI, both channels, and wires them."""

from __future__ import annotations

import asyncio
import base64
import json
import time
from dataclasses import dataclass
from typing import Any

import js  # type: ignore[import-not-found]
from pyodide.ffi import create_proxy  # type: ignore[import-not-found]

from .. import __version__
from ..adb.services import exec_into
from ..relay.settings import relay_settings
from ..tools.catalog import DEFAULT_TOOL_PROFILE, ToolProfile
from ..tools.dispatch import ToolDispatcher
from ..tools.named_secrets import SecretBook
from ..tools.spec import Channel
from .agent_page import AgentPage
from .devloop_panel import DevLoopPanel
from .farm_client import FarmMembership
from .farm_settings import FarmSettingsCard
from .flow_scripts import WorkerScriptEngine
from .flow_store import IndexedDbFlowLibrary
from .flows_card import FlowsCard
from .interop import to_js_json
from .live_controls import LiveViewControls
from .pairing_ui import PairingForm
from .people_card import PeopleCard
from .phone import PhonePanel
from .relay_client import McpRelayClient, RelayPairing
from .secrets_card import SecretsCard
from .sim_offer import SimOffer
from .ui import PageUi
from .webmcp import WebMcpService


@dataclass
class PhoneAgentPage:
    context: ToolDispatcher
    ui: PageUi
    webmcp: WebMcpService
    relay: McpRelayClient
    phone: PhonePanel
    agent: AgentPage
    live_controls: LiveViewControls
    sim_offer: SimOffer
    phone_connecting: asyncio.Future[None] | None = None
    farm: FarmMembership | None = None
    devloop: DevLoopPanel | None = None
    flows: FlowsCard | None = None


async def fetch_server_config() -> dict[str, Any] | None:
    """``/api/config`` when phone-agent serves this page, else None (any static server works too)."""
    try:
        response = await js.fetch("api/config", js.JSON.parse('{"cache": "no-store"}'))
        if not response.ok:
            return None
        data = json.loads(await response.text())  # Python's json: null stays None (to_py gives jsnull)
        # A static site (phone-agent site) answers its own file, {"server": "static"}: no server of ours.
        return data if isinstance(data, dict) and data.get("server") == "phone-agent" else None
    except Exception:
        return None


async def claim_page_link() -> bool | None:
    """The page's link (``?token=`` from ``phone-agent url``) traded for the page cookie, and the token
    taken out of the address bar and the history at once. None: the URL had no token; else whether the
    server took it."""
    params = js.URLSearchParams.new(js.location.search)
    token = params.get("token")
    if not token:
        return None
    params.delete("token")
    query = str(params.toString())
    js.history.replaceState(
        js.history.state, "", f"{js.location.pathname}{'?' + query if query else ''}{js.location.hash}"
    )
    options = {
        "method": "POST",
        "cache": "no-store",
        "credentials": "same-origin",
        "headers": {"Content-Type": "application/json"},
        "body": json.dumps({"token": str(token)}),
    }
    try:
        response = await js.fetch("api/page-key", js.JSON.parse(json.dumps(options)))
    except Exception:
        return False
    if not response.ok:
        js.console.warn(
            "[MCP relay] the server did not take this link's token (rotated?): "
            "`phone-agent url` prints the current link"
        )
    return bool(response.ok)


async def start() -> PhoneAgentPage:
    ui = PageUi()
    context = ToolDispatcher()
    context.add_call_listener(ui.log_call)
    context.flow_library = IndexedDbFlowLibrary()  # saved flows survive a reload, the same on every channel
    context.script_engine = WorkerScriptEngine()  # flows' JavaScript: QuickJS in a Worker, sandboxed

    link_taken = await claim_page_link()
    server_config = await fetch_server_config()
    context.profile = tool_profile(server_config)
    # The agent (settings, chat panel, task history) before the channels: a call arriving at once
    # already finds the restored history and the configured model.
    agent = AgentPage(context, server_config)
    await agent.start()
    settings = relay_settings(str(js.location.href), server_config)
    if settings.refused:
        js.console.warn(f"[MCP relay] {settings.refused}")
    own_relay = server_config is not None and same_origin(settings.url, str(js.location.href))
    pairing_form = PairingForm(own_relay, link_taken, str(js.location.origin))
    relay = McpRelayClient(
        context,
        settings.url,
        settings.retry_ms,
        on_status_change=lambda connected: pairing_form.relay_status(connected, ui.set_relay_status),
        on_replaced=ui.set_relay_replaced,
        on_retry=ui.set_relay_retry,
        pairing=RelayPairing(
            settings.url,
            same_origin=own_relay,
            fetch_secret=fetch_pairing_secret,
            initial_secret=(server_config or {}).get("pairing"),
            on_code_needed=pairing_form.show,
        ),
    )
    pairing_form.on_code = relay.pair_with_code
    relay.on_task_record = lambda record: agent.history.merge(record, context, agent.panel)
    if own_relay:
        agent.history.on_record = TaskRecordSender(relay.pairing, bool((server_config or {}).get("pageKey")))
    # Secrets by name (Settings → Secrets, and the relay's server's): type_secret and the agent type them.
    secrets = SecretsCard(SecretBook())
    await secrets.load()
    secrets.book.fetch_server = relay.fetch_secret
    relay.on_secret_names = secrets.server_names
    context.secrets = agent.agent.secrets = secrets.book
    ui.show_relay_target(settings.url, relay.retry_now)

    webmcp = WebMcpService(context)
    webmcp.on_others = ui.show_other_tools
    ui.set_webmcp_status(await webmcp.register(), webmcp.registered, str(context.profile))
    pairing_form.connect(relay, server_config is not None or settings.named)
    phone = PhonePanel(context, (server_config or {}).get("adbBridge"), agent.settings.screen)
    # The Settings' screen part drives the live view's scrcpy; the agent looks at its frames.
    agent.settings.on_screen_change = phone.live.apply_screen_settings
    agent.agent.live = phone.live.looks(lambda: agent.settings.screen.live_looks)
    context.live_screen = phone.live.looks(lambda: True)  # take_screenshot's source "live" asks itself
    live_controls = LiveViewControls(context)
    devloop = DevLoopPanel(context)  # the Developer card: APK install, recording, the log
    sim_offer = SimOffer((server_config or {}).get("simOnDemand"), phone.connect_simulated)
    agent.runner.on_running = phone.live.agent_running
    # The person at the page: take over (the live view is theirs meanwhile), confirmations, the Setting.
    people = PeopleCard()
    people.on_settings = lambda settings: setattr(agent.agent, "settings", settings)
    people.on_handover = lambda held: phone.live.agent_running(not held)
    await people.load()
    agent.agent.person = people
    people.context = context
    context.before_call = people.check_call
    relay.on_confirm_always = lambda always: setattr(people, "confirm_relay_calls", always)
    agent.runner.on_frame = phone.live.show_agent_frame
    page = PhoneAgentPage(context, ui, webmcp, relay, phone, agent, live_controls, sim_offer)
    page.devloop = devloop
    page.phone_connecting = asyncio.ensure_future(phone.connect_at_load((server_config or {}).get("device")))
    # ?farm=ws://USER:PASSWORD@HOST:PORT, else the Settings card's Farm field (docs/farm.md).
    page.farm = FarmMembership(context)
    await page.farm.start()
    FarmSettingsCard(page.farm)
    flows = FlowsCard(context)
    page.flows = flows
    flows.start()  # the saved flows are listed once IndexedDB answers; the page does not wait for it
    expose_console_api(page)
    ui.ready()
    return page


def same_origin(relay_url: str, page_url: str) -> bool:
    """Whether the relay is this page's own server (same host and port): it hands this page its secret."""
    from urllib.parse import urlsplit

    relay, page = urlsplit(relay_url), urlsplit(page_url)
    return (relay.hostname, relay.port) == (page.hostname, page.port)


async def fetch_pairing_secret() -> str | None:
    secret = (await fetch_server_config() or {}).get("pairing")
    return secret if isinstance(secret, str) else None


TASK_RECORD_PATH = "api/task-record"


class TaskRecordSender:
    """Hands each task record this page stores to its server (``POST /api/task-record``), which keeps
    it for the page that replaces this one, in this browser or another. Only a page the server trusts
    sends: one holding the page cookie, or one paired by code (it shows the pairing secret)."""

    def __init__(self, pairing: RelayPairing | None, has_page_key: bool) -> None:
        self._pairing = pairing
        self._has_page_key = has_page_key
        self._sending: set[asyncio.Future[None]] = set()

    def __call__(self, record: dict[str, Any]) -> None:
        secret = self._pairing.secret_shown() if self._pairing is not None else None
        if not self._has_page_key and not secret:
            return
        headers = {"Content-Type": "application/json"}
        if secret and not self._has_page_key:
            headers["X-Phone-Agent-Pairing"] = secret
        options = {
            "method": "POST",
            "cache": "no-store",
            "credentials": "same-origin",
            "keepalive": True,  # a record written as the tab closes still arrives
            "headers": headers,
            "body": json.dumps(record),
        }
        future = asyncio.ensure_future(self._send(js.JSON.parse(json.dumps(options))))
        self._sending.add(future)
        future.add_done_callback(self._sending.discard)

    async def _send(self, options: Any) -> None:
        try:
            await js.fetch(TASK_RECORD_PATH, options)
        except Exception as exc:  # the server is gone: the record stays in this browser
            js.console.warn(f"[agent] could not hand a task record to the server: {exc}")


def tool_profile(server_config: dict[str, Any] | None) -> ToolProfile:
    """The server's tool profile (``toolProfile`` in /api/config), else all tools."""
    name = (server_config or {}).get("toolProfile")
    try:
        return ToolProfile(name) if isinstance(name, str) else DEFAULT_TOOL_PROFILE
    except ValueError:
        js.console.warn(f"[phone-agent] unknown tool profile {name!r} from the server; offering all tools")
        return DEFAULT_TOOL_PROFILE


def _profile_text(profiler: Any, rows: int = 25, cumulative: bool = False) -> str:
    """cProfile's ``rows`` functions with the most time of their own (then, with ``cumulative``, the
    most time in all), as text (for the benchmarks)."""
    import io
    import pstats

    profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("tottime").print_stats(rows)
    if cumulative:
        stats.sort_stats("cumulative").print_stats(rows)
    return out.getvalue()


def expose_console_api(page: PhoneAgentPage) -> None:
    """``window.phoneAgent``: a few handles for DevTools and tests (withdraw or re-offer the WebMCP tools,
    reconnect the relay). Each method returns a Promise."""
    api = js.Object.new()
    api.version = __version__

    async def unregister_webmcp() -> None:
        page.webmcp.unregister()
        page.ui.set_webmcp_status(False, [], str(page.context.profile))

    async def register_webmcp() -> None:
        registered = await page.webmcp.register()
        page.ui.set_webmcp_status(registered, page.webmcp.registered, str(page.context.profile))

    async def reconnect_relay() -> None:
        page.relay.retry_now()

    async def measure_pull(path: str, profile: bool = False) -> Any:
        """Stream ``exec:cat PATH`` from the phone and time it (bench/bench_page_adb.py uses this);
        with ``profile``, cProfile's top functions as text instead."""
        device = page.phone.device
        if device is None:
            raise RuntimeError("no phone connected")
        profiler = None
        if profile:
            import cProfile

            profiler = cProfile.Profile()
            profiler.enable()
        started = time.perf_counter()
        first: list[float] = []

        def sink(_chunk: bytes) -> None:
            if not first:
                first.append(time.perf_counter())

        size = await exec_into(device.opener, f"cat '{path}'", sink, timeout=300)
        ended = time.perf_counter()
        if profiler is not None:
            return _profile_text(profiler)
        first_ms = ((first[0] if first else ended) - started) * 1000
        return to_js_json({"bytes": size, "ms": (ended - started) * 1000, "firstByteMs": first_ms})

    async def measure_dispatch(tool: str, args_json: str, calls: int, profile: bool = False) -> Any:
        """Time ``calls`` tool calls through the page's one dispatch (what a relayed call runs, without
        the relay), each in ms; with ``profile``, cProfile's top functions as text instead
        (bench/bench_device_tools.py uses this)."""
        args = json.loads(args_json)
        times = []
        profiler = None
        if profile:
            import cProfile

            profiler = cProfile.Profile()
            profiler.enable()
        for _ in range(int(calls)):
            started = time.perf_counter()
            await page.context.dispatch(tool, args, Channel.RELAY)
            times.append((time.perf_counter() - started) * 1000)
        if profiler is not None:
            return _profile_text(profiler)
        return to_js_json(times)

    async def measure_device(method: str, args_json: str, calls: int) -> Any:
        """Time ``calls`` calls of one ``Device`` method on the connected phone (e.g. ``tap`` with
        ``[x, y]``, ``ui_nodes`` with ``[]``), each in ms (bench/bench_device_tools.py uses this)."""
        device = page.context.device
        if device is None:
            raise RuntimeError("no phone connected")
        args = json.loads(args_json)
        times = []
        for _ in range(int(calls)):
            started = time.perf_counter()
            await getattr(device, method)(*args)
            times.append((time.perf_counter() - started) * 1000)
        return to_js_json(times)

    async def bench_agent(
        variant: str,
        steps: int,
        png_base64: str,
        model_url: str = "",
        latency_ms: float = 0,
        actions: int = 3,
        on_phone: bool = False,
    ) -> Any:
        """One benchmark task of the agent in this page (bench/bench_agent_page.py uses this).

        ``png_base64``: one or more screenshots, base64, comma-separated (the phone alternates them);
        ``on_phone``: run on the connected phone instead.
        """
        from .agent_bench import probe_codec, run_variant  # only the benchmark loads it

        screens = [base64.b64decode(part) for part in png_base64.split(",")]
        if variant == "probe":
            return to_js_json(await probe_codec(screens[0], int(steps)))
        device = page.context.device if on_phone else None
        if on_phone and device is None:
            raise RuntimeError("no phone is connected")
        result = await run_variant(
            variant, int(steps), screens, model_url, float(latency_ms), int(actions), device
        )
        return to_js_json(result)

    async def profile_for(seconds: float, rows: int = 30) -> str:
        """cProfile of everything the page's Python runs for ``seconds`` (its calls, whichever channel
        brings them), top functions by own time then by cumulative time (bench/bench_farm.py uses this)."""
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
        try:
            await asyncio.sleep(float(seconds))
        finally:
            profiler.disable()
        return _profile_text(profiler, int(rows), cumulative=True)

    async def measure_looks(rounds: int) -> Any:
        """The agent's looks from the scrcpy frame against screencap (bench/bench_scrcpy.py)."""
        from .agent_bench import measure_looks as measure  # only the benchmark loads it

        device = page.context.device
        if device is None:
            raise RuntimeError("no phone is connected")
        return to_js_json(await measure(device, page.agent.agent.live, int(rounds)))

    async def memory_report() -> Any:
        """Where the page's memory goes, as the page sees it (bench/bench_page_memory.py)."""
        from .memory_report import memory_report as report  # only the benchmark loads it

        return to_js_json(report(page))

    for name, method in (
        ("memoryReport", memory_report),
        ("profileFor", profile_for),
        ("benchAgent", bench_agent),
        ("unregisterWebMcp", unregister_webmcp),
        ("registerWebMcp", register_webmcp),
        ("reconnectRelay", reconnect_relay),
        ("measurePull", measure_pull),
        ("measureDispatch", measure_dispatch),
        ("measureDevice", measure_device),
        ("measureLooks", measure_looks),
    ):
        setattr(api, name, create_proxy(method))
    js.window.phoneAgent = api
