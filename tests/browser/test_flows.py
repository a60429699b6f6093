"""Flows in the real page on both channels: run_flow through the MCP SDK's stdio client (relayed to the
page) and through WebMCP, on the simulated phone, checked with Debian's adb; flows saved on one channel
are the same on the other and in the Flows card, and survive a reload (IndexedDB); the card runs and
records flows.

One page and one ``phone-agent mcp`` serve the whole module.
"""

from __future__ import annotations

import asyncio

import jsonschema
import pytest

from phone_agent.sim.server import SimulatedPhoneServer
from phone_agent.tools.catalog import TOOLS_BY_NAME
from tests.flows.test_run_flow import EVERY_COMMAND, OPEN_CATALOG
from tests.support import KeptPage, eventually, free_port, mcp_stdio_session

pytestmark = pytest.mark.browser

FLOW = """\
appId: com.google.android.apps.messaging
name: hello on {channel}
env:
  WHO: nobody
---
- launchApp:
    clearState: true
- tapOn:
    id: conversation_name
    index: 0
- tapOn:
    id: compose_message_text
- inputText: ${{WHO}} via {channel}
- assertVisible: ${{WHO}} via {channel}
- tapOn: Send SMS
- assertVisible:
    id: message_text
    text: ${{WHO}} via {channel}
- runFlow:
    when:
      visible: Send SMS
    commands:
      - back
- assertVisible: Messages
"""


class Rig:
    def __init__(self, sim: SimulatedPhoneServer, kept: KeptPage, session, adb, serial: str) -> None:
        self.sim, self.kept, self.session, self.adb, self.serial = sim, kept, session, adb, serial
        self.page = None

    async def call(self, channel: str, tool: str, **args) -> dict:
        if channel == "webmcp":
            result = await self.page.webmcp.call_tool(tool, args)
        else:
            answer = await self.session.call_tool(tool, args)
            result = answer.model_dump(by_alias=True, mode="json", exclude_none=True)
        if not result.get("isError"):
            jsonschema.validate(result["structuredContent"], TOOLS_BY_NAME[tool].output_schema)
        return result

    async def ui_dump(self) -> str:
        command = "uiautomator dump /sdcard/check.xml >/dev/null && cat /sdcard/check.xml"
        return (await self.adb.output("-s", self.serial, "shell", command)).decode("utf-8", "replace")


@pytest.fixture(scope="module")
async def rig(browser, debian_adb):
    sim = SimulatedPhoneServer("127.0.0.1", free_port())
    sim.phone.clock = lambda: "12:00"
    await sim.start()
    port = free_port()
    # scrcpy off: the live view shows screenshots, whose pixels the clicks below are placed on.
    url = f"http://127.0.0.1:{port}/?device=tcp:127.0.0.1:{sim.port}&relayRetryMs=300&scrcpy=0"
    ready: asyncio.Future = asyncio.get_running_loop().create_future()
    done = asyncio.Event()

    async def hold_session() -> None:
        try:
            async with mcp_stdio_session("--port", str(port), "--self-check-delay", "0") as session:
                ready.set_result(session)
                await done.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            raise

    holder = asyncio.ensure_future(hold_session())
    session = await asyncio.wait_for(ready, 60)

    async def prepare(page) -> None:
        await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=30_000)
        await page.uncheck("#live-toggle")
        for _ in range(100):
            status = await session.call_tool("get_device_status", {})
            if not status.is_error:
                break
            await asyncio.sleep(0.1)

    kept = KeptPage(browser, url, prepare=prepare)
    try:
        serial = f"127.0.0.1:{sim.port}"
        await debian_adb.output("connect", serial)
        assert await debian_adb.wait_for_state(serial, "device") == "device"
        yield Rig(sim, kept, session, debian_adb, serial)
        await debian_adb.output("disconnect", serial)
        if kept.watch is not None and not kept.watch.gone:
            kept.watch.assert_clean()
    finally:
        await kept.close()
    done.set()
    await asyncio.wait_for(holder, 30)
    await sim.close()


@pytest.fixture
async def fresh(rig):
    rig.page, _watch = await rig.kept.get()
    rig.sim.phone.reset()
    return rig


@pytest.mark.parametrize("channel", ["mcp", "webmcp"])
async def test_every_command_runs_on_each_channel_and_adb_sees_what_it_did(fresh: Rig, channel):
    result = await fresh.call(
        channel,
        "run_flow",
        yaml=EVERY_COMMAND,
        env={"WHO": "Zoë 你好"},
        files={"subflows/open-catalog.yaml": OPEN_CATALOG},
    )
    report = result["structuredContent"]
    assert report["passed"] is True, [step for step in report["steps"] if step["status"] != "passed"]
    assert report["name"] == "every command" and len(report["steps"]) == 38
    assert fresh.sim.phone.state()["sent"] == [{"to": "Zhang San", "text": "Hello Zoë 你"}]
    assert b"Wi-Fi is disabled" in await fresh.adb.output("-s", fresh.serial, "shell", "dumpsys wifi")
    focus = await fresh.adb.output("-s", fresh.serial, "shell", "dumpsys window")
    assert b"com.android.chrome" in focus
    [shot] = report["screenshots"]
    assert result["content"][shot["image"]]["mimeType"] == "image/png"


