"""``phone-agent flow run`` and ``phone-agent call`` as a CI job runs them: real processes, a real
``phone-agent serve`` (the shared server), a page answering on its relay with the page's dispatch on the
simulated phone, and Debian's adb checking what the flows did. A recording made through MCP calls on
``/mcp`` replays to the same phone state."""

from __future__ import annotations

import asyncio
import base64
import os
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from xml.etree import ElementTree

import pytest

from tests.flows.relay_page import RelayedPage, relayed_page
from tests.server.harness import (
    PAGE_FILES,
    PHONE_AGENT,
    free_port,
    http_session,
    serve_process,
    stop_server,
    token,
)

PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC"
PASSING = """\
appId: com.google.android.apps.messaging
name: say hello
env:
  WHO: nobody
---
- runFlow: common/open-first-conversation.yaml
- tapOn:
    id: compose_message_text
- inputText: Hi ${WHO}
- tapOn: Send SMS
- assertVisible:
    id: message_text
    text: Hi ${WHO}
"""
OPEN_FIRST = """\
appId: com.google.android.apps.messaging
---
- launchApp
- tapOn:
    id: conversation_name
    index: 0
"""
FAILING = """\
appId: com.android.settings
name: wants bluetooth
---
- launchApp
- assertVisible:
    text: Bluetooth
    timeout: 300
- back
"""


@pytest.fixture(scope="module")
def page_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("page-root")
    for name, data in PAGE_FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    return root


@pytest.fixture
def server(page_root: Path, tmp_path: Path) -> Iterator[int]:
    port = free_port()
    args = ["--port", str(port), "--root", str(page_root), "--self-check-delay", "0"]
    args += ["--page-wait-ms", "10000"]
    with serve_process(args, tmp_path / "serve.txt"):
        yield port


@pytest.fixture
async def page(server: int, dispatcher) -> AsyncIterator[RelayedPage]:
    async with relayed_page(server, dispatcher) as answering:
        yield answering


async def phone_agent(*args: str, cwd: Path | None = None) -> tuple[int, str, str]:
    """The command, in a process of its own, while this test's event loop keeps the page answering."""
    process = await asyncio.create_subprocess_exec(
        PHONE_AGENT, *args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
        env={**os.environ, "PYTHONIOENCODING": "utf-8"},
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 120)
    return process.returncode or 0, out.decode(), err.decode()


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


async def test_flow_run_passes_a_flow_with_a_run_flow_file_and_non_ascii_env(server, page, by_adb, tmp_path):
    flow = write(tmp_path, "hello.yaml", PASSING)
    write(tmp_path, "common/open-first-conversation.yaml", OPEN_FIRST)
    code, out, err = await phone_agent(
        "flow", "run", str(flow), "--port", str(server), "--env", "WHO=Zoë 你好", cwd=tmp_path
    )
    assert code == 0, (out, err)
    assert "PASSED say hello" in out and "1/1 flows passed" in out
    assert "[1/5] ✅ runFlow: common/open-first-conversation.yaml" in err  # progress, step by step
    assert "Hi Zoë 你好" in await by_adb.screen_texts()
    assert page.calls == ["run_flow"]


async def test_flow_run_reports_a_failed_step_in_junit_with_the_screenshot(server, page, by_adb, tmp_path):
    good = write(tmp_path, "hello.yaml", PASSING)
    write(tmp_path, "common/open-first-conversation.yaml", OPEN_FIRST)
    bad = write(tmp_path, "bluetooth.yaml", FAILING)
    report = tmp_path / "reports" / "junit.xml"
    code, out, err = await phone_agent(
        "flow", "run", str(good), str(bad), "--port", str(server), "--format", "junit",
        "--output", str(report), "--env", "WHO=CI",
    )  # fmt: skip
    assert code == 1, (out, err)
    suite = ElementTree.parse(report).getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "2" and suite.get("failures") == "1"
    passed, failed = suite.findall("testcase")
    assert passed.get("name") == "say hello" and passed.find("failure") is None
    assert failed.get("name") == "wants bluetooth"
    failure = failed.find("failure")
    assert failure is not None
    assert failure.get("message", "").startswith(
        "step 2 `assertVisible: {text: Bluetooth, timeout: 300}` failed"
    )
    assert '"Network & internet"' in failure.get("message", "")  # what the screen showed instead
    attachment = failed.findtext("system-out") or ""
    assert attachment.startswith("[[ATTACHMENT|") and attachment.endswith("]]")
    png = Path(attachment[len("[[ATTACHMENT|") : -2])
    assert png.parent == report.parent.resolve() and png.read_bytes().startswith(b"\x89PNG")
    assert "Settings" in await by_adb.screen_texts()  # `back` after the failure never ran


