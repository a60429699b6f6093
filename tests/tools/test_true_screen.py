"""The screen's true size (issue 35, item 1): from the display (its natural size turned by the dump's own
rotation), else from the union of the tree's windows — never from the first node, which a dump of several
windows may give to the status bar. list_elements lists such a screen whole, each element with its window
and its own locator; taps below the status bar are not refused off_screen; a direction swipe crosses the
screen, not the strip; the flows' selectors see the same screen; the recorder finds a node by identity."""

from __future__ import annotations

from typing import Any

from phone_agent.adb.ui_dump import read_ui_dump
from phone_agent.device.interface import UiTree
from phone_agent.errors import DeviceError
from phone_agent.flows.selectors import UiScreen, find
from phone_agent.tools.dispatch import ToolDispatcher
from phone_agent.tools.flow_keeping import acted_before
from phone_agent.tools.spec import Channel
from tests.ui_corpus.screens import DUMPS
from tests.ui_corpus.shapes import n, render, status_bar


class TreeDevice:
    """A phone that shows one dump; ``display`` is what screen_info says (None: it cannot say)."""

    def __init__(self, xml: str, display: tuple[int, int, int] | None) -> None:
        self.dump = read_ui_dump(xml)
        self.display = display
        self.taps: list[tuple[int, int]] = []
        self.swipes: list[tuple[int, int, int, int]] = []

    async def ui_tree(self) -> UiTree:
        return UiTree(self.dump.nodes, "uiautomator-dump", self.dump.note, self.dump.rotation)

    async def ui_nodes(self) -> list:
        return self.dump.nodes

    async def screen_info(self) -> dict[str, Any]:
        if self.display is None:
            raise DeviceError("the phone did not say its screen size: no answer")
        width, height, rotation = self.display
        return {
            "width": width,
            "height": height,
            "rotation": rotation,
            "density": 420,
            "orientation": "landscape" if width > height else "portrait",
            "screenOn": True,
        }

    async def info(self) -> dict[str, Any]:
        return {}

    async def current_app(self) -> str | None:
        return "com.android.settings/.Settings"

    async def tap(self, x: int, y: int) -> None:
        self.taps.append((x, y))

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        self.swipes.append((x1, y1, x2, y2))


def rig(name: str, display: tuple[int, int, int] | None) -> tuple[ToolDispatcher, TreeDevice]:
    dump = next(d for d in DUMPS if d.name == name)
    context = ToolDispatcher()
    device = TreeDevice(dump.xml, display)
    context.device = device
    return context, device


async def call(context: ToolDispatcher, tool: str, **args: Any) -> dict[str, Any]:
    answer = await context.dispatch(tool, args, Channel.RELAY)
    assert not answer.get("isError"), answer
    return answer


async def test_a_dump_that_begins_with_the_status_bar_is_listed_whole() -> None:
    for display in ((1440, 3120, 0), None):  # the display says its size, or only the windows do
        context, device = rig("settings-1440x3120-sna", display)
        answer = await call(context, "list_elements")
        listed = answer["structuredContent"]
        assert listed["screen"] == {"width": 1440, "height": 3120}
        texts = [e.get("text") for e in listed["elements"]]
        assert "Connected devices" in texts and "Wallpaper & style" in texts and "3:17 PM" in texts
        clock = next(e for e in listed["elements"] if e.get("text") == "3:17 PM")
        assert clock["window"] == "system" and clock["locator"] == "id=clock"
        assert "windows: system, app" in answer["content"][-1]["text"] or "windows:" in str(answer)
        await call(context, "tap", x=700, y=2000)  # below the 80-pixel strip: on the screen
        await call(context, "swipe", direction="up")
        _, y1, _, y2 = device.swipes[-1]
        assert y1 - y2 > 1000 and 80 < y2 < y1 < 3120


async def test_a_point_off_the_true_screen_is_refused() -> None:
    context, _ = rig("settings-1080x2400-nsa", (1080, 2400, 0))
    refused = await context.dispatch("tap", {"x": 500, "y": 2400}, Channel.RELAY)
    assert refused["isError"] and refused["structuredContent"]["code"] == "off_screen"
    assert "1080x2400" in refused["content"][0]["text"] or "1080" in refused["content"][0]["text"]


async def test_the_display_is_turned_by_the_dumps_own_rotation() -> None:
    context, _ = rig("maps-landscape", (1080, 2400, 0))  # read in portrait; the phone turned since
    listed = (await call(context, "list_elements"))["structuredContent"]
    assert listed["screen"] == {"width": 2400, "height": 1080}
    centres = {e.get("desc"): e["center"] for e in listed["elements"]}
    assert centres["Directions"] == {"x": 2265, "y": 865}


async def test_screen_text_matches_both_ways() -> None:
    context, device = rig("settings-1080x2400-san", (1080, 2400, 0))
    for target in ("text=3:17 PM", "text=3:17\u202fPM", "textContains=17 pm", "text=3:17\u00a0PM"):
        tapped = await call(context, "tap", target=target)
        assert tapped["structuredContent"]["matches"] == 1, target
    assert len(set(device.taps)) == 1


async def test_the_flows_screen_is_the_union_of_the_windows() -> None:
    dump = next(d for d in DUMPS if d.name == "settings-1080x2400-nsa")
    screen = UiScreen(read_ui_dump(dump.xml).nodes)
    assert (screen.width, screen.height) == (1080, 2400)
    assert any(node.text == "Connected devices" for node in screen.nodes)


async def test_the_recorder_finds_a_node_by_identity_not_by_text() -> None:
    # A row with no text, and a container of exactly its bounds inside it: both have no text, so a
    # lookup by text picks either; the recorder must name the row it was asked about.
    row = n(
        "LinearLayout",
        (0, 300, 1080, 500),
        n("FrameLayout", (0, 300, 1080, 500), n("TextView", (40, 340, 1000, 400), text="Printing")),
        clickable=True,
    )
    other = n(
        "LinearLayout",
        (0, 500, 1080, 700),
        n("TextView", (40, 540, 1000, 600), text="Printing"),
        clickable=True,
    )
    app = n("FrameLayout", (0, 0, 1080, 2400), row, other, pkg="com.android.settings")
    context = ToolDispatcher()
    device = TreeDevice(render([status_bar(1080), app]), (1080, 2400, 0))
    context.device = device
    listed = (await call(context, "list_elements"))["structuredContent"]
    second = [e for e in listed["elements"] if e["role"] == "button"][1]
    acted = await acted_before(context.session(), "tap", {"target": second["ref"]})
    assert acted is not None and acted.selector is not None and acted.point is None
    assert acted.selector["containsDescendants"] == [{"text": "Printing"}]
    found = find(acted.selector, UiScreen(device.dump.nodes))
    assert found[0].bounds.top == 500 and found[0].clickable  # the second row, not the first