@pytest.mark.parametrize("channel", ["mcp", "webmcp"])
async def test_run_flow_on_each_channel_types_non_ascii_and_adb_sees_it_sent(fresh: Rig, channel):
    flow = FLOW.format(channel=channel)
    result = await fresh.call(channel, "run_flow", yaml=flow, env={"WHO": "Zoë 你好"})
    report = result["structuredContent"]
    assert report["passed"] is True, report
    assert report["name"] == f"hello on {channel}"
    assert [step["status"] for step in report["steps"]] == ["passed"] * 9
    assert fresh.sim.phone.state()["sent"] == [{"to": "Zhang San", "text": f"Zoë 你好 via {channel}"}]
    assert f"Zoë 你好 via {channel}" in await fresh.ui_dump()  # the conversation list's snippet


async def test_a_failing_step_answers_the_screen_of_that_moment_on_webmcp(fresh: Rig):
    flow = (
        "appId: com.android.settings\n---\n- launchApp\n"
        "- assertNotVisible:\n    text: Settings\n    timeout: 200\n- back\n"
    )
    result = await fresh.call("webmcp", "run_flow", yaml=flow)
    report = result["structuredContent"]
    assert report["passed"] is False
    assert [step["status"] for step in report["steps"]] == ["passed", "failed", "skipped"]
    assert 'text "Settings" is not visible' in report["steps"][1]["error"]
    image = result["content"][report["failure"]["image"]]
    assert image["type"] == "image" and image["mimeType"] == "image/png"
    bad = await fresh.call("mcp", "run_flow", yaml="appId: a\n---\n- launchApp\n- fly: away\n")
    assert bad["isError"] and bad["structuredContent"]["code"] == "invalid_flow"
    assert bad["structuredContent"]["details"] == {"line": 4, "column": 3}


async def test_flows_are_one_set_on_every_channel_in_the_card_and_after_a_reload(fresh: Rig):
    page = fresh.page
    flow = "appId: com.android.settings\n---\n- launchApp\n- tapOn: Network & internet\n- tapOn: Wi-Fi\n"
    saved = await fresh.call("webmcp", "save_flow", name="wifi toggle", yaml=flow)
    assert saved["structuredContent"]["commands"] == 3
    listed = await fresh.call("mcp", "list_flows")
    assert "wifi toggle" in [item["name"] for item in listed["structuredContent"]["flows"]]
    row = page.locator('#flow-list li[data-flow="wifi toggle"]')
    await row.wait_for(timeout=10_000)
    await page.reload()
    await page.wait_for_selector("html[data-phone=connected]", state="attached", timeout=60_000)
    got = await fresh.call("mcp", "get_flow", name="wifi toggle")
    assert got["structuredContent"]["yaml"] == flow
    # The card runs it: Wi-Fi goes off, as Debian's adb sees it.
    await page.locator('#flow-list li[data-flow="wifi toggle"] button[data-action="run"]').click()
    await page.wait_for_selector("#flow-state[data-flow-state=passed]", timeout=30_000)
    out = await fresh.adb.output("-s", fresh.serial, "shell", "dumpsys wifi")
    assert b"Wi-Fi is disabled" in out
    # The card records: Record, an MCP call, Stop and save.
    await page.fill("#flow-record-name", "from the card")
    await page.click("#flow-record")
    await page.wait_for_selector("#flow-state[data-flow-state=recording]", timeout=10_000)
    tapped = await fresh.call("mcp", "tap", target="text=Wi-Fi")
    assert not tapped.get("isError"), tapped
    await page.click("#flow-stop")
    await page.wait_for_selector('#flow-list li[data-flow="from the card"]', timeout=10_000)
    shown = await page.text_content("#flow-yaml")
    assert "- tapOn: Wi-Fi" in shown
    await fresh.call("webmcp", "delete_flow", name="from the card")
    await eventually(lambda: _gone(page, "from the card"))


async def _gone(page, name: str) -> bool:
    return await page.locator(f'#flow-list li[data-flow="{name}"]').count() == 0


async def page_point(page, x: int, y: int) -> tuple[float, float]:
    """Where device pixel (x, y) is on the page (the view draws the 1080x2400 screen object-fit:contain)."""
    return await page.evaluate(
        """([x, y]) => {
            const el = document.getElementById('screen');
            const r = el.getBoundingClientRect();
            const scale = Math.min(el.clientWidth / 1080, el.clientHeight / 2400);
            const left = r.left + el.clientLeft + (el.clientWidth - 1080 * scale) / 2;
            const top = r.top + el.clientTop + (el.clientHeight - 2400 * scale) / 2;
            return [left + x * scale, top + y * scale];
        }""",
        [x, y],
    )