async def test_flow_run_refuses_an_unreadable_flow_with_exit_2_before_running_anything(tmp_path):
    bad = write(tmp_path, "bad.yaml", "appId: a\n---\n- launchApp\n- tapOn: {id: x\n")
    unknown = write(tmp_path, "unknown.yaml", "appId: a\n---\n- launchApp\n- teleport: home\n")
    port = free_port()  # nothing listens there: reading comes first, and needs no server
    code, out, err = await phone_agent("flow", "run", str(bad), str(unknown), "--port", str(port))
    assert code == 2, (out, err)
    assert f"{bad}:4:16: error: the {{ is not closed" in err
    assert f"{unknown}:4:3: error: unsupported command 'teleport'" in err
    missing = tmp_path / "nope.yaml"
    code, _, err = await phone_agent("flow", "run", str(missing), "--port", str(port))
    assert code == 2 and f"{missing}:1:1: error: cannot read the file" in err


async def test_flow_run_device_must_be_the_pages_phone(server, page, tmp_path):
    flow = write(tmp_path, "f.yaml", "appId: com.android.settings\n---\n- launchApp\n")
    code, out, _ = await phone_agent(
        "flow", "run", str(flow), "--port", str(server), "--device", "not-this-one"
    )
    assert code == 1 and "not 'not-this-one'" in out
    serial = (await page.dispatcher.device_info())["serial"]
    code, out, err = await phone_agent("flow", "run", str(flow), "--port", str(server), "--device", serial)
    assert code == 0, (out, err)


async def test_call_prints_the_answer_or_the_error_code_and_exits_1(server, page, by_adb):
    code, out, err = await phone_agent("call", "get_device_status", "--port", str(server), "--json")
    assert code == 0, err
    assert '"connected": true' in out and '"screenWidth": 1080' in out
    opening = '{"packageName": "com.android.settings"}'
    code, out, err = await phone_agent("call", "open_app", opening, "--port", str(server))
    assert code == 0 and "com.android.settings" in out
    assert await by_adb.focused_package() == "com.android.settings"
    code, out, err = await phone_agent("call", "tap", '{"target": "text=Nowhere"}', "--port", str(server))
    assert code == 1 and out == ""
    assert 'no_such_element: No element matches "text=Nowhere"' in err
    code, _, err = await phone_agent("call", "tap", "[1]", "--port", str(server))
    assert code == 2 and "JSON object" in err


async def test_a_recording_made_through_mcp_calls_replays_to_the_same_phone_state(server, page, by_adb):
    async with http_session(server, token()) as mcp:
        await mcp.call_tool("press_key", {"key": "home"})
        started = await mcp.call_tool("start_flow_recording", {})
        assert not started.is_error
        for tool, args in [
            ("open_app", {"packageName": "com.android.settings"}),
            ("tap", {"target": "text=Network & internet"}),
            ("tap", {"x": 540, "y": 520}),  # the Wi-Fi row, by point: recorded by its text
            ("press_key", {"key": "back"}),
            ("tap", {"target": "text=Connected devices"}),
        ]:
            answer = await mcp.call_tool(tool, args)
            assert not answer.is_error, answer
        recorded = await mcp.call_tool("stop_flow_recording", {"name": "wifi-by-hand"})
        assert not recorded.is_error and recorded.structured_content["saved"] is True
        text = recorded.structured_content["yaml"]
        assert "- tapOn: Network & internet\n" in text and "- tapOn: Wi-Fi\n" in text and "- back\n" in text
        assert "point" not in text
        after_recording = (
            await by_adb.wifi_on(),
            await by_adb.focused_package(),
            await by_adb.screen_texts(),
        )
        # Back to how it began, then the replay, by name, with no model anywhere.
        await by_adb.shell("cmd wifi set-wifi-enabled enabled")
        await by_adb.shell("input keyevent KEYCODE_HOME")
        replay = await mcp.call_tool("run_flow", {"name": "wifi-by-hand"})
        assert replay.structured_content["passed"] is True, replay.structured_content
    replayed = (await by_adb.wifi_on(), await by_adb.focused_package(), await by_adb.screen_texts())
    assert after_recording[0] is False and replayed[:2] == after_recording[:2]
    assert "Connected devices" in replayed[2] and "Bluetooth" in replayed[2]


