"""``--realistic``: what a mid-range Android 14 phone costs and how it behaves, as one declared table.

The default simulated phone answers every command at once, which is what a test suite wants and what no
user meets. ``--realistic`` gives it the costs of a real phone, each declared once in ``COSTS`` with its
range, its typical value and where the figure comes from (an AOSP code path or a published measurement),
and the behaviours that come with them (animated swipes and transitions, the soft keyboard, a runtime
permission dialog, a FLAG_SECURE screen). ``RealisticProfile`` draws each cost from its range (a
triangular distribution around the typical value) with a random generator that a seed makes repeatable.
README's "What a real phone costs" is written from this table; ``cost_table_markdown`` prints it.
"""

from __future__ import annotations

import math
import random
import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class Cost:
    """One cost of a real phone: seconds drawn from [low, high] around ``typical``."""

    name: str
    low: float
    typical: float
    high: float
    what: str
    source: str

    def __post_init__(self) -> None:
        if not 0 <= self.low <= self.typical <= self.high:
            raise ValueError(f"cost {self.name}: need 0 <= low <= typical <= high")


COSTS: dict[str, Cost] = {
    cost.name: cost
    for cost in (
        Cost(
            "uiautomator_connect",
            0.35,
            0.45,
            0.7,
            "`uiautomator dump`: start app_process with uiautomator.jar and connect a UiAutomation, "
            "before it waits for idle",
            "AOSP frameworks/testing uiautomator cmds DumpCommand.run: UiAutomationShellWrapper.connect() "
            "in a fresh app_process (dalvikvm start ~0.3 s on a mid-range phone)",
        ),
        Cost(
            "uiautomator_dump",
            0.65,
            1.05,
            1.6,
            "`uiautomator dump`: after the idle check, walk the accessibility tree (one binder call a "
            "node) and write the XML; with the connect, the whole dump is >= 1.0 s, typically ~1.5 s",
            "AOSP DumpCommand: uiAutomation.waitForIdle(1000, 10000) then "
            "AccessibilityNodeInfoDumper.dumpWindowToFile; the 1-3 s per dump reported in appium and "
            "uiautomator2 issues (e.g. dtmilano/CulebraTester2-public#17: 1-4 s after an am start)",
        ),
        Cost(
            "input",
            0.12,
            0.2,
            0.4,
            "each `input` command (tap, keyevent, text, swipe's start): a process started for one event",
            "AOSP frameworks/base/cmds/input (the shell wrapper: app_process, or `cmd input` since "
            "Android 12) plus the adb shell session; 0.15-0.4 s an `input tap` as measured on phones",
        ),
        Cost(
            "input_text_char",
            0.004,
            0.008,
            0.015,
            "`input text`: each character is a key down and a key up injected one after another",
            "AOSP InputShellCommand.sendText: KeyCharacterMap.getEvents, injectInputEvent per event",
        ),
        Cost(
            "screencap_png",
            0.3,
            0.5,
            1.0,
            "`screencap -p` at 1080x2400: capture the display, then PNG-encode ~10 MB of pixels on one core",
            "AOSP frameworks/base/cmds/screencap/screencap.cpp: ScreenshotClient::captureDisplay, then "
            "AndroidBitmap_compress(PNG); 0.3-1 s on a mid-range phone",
        ),
        Cost(
            "screencap_raw",
            0.08,
            0.12,
            0.25,
            "`screencap` without -p: the capture only, raw RGBA to stdout (the transfer is adb's)",
            "AOSP screencap.cpp: the same capture, written without compression",
        ),
        Cost(
            "am_command",
            0.08,
            0.12,
            0.25,
            "`am start` itself: `cmd activity start-activity`, answered once the intent is delivered",
            "AOSP frameworks/base/cmds/am/am (a shell script calling `cmd activity`), "
            "ActivityManagerShellCommand.runStartActivity without -W",
        ),
        Cost(
            "launch_cold",
            0.35,
            0.6,
            1.2,
            "an app's cold start, from the intent to its first frame (the screen shows the old one)",
            "Android vitals (developer.android.com/topic/performance/vitals/launch-time): cold starts "
            "under 5 s are not flagged; `am start -W` TotalTime 400-1200 ms for small apps on mid-range "
            "phones",
        ),
        Cost(
            "launch_warm",
            0.1,
            0.18,
            0.35,
            "bringing an app's existing task to the front (warm/hot start)",
            "Android vitals launch-time: warm and hot starts; `am start -W` TotalTime 100-300 ms",
        ),
        Cost(
            "transition",
            0.28,
            0.3,
            0.35,
            "the activity transition animation (open, close, back): the screen moves from the old "
            "window to the new one",
            "AOSP frameworks/base/core/res/res/anim/activity_open_enter.xml and the shell transitions "
            "(config_mediumAnimTime class of durations, ~300 ms)",
        ),
        Cost(
            "ime_show",
            0.18,
            0.22,
            0.3,
            "the soft keyboard sliding in when a text field takes focus (and out on Back)",
            "AOSP InsetsController's IME animation (ANIMATION_DURATION_SHOW_MS = 275, HIDE 340 ms)",
        ),
        Cost(
            "hierarchy_dump",
            0.06,
            0.1,
            0.3,
            "the hierarchy server's dumpWindowHierarchy (u2.jar, already running): walk the accessibility "
            "tree and answer the XML over HTTP; no app_process start, no idle wait",
            "u2.jar's AccessibilityNodeInfoDumper.dumpWindowHierarchy in the running server; users "
            "measure Android u2's dump_hierarchy under 100 ms (codematrixer/hmdriver2#10) and 'usually "
            "very fast' (openatx/uiautomator2#116), slower on screens that keep changing",
        ),
        Cost(
            "hierarchy_start",
            0.8,
            1.2,
            2.0,
            "starting the hierarchy server: app_process with u2.jar, a UiAutomation connect, then its "
            "HTTP server answers /ping",
            "uiautomator2 core.py launch_uiautomator/_wait_app_process_ready (polls /ping every 0.5 s, up "
            "to 30 s); dalvikvm start ~0.3 s plus UiAutomation.connect as for `uiautomator dump`",
        ),
        Cost(
            "shell_command",
            0.004,
            0.008,
            0.02,
            "any other shell command line (toybox, getprop, settings …): fork/exec on the phone",
            "adbd's shell service spawns /system/bin/sh per command (AOSP packages/modules/adb "
            "daemon/shell_service.cpp)",
        ),
    )
}

