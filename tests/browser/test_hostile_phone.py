"""A hostile phone cannot crash the page: the simulated phone, told to answer as a broken or malicious one
(``sim/hostile.py``), floods logcat and dumpsys without end, sends a PNG without end, a small PNG that
says it is 100 000 pixels square, and a hierarchy server answer without end; the page (Pyodide in
Chromium, over the ADB bridge) stops each at its cap with a ``device_error`` naming it — on both
channels — and answers the very next call, with no page error and no reload. A UI tree 100 000 levels
deep or 50 000 nodes wide is read by the page's Python (Pyodide's small stack) without recursion, in
part, with a note saying what was left out. And a hostile caller's shell syntax in a value (a package,
a permission, a flow's appId) runs nothing on the phone.
"""

from __future__ import annotations

import time

import pytest

from phone_agent.adb.device import SCREENCAP_MAX
from phone_agent.adb.hierarchy_protocol import BODY_MAX
from phone_agent.adb.services import SHELL_OUTPUT_MAX
from phone_agent.adb.ui_dump import MAX_TREE_DEPTH, MAX_TREE_NODES
from tests.browser.rigs import PhoneRig as Rig
from tests.browser.rigs import PhoneRigSpec

pytestmark = pytest.mark.browser
MIB = 1024 * 1024


# app_process for u2, no scrcpy (the live view on screenshots): the hierarchy page's rig
RIG = PhoneRigSpec(sim={"hierarchy": True}, query="&scrcpy=0")


async def refused_at_cap(rig: Rig, channel: str, tool: str, cap: int, **args) -> str:
    started = time.monotonic()
    result = await rig.call(channel, tool, **args)
    assert result.get("isError") is True, result
    error = result["structuredContent"]
    assert error["code"] == "device_error", error
    assert f"{cap // MIB} MiB ({cap} bytes)" in error["message"], error
    assert "the cap for one answer" in error["message"] and error["remedy"], error
    assert time.monotonic() - started < 60
    return error["message"]


async def still_answers(rig: Rig, channel: str) -> None:
    """The next call, the same channel: the page is alive and its phone too."""
    status = await rig.call(channel, "get_device_status")
    assert not status.get("isError") and status["structuredContent"]["connected"] is True, status
    apps = await rig.call(channel, "list_apps")
    assert not apps.get("isError") and apps["structuredContent"]["apps"], apps


async def the_same_page(rig: Rig) -> None:
    """No reload happened and the page said nothing wrong."""
    page, watch = await rig.kept.get()
    assert page is rig.page, "the page had to be booted again"
    if watch is not None:
        watch.assert_clean()


@pytest.mark.parametrize("channel", ["mcp", "webmcp"])
async def test_logcat_and_dumpsys_without_end(fresh: Rig, channel: str):
    fresh.sim.set_hostile(["flood-output"])
    said = await refused_at_cap(fresh, channel, "read_logs", SHELL_OUTPUT_MAX, maxLines=5)
    assert "logcat" in said
    await refused_at_cap(fresh, channel, "list_notifications", SHELL_OUTPUT_MAX)
    await still_answers(fresh, channel)
    fresh.sim.set_hostile([])
    logs = await fresh.call(channel, "read_logs", maxLines=5)
    assert not logs.get("isError"), logs
    await the_same_page(fresh)


@pytest.mark.parametrize("channel", ["mcp", "webmcp"])
async def test_a_png_without_end(fresh: Rig, channel: str):
    fresh.sim.set_hostile(["huge-png"])
    await refused_at_cap(fresh, channel, "take_screenshot", SCREENCAP_MAX)
    await still_answers(fresh, channel)
    fresh.sim.set_hostile([])
    shot = await fresh.call(channel, "take_screenshot")
    assert not shot.get("isError") and shot["content"][0]["type"] == "image", shot
    await the_same_page(fresh)