def centre_of(sim: SimulatedPhoneServer, label: str) -> tuple[int, int]:
    from phone_agent.adb.ui_dump import parse_ui_dump
    from phone_agent.sim.android.ui import dump_xml

    for node in parse_ui_dump(dump_xml(sim.phone.windows())):
        if node.text == label or node.content_desc == label:
            return node.bounds.center
    raise AssertionError(f"no {label!r} on the sim's screen")


async def test_clicks_on_the_live_view_are_recorded_by_the_elements_text_and_replay(fresh: Rig):
    page = fresh.page
    phone = fresh.sim.phone
    await page.set_viewport_size({"width": 1280, "height": 1600})
    await page.check("#live-toggle")
    try:
        shown = "document.getElementById('screen').naturalWidth === 1080"
        await page.wait_for_function(shown, timeout=30_000)
        await page.fill("#flow-record-name", "by hand")
        await page.click("#flow-record")
        await page.wait_for_selector("#flow-state[data-flow-state=recording]", timeout=10_000)
        await page.mouse.click(*await page_point(page, *centre_of(fresh.sim, "Settings")))
        await eventually(_is(lambda: phone.current == "com.android.settings"), 15)
        await eventually(_shows(fresh.sim, "Network & internet"), 15)
        await page.mouse.click(*await page_point(page, *centre_of(fresh.sim, "Network & internet")))
        await eventually(_shows(fresh.sim, "Wi-Fi"), 15)
        await page.click("#flow-stop")
        await page.wait_for_selector('#flow-list li[data-flow="by hand"]', timeout=10_000)
    finally:
        await page.uncheck("#live-toggle")
    recorded = (await fresh.call("mcp", "get_flow", name="by hand"))["structuredContent"]["yaml"]
    assert "- tapOn: Settings\n" in recorded and "- tapOn: Network & internet\n" in recorded, recorded
    phone.reset()
    report = (await fresh.call("webmcp", "run_flow", name="by hand"))["structuredContent"]
    assert report["passed"] is True, report
    assert "Connected to PhoneAgent-WiFi" in await fresh.ui_dump()


def _is(check):
    async def run():
        return check()

    return run


def _shows(sim: SimulatedPhoneServer, label: str):
    async def run():
        try:
            centre_of(sim, label)
        except AssertionError:
            return False
        return True

    return run


SCRIPTED = """\
appId: com.phoneagent.login
name: scripted on {channel}
env:
  PREFIX: mob
---
- runScript:
    file: scripts/user.js
    env:
      SUFFIX: ium
- launchApp:
    clearState: true
- tapOn: {{id: username}}
- inputText: ${{output.user}}
- tapOn: {{id: password}}
- inputText: ${{output.password}}
- tapOn: Sign in
- assertVisible: Welcome, ${{output.user}}
- assertTrue: ${{output.status == 201 && MAESTRO_FILENAME == 'login'}}
"""


@pytest.mark.parametrize("channel", ["mcp", "webmcp"])
async def test_a_flow_with_scripts_runs_in_the_pages_sandboxed_engine(fresh: Rig, channel, http_api):
    host, seen = http_api
    script = f"""\
// the user comes from the API, the password from the script
const answer = http.post('http://{host}/users', {{ body: 'from the page' }});
output.status = answer.status;
output.user = json(answer.body).user;
output.password = 'hunter' + String(1 + 1);
console.log('signing in as', output.user, 'on', maestro.platform);
"""
    result = await fresh.call(
        channel,
        "run_flow",
        yaml=SCRIPTED.format(channel=channel),
        path="flows/login.yaml",
        files={"flows/scripts/user.js": script},
        allowHttp=host,
    )
    report = result["structuredContent"]
    assert report["passed"] is True, report
    assert report["steps"][0]["logs"] == ["signing in as mobium on android"]
    assert seen[-1]["method"] == "POST" and seen[-1]["body"] == "from the page"
    assert "Welcome, mobium" in await fresh.ui_dump()


async def test_the_pages_engine_stops_a_loop_and_sees_no_page_no_fetch_no_other_host(fresh: Rig, http_api):
    flow = "appId: com.android.settings\n---\n- runScript: spin.js\n"
    looping = await fresh.call(
        "webmcp",
        "run_flow",
        yaml=flow,
        files={"spin.js": "let n = 0;\nwhile (true) { n++; }\n"},
        scriptTimeoutMs=500,
    )
    error = looping["structuredContent"]["failure"]["error"]
    assert "spin.js" in error and "timeout" in error
    cases = {
        "const t = document.title;\n": "spin.js:1",
        "\nfetch('http://127.0.0.1:9/')\n": "fetch is not available",
        "\n\nhttp.get('http://example.com/')\n": "example.com is not an allowed host",
    }
    for script, words in cases.items():
        result = await fresh.call(
            "webmcp", "run_flow", yaml=flow, files={"spin.js": script}, allowHttp=http_api[0]
        )
        assert words in result["structuredContent"]["failure"]["error"], result["structuredContent"][
            "failure"
        ]
    # the page is fine and so is its engine
    assert (await fresh.call("webmcp", "run_flow", yaml="appId: a\n---\n- evalScript: ${1 + 1}\n"))[
        "structuredContent"
    ]["passed"]
