"""The benchmarks' phone: alternating screens, and busy time counted once when calls overlap.

The busy time is read from a clock the test moves itself, so the machine's load cannot change it."""

from __future__ import annotations

import asyncio

import pytest

from phone_agent.agent.benchkit import BusyClock, InstantPhone


async def test_the_screen_alternates_after_each_action():
    phone = InstantPhone([b"a", b"b"])
    seen = [await phone.screenshot_png()]
    for _ in range(3):
        await phone.tap(1, 1)
        seen.append(await phone.screenshot_png())
    assert seen == [b"a", b"b", b"a", b"b"]


class StepClock:
    """A clock that stands still until the test moves it."""

    def __init__(self) -> None:
        self.s = 0.0

    def __call__(self) -> float:
        return self.s


async def test_overlapping_calls_count_as_one_stretch_of_phone_time():
    clock = StepClock()
    busy = BusyClock(now=clock)
    gates = [asyncio.Event() for _ in range(3)]
    calls = [asyncio.ensure_future(busy.timed(gate.wait())) for gate in gates]
    await asyncio.sleep(0)  # all three are running
    clock.s = 0.040
    gates[0].set()
    await calls[0]
    assert busy.busy_ms == 0  # two still run: the stretch is not over
    clock.s = 0.060
    gates[1].set()
    gates[2].set()
    await asyncio.gather(*calls)
    assert busy.busy_ms == pytest.approx(60)  # once, not 40 + 60 + 60
    # A stretch with nothing running is not counted; the next call adds its own time.
    clock.s = 1.000
    gate = asyncio.Event()
    lone = asyncio.ensure_future(busy.timed(gate.wait()))
    await asyncio.sleep(0)
    clock.s = 1.025
    gate.set()
    await lone
    assert busy.busy_ms == pytest.approx(85)


async def test_the_phone_times_its_answers_on_its_busy_clock():
    phone = InstantPhone(b"png", latency_ms=60)
    await asyncio.gather(phone.screenshot_png(), phone.ui_nodes(), phone.current_app())
    once = phone.busy_ms
    assert once >= 55  # the latency was slept (only a lower bound: a loaded machine only adds)
    await phone.screenshot_png()
    assert phone.busy_ms >= once + 55