# The idle check of `uiautomator dump`: AOSP's DumpCommand calls UiAutomation.waitForIdle(1000, 10000)
# and prints this when the screen keeps changing (TimeoutException). The sim gives up as soon as it finds
# an animation running when it checks, instead of after 10 s, so that clients meet the failure (and their
# retries are exercised) in seconds.
IDLE_STATE_ERROR = "ERROR: could not get idle state.\n"
IDLE_TIMEOUT_S = 1.0  # waitForIdle's idle window: no event for this long counts as idle
# The hierarchy server's waitForIdle is UiDevice.waitForIdle(timeout): QueryController waits for
# QUIET_TIME_TO_BE_CONSIDERD_IDLE_STATE (500 ms) without accessibility events.
HIERARCHY_IDLE_QUIET_S = 0.5
FRAME_INTERVAL_S = 1 / 30  # how often an animation moves the screen (a 30 Hz stand-in for vsync)

# Fling physics, as Android's OverScroller (SplineOverScroller) computes them.
GRAVITY_EARTH = 9.80665
SCROLL_FRICTION = 0.015  # ViewConfiguration.getScrollFriction()
DECELERATION_RATE = math.log(0.78) / math.log(0.9)
INFLEXION = 0.35
MIN_FLING_VELOCITY_DP = 50  # ViewConfiguration MINIMUM_FLING_VELOCITY (dp/s)
MAX_FLING_VELOCITY_DP = 8000  # ViewConfiguration MAXIMUM_FLING_VELOCITY (dp/s)


