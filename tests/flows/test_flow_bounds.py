"""A flow stays within its bounds, as an attacker's flow would test them: a takeScreenshot path that climbs
out (``..``) or is absolute is refused when the flow is read (FILE:LINE:COLUMN, nothing run, nothing
written), and when a ``${NAME}`` makes it so at run time the step fails; ``repeat.times`` above the bound
is ``invalid_flow`` when read (never silently cut to fewer rounds), and a ``while`` that still holds
after the bound fails the step instead of passing."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from phone_agent.device.interface import UiNode
from phone_agent.flows.flow_reader import MAX_REPEAT, FlowError, read_flow
from phone_agent.flows.output_paths import OutputPathError, output_path
from phone_agent.flows.runner import FlowRunner
from phone_agent.server.flow_cli import _under
from phone_agent.tools.spec import Channel
from tests.flows.test_cli import phone_agent, write
from tests.server.harness import free_port

ESCAPES = [
    "../../../../outside/x",
    "shots/../../x",
    "..",
    "/tmp/phone-agent-outside/x",
    "\\\\server\\share\\x",
    "C:\\Windows\\x",
    "~/x",
    "shots\\..\\..\\x",
]


def screenshot_flow(path: str) -> str:
    return f"appId: com.android.settings\n---\n- back\n- takeScreenshot: '{path}'\n"


@pytest.mark.parametrize("path", ESCAPES)
def test_a_screenshot_path_that_leaves_the_folder_is_refused_when_read(path):
    with pytest.raises(FlowError) as caught:
        read_flow(screenshot_flow(path))
    assert (caught.value.line, caught.value.column) == (4, 19), str(caught.value)
    assert "output path" in caught.value.reason


@pytest.mark.parametrize("path", ["shot", "shots/home.png", "./x", "..x/y", "x..png", "a b/c"])
def test_paths_inside_the_folder_are_taken(path):
    flow = read_flow(screenshot_flow(path))
    assert flow.commands[1].args["path"] == path == output_path(path)
    with pytest.raises(OutputPathError):
        output_path(f"{path}/../../x")


async def test_run_flow_answers_invalid_flow_for_an_escaping_path(dispatcher, sim):
    result = await dispatcher.dispatch(
        "run_flow", {"yaml": screenshot_flow("../../../../outside/x")}, Channel.RELAY
    )
    assert result["isError"] and result["structuredContent"]["code"] == "invalid_flow"
    assert "line 4, column 19" in result["content"][0]["text"]


async def test_a_path_made_by_a_variable_is_checked_when_it_runs(dispatcher, sim):
    text = "appId: com.android.settings\n---\n- takeScreenshot: ${WHERE}\n- back\n"
    result = await dispatcher.dispatch(
        "run_flow", {"yaml": text, "env": {"WHERE": "../../outside/x"}}, Channel.RELAY
    )
    report = result["structuredContent"]
    assert report["passed"] is False and report["screenshots"] == []
    assert "climbs out" in report["failure"]["error"]
    assert [step["status"] for step in report["steps"]] == ["failed", "skipped"]


async def test_flow_run_refuses_an_escaping_screenshot_before_running_anything(tmp_path):
    work = tmp_path / "work"
    outside = tmp_path / "outside"
    work.mkdir()
    flow = write(work, "shots.yaml", screenshot_flow("../outside/x"))
    port = free_port()  # nothing listens: reading comes first
    code, out, err = await phone_agent("flow", "run", str(flow), "--port", str(port), cwd=work)
    assert code == 2, (out, err)
    assert f"{flow}:4:19: error: the output path '../outside/x' climbs out" in err
    assert not outside.exists()
    absolute = write(work, "abs.yaml", screenshot_flow(str(outside / "x")))
    code, out, err = await phone_agent("flow", "run", str(absolute), "--port", str(port), cwd=work)
    assert code == 2 and f"{absolute}:4:19: error: the output path" in err and "is absolute" in err
    assert not outside.exists()


def test_the_command_line_writes_only_under_its_folder_whatever_the_page_answers(tmp_path):
    (tmp_path / "link").symlink_to(tmp_path.parent)
    assert _under(tmp_path, "shots/a.png") == (tmp_path / "shots" / "a.png").resolve()
    for lie in [*ESCAPES, "link/x.png", "", None, 7, "a\x00b"]:
        assert _under(tmp_path, lie) is None, lie


# ----- repeat ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("times", [MAX_REPEAT + 1, 1_000_000_000, -1])
def test_repeat_times_beyond_the_bound_is_refused_when_read(times):
    text = f"appId: a\n---\n- back\n- repeat:\n    times: {times}\n    commands: [back]\n"
    with pytest.raises(FlowError) as caught:
        read_flow(text)
    assert (caught.value.line, caught.value.column) == (5, 12), str(caught.value)
    assert f"from 0 to {MAX_REPEAT}" in caught.value.reason and str(times) in caught.value.reason


async def test_run_flow_answers_invalid_flow_for_a_billion_rounds(dispatcher, sim):
    text = "appId: a\n---\n- repeat:\n    times: 1000000000\n    commands: [back]\n"
    result = await dispatcher.dispatch("run_flow", {"yaml": text}, Channel.RELAY)
    assert result["isError"] and result["structuredContent"]["code"] == "invalid_flow"
    assert "line 4, column 12" in result["content"][0]["text"]


def test_repeat_at_the_bound_is_taken():
    flow = read_flow(f"appId: a\n---\n- repeat:\n    times: {MAX_REPEAT}\n    commands: [back]\n")
    assert flow.commands[0].args["times"] == MAX_REPEAT


class CountingPhone:
    """A phone whose screen never changes, counting the keys pressed (the runner is pure: this is all
    it needs for a repeat)."""

    def __init__(self) -> None:
        self.presses = 0

    async def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        self.presses += tool == "press_key"
        return {}

    async def nodes(self) -> list[UiNode]:
        return []

    async def screenshot(self) -> bytes:
        return b"\x89PNG\r\n\x1a\n"

    async def delete_chars(self, count: int) -> None:
        return None

    async def shell(self, command: str) -> str:
        return ""


def quick_runner(phone: CountingPhone) -> FlowRunner:
    clock = [0.0]

    async def sleep(seconds: float) -> None:
        clock[0] += seconds * 1000
        await asyncio.sleep(0)

    return FlowRunner(phone, sleep=sleep, monotonic_ms=lambda: clock[0])


async def test_a_while_that_still_holds_at_the_bound_fails_instead_of_passing():
    phone = CountingPhone()
    flow = read_flow("appId: a\n---\n- repeat:\n    while:\n      notVisible: Done\n    commands: [back]\n")
    answer = await quick_runner(phone).run(flow, timeout_ms=10**9)
    assert answer["passed"] is False
    assert f"still held after {MAX_REPEAT} rounds" in answer["failure"]["error"]
    assert phone.presses == MAX_REPEAT


async def test_times_from_a_variable_beyond_the_bound_fails_the_step():
    phone = CountingPhone()
    flow = read_flow("appId: a\n---\n- repeat:\n    times: ${N}\n    commands: [back]\n")
    answer = await quick_runner(phone).run(flow, {"N": "1000000000"})
    assert answer["passed"] is False and f"from 0 to {MAX_REPEAT}" in answer["failure"]["error"]
    assert phone.presses == 0
    answer = await quick_runner(phone).run(flow, {"N": "3"})
    assert answer["passed"] is True and phone.presses == 3
    answer = await quick_runner(phone).run(flow, {"N": "lots"})
    assert answer["passed"] is False and "must be a number" in answer["failure"]["error"]
