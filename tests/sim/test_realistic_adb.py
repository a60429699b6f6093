"""``--realistic`` through Debian's adb: the costs of a real phone (each at least its declared floor),
``uiautomator dump`` refusing with Android's text while the screen animates, a swipe that moves the list
through the gesture and flings on after it, the soft keyboard that Back hides. Real costs (a seeded
profile), so these take seconds: few of them."""

from __future__ import annotations

import asyncio
import time

import pytest

from phone_agent.sim.realistic import COSTS, IDLE_STATE_ERROR, RealisticProfile

pytestmark = pytest.mark.adb


SIM_OPTIONS = {"realistic": RealisticProfile(11)}


async def timed(debian_adb, adb_serial: str, command: str) -> tuple[float, str, str]:
    started = time.monotonic()
    _, out, err = await debian_adb.run("-s", adb_serial, "shell", command)
    return time.monotonic() - started, out.decode(), err.decode()


async def settle(sim) -> None:
    """Until the phone's last animation has ended."""
    while sim.phone.motion.animating():
        await asyncio.sleep(0.05)


async def test_commands_cost_what_a_real_phone_costs(debian_adb, adb_serial, sim):
    floors = {
        "input tap 540 1500": COSTS["input"].low,
        "screencap -p > /dev/null": COSTS["screencap_png"].low,
        "uiautomator dump /sdcard/window.xml": COSTS["uiautomator_connect"].low
        + COSTS["uiautomator_dump"].low,
    }
    assert floors["uiautomator dump /sdcard/window.xml"] >= 1.0
    for command, floor in floors.items():
        await settle(sim)
        took, out, err = await timed(debian_adb, adb_serial, command)
        assert took >= floor, (command, took)
        assert "ERROR" not in out + err
    assert "UI hierchary dumped to: /sdcard/window.xml" in out


async def test_dump_refuses_while_a_launch_animates_then_reads(debian_adb, adb_serial, sim):
    await timed(debian_adb, adb_serial, "am start -n com.android.settings/.Settings")
    assert sim.phone.motion.animating()  # the launch and its ~300 ms transition
    _, out, err = await timed(debian_adb, adb_serial, "uiautomator dump /dev/tty")
    assert out + err == IDLE_STATE_ERROR and "<hierarchy" not in out
    await settle(sim)
    _, out, _ = await timed(debian_adb, adb_serial, "uiautomator dump /dev/tty")
    assert 'text="Network &amp; internet"' in out
    took, out, _ = await timed(
        debian_adb, adb_serial, "am start -W -n com.google.android.deskclock/com.android.deskclock.DeskClock"
    )
    total = int(out.split("TotalTime: ")[1].split()[0])  # the launch and its transition, waited for
    assert "LaunchState: COLD" in out and total >= 1000 * (COSTS["launch_cold"].low + COSTS["transition"].low)
    assert took >= total / 1000 and not sim.phone.motion.animating()


async def test_a_swipe_moves_through_the_gesture_and_flings_on(debian_adb, adb_serial, sim):
    await timed(debian_adb, adb_serial, "monkey -p com.phoneagent.catalog 1")
    await settle(sim)
    seen: list[int] = []

    async def watch() -> None:
        while True:
            seen.append(sim.phone.catalog_scroll)
            await asyncio.sleep(0.02)

    watcher = asyncio.create_task(watch())
    # A quick flick: 1000 px in 150 ms flings on for ~1.1 s (OverScroller's spline at 6667 px/s).
    took, _, _ = await timed(debian_adb, adb_serial, "input swipe 540 1900 540 900 150")
    assert took >= 0.15 + COSTS["input"].low  # the finger moves for the swipe's duration
    _, out, err = await timed(debian_adb, adb_serial, "uiautomator dump /dev/tty")  # the fling still runs
    assert out + err == IDLE_STATE_ERROR
    await settle(sim)
    watcher.cancel()
    final = sim.phone.catalog_scroll
    assert any(0 < value < 1000 for value in seen)  # the list followed the finger
    assert any(1000 < value < final for value in seen)  # and went on after it lifted
    assert final > 2000  # the fling carried it far beyond the finger's 1000 px
    assert len(set(seen)) > 8  # many steps, not one jump
    assert sim.phone.version > 10


async def test_the_keyboard_comes_with_focus_and_back_hides_it(debian_adb, adb_serial, sim):
    await timed(debian_adb, adb_serial, "am start -a android.settings.SECURITY_SETTINGS")
    await settle(sim)
    await timed(debian_adb, adb_serial, "input tap 540 550")  # Screen lock
    await settle(sim)
    await timed(debian_adb, adb_serial, "input tap 540 970")  # the PIN field
    await settle(sim)
    _, out, _ = await timed(debian_adb, adb_serial, "dumpsys input_method")
    assert "mInputShown=true" in out
    _, out, _ = await timed(debian_adb, adb_serial, "uiautomator dump /dev/tty")
    assert 'package="com.google.android.inputmethod.latin"' in out and 'bounds="[0,1424][1080,2274]"' in out
    _, out, _ = await timed(debian_adb, adb_serial, "dumpsys window windows | grep -E 'fl=|mCurrentFocus'")
    assert "SECURE" in out and "ConfirmLockPassword" in out
    await timed(debian_adb, adb_serial, "input keyevent KEYCODE_BACK")
    _, out, _ = await timed(debian_adb, adb_serial, "dumpsys input_method")
    assert "mInputShown=false" in out
    assert sim.phone.state()["screen"] == "settings/confirm_pin"