def _spline_positions(samples: int = 100) -> list[float]:
    """SplineOverScroller's SPLINE_POSITION table: the fraction of the distance done at t/T."""
    p1, p2, start_tension, end_tension = 0.175, 0.35, 0.5, 1.0
    positions = [0.0] * (samples + 1)
    x_min = 0.0
    for i in range(samples):
        alpha = i / samples
        x_max = 1.0
        while True:
            x = x_min + (x_max - x_min) / 2.0
            coef = 3.0 * x * (1.0 - x)
            tx = coef * ((1.0 - x) * p1 + x * p2) + x * x * x
            if abs(tx - alpha) < 1e-5:
                break
            if tx > alpha:
                x_max = x
            else:
                x_min = x
        positions[i] = coef * ((1.0 - x) * start_tension + x * end_tension) + x * x * x
    positions[samples] = 1.0
    return positions


_SPLINE = _spline_positions()


@dataclass(frozen=True)
class Fling:
    """A fling after the finger lifts: ``distance`` pixels (signed) over ``duration`` seconds."""

    distance: float
    duration: float

    def done_at(self, elapsed: float) -> float:
        """The fraction of the distance covered ``elapsed`` seconds in (the spline of OverScroller)."""
        if self.duration <= 0 or elapsed >= self.duration:
            return 1.0
        if elapsed <= 0:
            return 0.0
        t = elapsed / self.duration * (len(_SPLINE) - 1)
        index = int(t)
        return _SPLINE[index] + (t - index) * (_SPLINE[min(index + 1, len(_SPLINE) - 1)] - _SPLINE[index])


def fling_for(velocity_px_s: float, density_dpi: int) -> Fling | None:
    """The fling a lift at ``velocity_px_s`` starts (None under the minimum fling velocity)."""
    scale = density_dpi / 160
    speed = min(abs(velocity_px_s), MAX_FLING_VELOCITY_DP * scale)
    if speed < MIN_FLING_VELOCITY_DP * scale:
        return None
    physical = GRAVITY_EARTH * 39.37 * density_dpi * 0.84
    decel = math.log(INFLEXION * speed / (SCROLL_FRICTION * physical))
    duration = math.exp(decel / (DECELERATION_RATE - 1.0))
    distance = SCROLL_FRICTION * physical * math.exp(DECELERATION_RATE / (DECELERATION_RATE - 1.0) * decel)
    return Fling(math.copysign(distance, velocity_px_s), duration)


class RealisticProfile:
    """Draws the costs of ``COSTS``; ``seed`` makes the draws repeatable (tests). ``scale`` multiplies
    every cost: 0 keeps the behaviours (keyboard, dialog, secure screen) without spending time, for
    tests of those alone."""

    def __init__(
        self, seed: int | None = None, costs: dict[str, Cost] | None = None, *, scale: float = 1.0
    ) -> None:
        self.seed = seed
        self.scale = scale
        self.costs = dict(COSTS if costs is None else costs)
        self._random = random.Random(seed)
        self._lock = threading.Lock()  # commands draw from worker threads

    def draw(self, name: str) -> float:
        """Seconds for one occurrence of the cost ``name``."""
        cost = self.costs[name]
        if cost.high <= cost.low:
            return cost.low * self.scale
        with self._lock:
            return self._random.triangular(cost.low, cost.high, cost.typical) * self.scale

    def describe(self) -> dict[str, object]:
        """The profile as the control endpoint shows it."""
        return {
            "seed": self.seed,
            "scale": self.scale,
            "costs": {
                name: {"low": c.low, "typical": c.typical, "high": c.high} for name, c in self.costs.items()
            },
        }


def cost_table_markdown() -> str:
    """The table of ``COSTS`` in Markdown (the README's is written from it)."""
    lines = ["| cost | range (typical) | what | source |", "|---|---|---|---|"]
    for cost in COSTS.values():
        span = f"{cost.low:g}–{cost.high:g} s ({cost.typical:g})"
        lines.append(f"| `{cost.name}` | {span} | {cost.what} | {cost.source} |")
    return "\n".join(lines)