@pytest.mark.parametrize("channel", ["mcp", "webmcp"])
async def test_a_png_that_says_it_is_gigapixels(fresh: Rig, channel: str):
    fresh.sim.set_hostile(["png-bomb"])
    for args in ({}, {"maxSide": 512, "format": "jpeg"}):
        result = await fresh.call(channel, "take_screenshot", **args)
        assert result["structuredContent"]["code"] == "device_error", result
        assert "over the cap of 16384 pixels a side" in result["structuredContent"]["message"]
    await still_answers(fresh, channel)
    await the_same_page(fresh)


@pytest.mark.parametrize("channel", ["mcp", "webmcp"])
async def test_a_hierarchy_answer_without_end(fresh: Rig, channel: str):
    listed = await fresh.call(channel, "list_elements")
    assert listed["structuredContent"]["treeSource"] == "hierarchy-server", listed
    fresh.sim.set_hostile(["huge-hierarchy"])
    said = await refused_at_cap(fresh, channel, "list_elements", BODY_MAX)
    assert "hierarchy server" in said
    await still_answers(fresh, channel)
    fresh.sim.set_hostile([])
    again = await fresh.call(channel, "list_elements")
    assert not again.get("isError"), again
    assert again["structuredContent"]["treeSource"] == "hierarchy-server", again
    await the_same_page(fresh)


@pytest.mark.parametrize("channel", ["mcp", "webmcp"])
@pytest.mark.parametrize("mode", ["deep-tree", "wide-tree"])
async def test_a_tree_too_deep_or_too_wide_is_read_in_part(fresh: Rig, channel: str, mode: str):
    fresh.sim.set_hostile([mode])
    answer = await fresh.call(channel, "list_elements", maxElements=5)
    assert not answer.get("isError"), answer
    listed = answer["structuredContent"]
    if mode == "deep-tree":
        assert (
            f"deeper than {MAX_TREE_DEPTH} levels (the tree goes 100,000 deep) left out" in listed["treeNote"]
        )
    else:
        assert f"more than {MAX_TREE_NODES:,} nodes" in listed["treeNote"], listed
        assert listed["total"] == MAX_TREE_NODES - 1 and listed["truncated"] and len(listed["elements"]) == 5
        assert all(element["locator"] for element in listed["elements"])
    await still_answers(fresh, channel)
    fresh.sim.set_hostile([])
    again = await fresh.call(channel, "list_elements")
    assert not again.get("isError") and "treeNote" not in again["structuredContent"], again
    assert any(element.get("text") == "Settings" for element in again["structuredContent"]["elements"])
    await the_same_page(fresh)


# ----- and a hostile caller: shell syntax in a value runs nothing, on either channel ----------------------


@pytest.mark.parametrize("channel", ["mcp", "webmcp"])
async def test_shell_syntax_in_a_value_runs_nothing_on_the_phone(fresh: Rig, channel: str):
    mark = f"/sdcard/Download/pwned-{channel}"
    attacks = [
        ("read_logs", {"packageName": f"com.x;touch {mark};echo"}, "invalid_argument"),
        ("list_crashes", {"packageName": f"$(touch {mark})"}, "invalid_argument"),
        ("set_permission", {"packageName": "com.android.settings", "permission": f"x;touch {mark}",
                            "granted": True}, "invalid_argument"),
        ("uninstall_app", {"packageName": f"`touch {mark}`"}, "invalid_argument"),
        ("run_flow", {"yaml": f'appId: "com.x;touch {mark};echo"\n---\n- launchApp:\n    clearState: true\n'},
         "invalid_flow"),
        ("run_flow", {"yaml": "appId: com.android.settings\n---\n- launchApp:\n    permissions:\n"
                              f'      "x;touch {mark};echo": allow\n'}, "invalid_flow"),
    ]  # fmt: skip
    for tool, args, code in attacks:
        result = await fresh.call(channel, tool, **args)
        assert result.get("isError") and result["structuredContent"]["code"] == code, (tool, result)
    env_attack = await fresh.call(
        channel,
        "run_flow",
        yaml="appId: ${APP}\n---\n- launchApp:\n    clearState: true\n    stopApp: false\n",
        env={"APP": f"com.x;touch {mark};echo"},
    )
    assert env_attack["structuredContent"]["passed"] is False, env_attack
    assert not fresh.sim.fs.exists(mark)
    await still_answers(fresh, channel)
