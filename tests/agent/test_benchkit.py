"""The benchmarks' phone: alternating screens, and busy time counted once when calls overlap."""

from __future__ import annotations

import asyncio

from phone_agent.agent.benchkit import InstantPhone


async def test_the_screen_alternates_after_each_action():
    phone = InstantPhone([b"a", b"b"])
    seen = [await phone.screenshot_png()]
    for _ in range(3):
        await phone.tap(1, 1)
        seen.append(await phone.screenshot_png())
    assert seen == [b"a", b"b", b"a", b"b"]


async def test_overlapping_calls_count_as_one_stretch_of_phone_time():
    phone = InstantPhone(b"png", latency_ms=60)
    await asyncio.gather(phone.screenshot_png(), phone.ui_nodes(), phone.current_app())
    once = phone.busy_ms
    assert 55 <= once < 170  # once, not three times 60 ms
    await phone.screenshot_png()
    assert once + 55 <= phone.busy_ms < once + 170