async def test_call_starts_the_shared_server_when_none_runs_and_waits_for_a_page(tmp_path):
    port = free_port()
    try:
        code, out, err = await phone_agent("call", "get_device_status", "--port", str(port))
        assert code == 1 and out == ""
        assert "browser_not_connected: Browser not connected. Open the phone-agent page first." in err
        # What to do, at once: the command that prints the page's link (never the token, on no terminal).
        assert f"run `phone-agent url --port {port}` and open the link it prints" in err
        assert "?token=" not in err
        flow = write(tmp_path, "f.yaml", "appId: com.android.settings\n---\n- launchApp\n")
        code, out, _ = await phone_agent("flow", "run", str(flow), "--port", str(port))  # the same server
        assert code == 1 and "browser_not_connected" in out
    finally:
        stop_server(port)


async def test_flow_run_runs_a_folder_as_a_maestro_workspace_into_one_junit_report(
    server, page, by_adb, tmp_path
):
    folder = tmp_path / "suite"
    write(folder, "config.yaml", "includeTags: [smoke]\nexecutionOrder:\n  flowsOrder: [wifi off]\n")
    write(folder, "a-settings.yaml", "appId: com.android.settings\ntags: [smoke]\n---\n- launchApp\n")
    write(
        folder,
        "b-wifi.yaml",
        "appId: com.android.settings\nname: wifi off\ntags: [smoke, network]\n---\n- launchApp\n"
        "- tapOn: Network & internet\n- tapOn: Wi-Fi\n- assertTrue: ${MAESTRO_FILENAME == 'b-wifi'}\n",
    )
    write(folder, "c-untagged.yaml", "appId: com.android.settings\n---\n- tapOn: Nowhere at all\n")
    write(folder, "subflows/inner.yaml", "appId: com.android.settings\ntags: [smoke]\n---\n- back\n")
    report = tmp_path / "reports" / "junit.xml"
    code, out, err = await phone_agent(
        "flow", "run", str(folder), "--port", str(server), "--format", "junit", "--output", str(report)
    )
    assert code == 0, (out, err)
    suite = ElementTree.parse(report).getroot()
    cases = [case.get("name") for case in suite.iter("testcase")]
    assert cases == ["wifi off", "a-settings"]  # the executionOrder first, untagged and subfolders left out
    assert not await by_adb.wifi_on()
    code, out, err = await phone_agent(
        "flow", "run", str(folder), "--port", str(server), "--exclude-tags", "network", cwd=tmp_path
    )
    assert code == 0 and "1/1 flows passed" in out and "a-settings" in out, (out, err)


async def test_flow_run_sends_scripts_and_media_and_allows_only_the_hosts_given(
    server, page, http_api, tmp_path
):
    host, seen = http_api
    folder = tmp_path / ".maestro"
    write(
        folder,
        "flows/api.yaml",
        "appId: com.android.settings\n---\n- runScript: ../scripts/api.js\n"
        "- addMedia:\n    - ../media/note.png\n"
        "- assertTrue: ${output.user == 'mobium'}\n",
    )
    write(
        folder,
        "scripts/api.js",
        f"output.user = json(http.get('http://{host}/me').body).user;\nconsole.log('hi');\n",
    )
    (folder / "media").mkdir()
    (folder / "media" / "note.png").write_bytes(base64.b64decode(PNG_1PX))
    report = tmp_path / "junit.xml"
    flow = folder / "flows" / "api.yaml"
    args = ["flow", "run", str(flow), "--port", str(server), "--format", "junit", "--output", str(report)]
    code, out, err = await phone_agent(*args, "--allow-http", host)
    assert code == 0, (out, err)
    assert seen[-1]["path"] == "/me" and "console.log: hi" in report.read_text()
    code, out, err = await phone_agent(*args)
    assert code == 1 and "is not an allowed host" in report.read_text()
    assert len(seen) == 1
