"""Every tool that takes a target accepts exactly what list_elements emits as an element's locator
(issue 35, item 2): list_elements' own target, wait_for, assert_visible, scroll_to, tap, long_press and
type_text each find that very element; and the flow a recording makes of it replays. On the simulated
phone's screens."""

from __future__ import annotations

from phone_agent.flows.recorder import locator_selector
from phone_agent.flows.selectors import UiScreen, find
from phone_agent.tools.dispatch import ToolDispatcher
from phone_agent.tools.spec import Channel
from tests.agent.sim_device import SimDevice


async def call(context: ToolDispatcher, tool: str, **args) -> dict:
    answer = await context.dispatch(tool, args, Channel.WEBMCP)
    assert not answer.get("isError"), (tool, args, answer)
    return answer["structuredContent"]


async def test_each_locator_is_accepted_by_every_tool_that_takes_a_target() -> None:
    context = ToolDispatcher()
    device = SimDevice()
    context.device = device
    for package in ("com.android.settings", "com.phoneagent.catalog", "com.phoneagent.login"):
        device.phone.launch(package)
        listed = await call(context, "list_elements")
        assert listed["elements"]
        for element in listed["elements"]:
            locator = element["locator"]
            again = await call(context, "list_elements", target=locator)
            assert [e["bounds"] for e in again["elements"]] == [element["bounds"]], locator
            waited = await call(context, "wait_for", target=locator, condition="visible", timeoutMs=1000)
            assert waited["element"]["bounds"] == element["bounds"], locator
            assert (await call(context, "assert_visible", target=locator))["element"]["bounds"] == element[
                "bounds"
            ]
            scrolled = await call(context, "scroll_to", target=locator, maxSwipes=0)
            assert scrolled["element"]["bounds"] == element["bounds"] and scrolled["swipes"] == 0
            selector = locator_selector(locator)
            if selector is not None:  # said in a flow's words (role= and class= have none)
                nodes = await device.ui_nodes()
                first = find(selector, UiScreen(nodes))[0]
                box = first.bounds
                assert (box.left, box.top, box.right, box.bottom) == tuple(element["bounds"].values()), (
                    locator
                )
        field = (
            next(e for e in listed["elements"] if e["role"] == "input") if package.endswith("login") else None
        )
        if field is not None:
            typed = await call(context, "type_text", target=field["locator"], text="mobium")
            assert typed["target"] == field["locator"] and typed["matches"] == 1
    device.phone.launch("com.android.settings")
    listed = await call(context, "list_elements")
    row = next(e for e in listed["elements"] if e["locator"] == "role=button; index=1")
    pressed = await call(context, "long_press", target=row["locator"])
    assert (pressed["x"], pressed["y"]) == (row["center"]["x"], row["center"]["y"])
    tapped = await call(context, "tap", target=row["locator"])
    assert tapped["matches"] == 1 and device.phone.state()["screen"] == "settings/connected"
