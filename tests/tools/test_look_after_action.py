"""A look after an action (issue 37): list_elements reads at once and keeps that read only when it
shows the action's new window; a phone whose new window lags behind its focus (a real phone's launch:
the focus moves before the app's tree is there) never gets a listing of the screen from before the
action — the look reads again once the phone has settled. The phone here shows the simulated phone's
own dumps (launcher, Settings, Connected devices) in the order a lagging launch shows them."""

from __future__ import annotations

import asyncio
from typing import Any

from phone_agent.adb.ui_dump import read_ui_dump
from phone_agent.device.interface import TREE_SERVER, UiTree
from phone_agent.sim.android.commands.capture import screen_dump
from phone_agent.sim.android.phone import VirtualPhone
from phone_agent.tools.dispatch import ToolDispatcher
from phone_agent.tools.spec import Channel

LAUNCHER = "com.google.android.apps.nexuslauncher/.NexusLauncherActivity"
SETTINGS = "com.android.settings/.Settings"
CONNECTED = "com.android.settings/.Settings$ConnectedDeviceDashboardActivity"


def dumps() -> dict[str, str]:
    phone = VirtualPhone()
    screens = {"launcher": screen_dump(phone)}
    phone.launch("com.android.settings")
    screens["settings"] = screen_dump(phone)
    phone.tap(*center(phone, "Connected devices"))
    screens["connected"] = screen_dump(phone)
    return screens


def center(phone: VirtualPhone, text: str) -> tuple[int, int]:
    for window in phone.windows():
        for node in window.walk():
            if node.text == text:
                x1, y1, x2, y2 = node.bounds
                return (x1 + x2) // 2, (y1 + y2) // 2
    raise AssertionError(text)


class LaggingPhone:
    """Shows ``tree`` with the focus ``focus``; a tap moves the focus to ``next``'s at once, but
    the tree shows ``next``'s only from the read after the first (the window drawn late; at once
    without ``lag``), and the frames say the screen changed after any moment."""

    def __init__(self, tree: str, focus: str, *, lag: bool = True) -> None:
        self.tree, self.focus = tree, focus
        self.next: tuple[str, str] | None = None
        self.lag = lag
        self.lagging = False
        self.reads = 0

    async def ui_tree(self) -> UiTree:
        self.reads += 1
        await asyncio.sleep(0)
        shown = read_ui_dump(self.tree)
        if self.lagging and self.next is not None:  # this read saw the old tree; the window is drawn now
            self.tree, self.lagging = self.next[0], False
        return UiTree(shown.nodes, TREE_SERVER)

    async def current_app(self) -> str:
        return self.focus

    async def tap(self, x: int, y: int) -> None:
        assert self.next is not None
        self.focus, self.lagging = self.next[1], True
        if not self.lag:
            self.tree, self.lagging = self.next[0], False

    async def wait_settled(self, timeout_ms: int) -> bool:
        return True

    def changed_since(self, since: float) -> bool:
        return True  # the new window's frames came after the read began

    async def screen_info(self) -> dict[str, Any]:
        return {"width": 1080, "height": 2400, "rotation": 0}


async def listed(ctx: ToolDispatcher) -> dict[str, Any]:
    result = await ctx.dispatch("list_elements", {}, Channel.RELAY)
    assert not result.get("isError"), result
    return result["structuredContent"]


def texts(listing: dict[str, Any]) -> set[str]:
    return {element.get("text", "") for element in listing["elements"]}


async def test_a_new_window_that_lags_behind_the_focus_is_read_again_once_drawn():
    screens = dumps()
    phone = LaggingPhone(screens["launcher"], LAUNCHER)
    ctx = ToolDispatcher()
    ctx.device = phone
    before = await listed(ctx)
    assert before["app"]["packageName"] == "com.google.android.apps.nexuslauncher"
    settings_ref = next(e["ref"] for e in before["elements"] if e.get("text") == "Settings")
    phone.next = (screens["settings"], SETTINGS)
    reads = phone.reads
    await ctx.dispatch("tap", {"target": settings_ref}, Channel.RELAY)
    after = await listed(ctx)
    # the first read still showed the launcher (the focus had moved already): read again, settled
    assert phone.reads == reads + 2
    assert "Connected devices" in texts(after) and after["app"]["packageName"] == "com.android.settings"
    # within the app: the old activity's tree under the new activity's focus is not taken either
    phone.next = (screens["connected"], CONNECTED)
    ref = next(e["ref"] for e in after["elements"] if e.get("text") == "Connected devices")
    await ctx.dispatch("tap", {"target": ref}, Channel.RELAY)
    reads = phone.reads
    connected = await listed(ctx)
    assert phone.reads == reads + 2 and "Bluetooth" in texts(connected)
    assert any(element["role"] == "switch" for element in connected["elements"])


async def test_a_new_window_already_drawn_is_read_once():
    screens = dumps()
    phone = LaggingPhone(screens["launcher"], LAUNCHER, lag=False)
    ctx = ToolDispatcher()
    ctx.device = phone
    before = await listed(ctx)
    phone.next = (screens["settings"], SETTINGS)
    settings_ref = next(e["ref"] for e in before["elements"] if e.get("text") == "Settings")
    await ctx.dispatch("tap", {"target": settings_ref}, Channel.RELAY)
    reads = phone.reads
    after = await listed(ctx)
    assert phone.reads == reads + 1 and after["settledMs"] == 0
    assert "Connected devices" in texts(after)
