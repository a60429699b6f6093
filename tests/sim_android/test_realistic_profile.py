"""The realistic profile (``sim/realistic.py``): one declared table of costs, drawn repeatably within
their ranges; README's copy of the table is the table; a fling follows Android's OverScroller; the
default phone stays instant and has none of the realistic behaviours."""

from __future__ import annotations

import re
import time

from phone_agent.sim.android.phone import VirtualPhone
from phone_agent.sim.realistic import COSTS, RealisticProfile, cost_table_markdown, fling_for
from tests.support import ROOT


def test_every_cost_is_declared_with_a_range_and_a_source():
    assert {"uiautomator_connect", "uiautomator_dump", "input", "screencap_png", "transition"} <= set(COSTS)
    for cost in COSTS.values():
        assert 0 <= cost.low <= cost.typical <= cost.high and cost.what and cost.source
    assert COSTS["uiautomator_connect"].low + COSTS["uiautomator_dump"].low >= 1.0
    assert COSTS["input"].low >= 0.12 and COSTS["screencap_png"].low >= 0.3
    assert abs(COSTS["transition"].typical - 0.3) < 0.05


def test_draws_are_jittered_within_the_range_and_repeatable_with_a_seed():
    first, second = RealisticProfile(5), RealisticProfile(5)
    draws = [first.draw("input") for _ in range(50)]
    assert draws == [second.draw("input") for _ in range(50)]
    assert all(COSTS["input"].low <= d <= COSTS["input"].high for d in draws)
    assert len(set(draws)) > 40  # jitter, not one value
    assert RealisticProfile(5, scale=0.0).draw("uiautomator_dump") == 0.0


def test_the_readme_table_is_the_declared_table():
    readme = (ROOT / "README.md").read_text()
    match = re.search(r"<!-- costs: [^>]*-->\n(.*?)\n<!-- /costs -->", readme, re.DOTALL)
    assert match is not None
    assert match.group(1) == cost_table_markdown(), "README's cost table is stale: run scripts/cost_table.py"


def test_a_fling_follows_overscroller():
    assert fling_for(100, 420) is None  # under the minimum fling velocity (50 dp/s = 131 px/s)
    slow, fast = fling_for(1500, 420), fling_for(-6667, 420)
    assert slow is not None and fast is not None
    assert 150 < slow.distance < 250 and 0.3 < slow.duration < 0.45
    assert -2700 < fast.distance < -2400 and 1.0 < fast.duration < 1.2
    assert fast.done_at(0) == 0 and fast.done_at(fast.duration) == 1
    assert fast.done_at(fast.duration / 4) > 0.4  # decelerating: most of the way early


def test_the_default_phone_stays_instant_and_plain():
    phone = VirtualPhone()
    started = time.monotonic()
    phone.run(["uiautomator", "dump", "/dev/tty"], b"", None)  # type: ignore[arg-type]
    phone.run(
        ["am", "start", "-n", "com.google.android.GoogleCamera/com.android.camera.CameraLauncher"], b"", None
    )  # type: ignore[arg-type]
    assert time.monotonic() - started < 0.5
    state = phone.state()
    assert state["permission_dialog"] is None and state["keyboard"] is False
    assert phone.motion is None
