"""Where the agent's looks come from: the phone's own screenshot (``screencap``) or, while the page
runs scrcpy, the latest frame its stream decoded — which one a look takes, and what the task says
about it.

A live frame is taken only when the setting allows it, scrcpy runs, and the last frame is fresh (the
stream stalled or never drew: screencap, and the reason is said). The frame covers the whole screen
at the stream's size (scrcpy scales it by ``max_size``), so the model's image is scaled from it to
the size a screenshot would give (``ScreenMapping.fit`` of the *device's* size), and the image's
points map to device points exactly as with a screenshot.

``live_look`` is the same choice for take_screenshot's source "live", which answers the frame or an
error, never a screenshot in its place.

Pure: the page supplies a ``LiveScreen`` (browser/scrcpy_view.py); tests supply their own.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from ..device.interface import Device
from ..errors import NO_LIVE_VIEW_REASON, no_live_frame, screenshot_not_png

SCRCPY = "scrcpy frame"
SCREENCAP = "screencap"
# The sim repeats a still screen at least once a second, a phone's encoder every 100 ms: a last frame
# older than this means the stream stalled (or the page stopped drawing), not a still screen.
MAX_FRAME_AGE_S = 2.5


def png_size(png: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk (no decoding); ValueError if it is not a PNG."""
    if len(png) < 24 or png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
        raise ValueError("not a PNG image")
    width, height = struct.unpack(">II", png[16:24])
    return width, height


@dataclass(frozen=True)
class FrameState:
    """What the live view knows now, cheaply (nothing is encoded to answer it)."""

    enabled: bool  # the Settings allow looks from the stream
    running: bool  # scrcpy streams into the live view now
    frame_age_s: float | None = None  # since the last decoded frame; None: none drawn yet
    device_size: tuple[int, int] | None = None  # the phone's screen in pixels (what taps address)


@dataclass(frozen=True)
class LookChoice:
    """Which source a look takes; ``reason`` says why screencap when a live frame was possible."""

    source: str
    reason: str = ""


def oriented(device_size: tuple[int, int], frame_size: tuple[int, int]) -> tuple[int, int]:
    """The phone's size as the frame shows it: ``wm size`` is always the portrait size, but a phone
    turned to landscape streams landscape frames, whose points map to the turned screen."""
    width, height = device_size
    frame_width, frame_height = frame_size
    if (width < height) != (frame_width < frame_height) and frame_width != frame_height:
        return height, width
    return width, height


def choose_look(state: FrameState, max_age_s: float = MAX_FRAME_AGE_S) -> LookChoice:
    """The live frame when the setting allows it and a fresh one is drawn; otherwise screencap, why."""
    if not state.enabled:
        return LookChoice(SCREENCAP, "turned off in Settings")
    if not state.running:
        return LookChoice(SCREENCAP, "scrcpy is not running")
    if state.device_size is None:
        return LookChoice(SCREENCAP, "the phone's screen size is not known")
    if state.frame_age_s is None:
        return LookChoice(SCREENCAP, "scrcpy has drawn no frame yet")
    if state.frame_age_s > max_age_s:
        return LookChoice(SCREENCAP, f"the scrcpy stream stalled (last frame {state.frame_age_s:.1f} s ago)")
    return LookChoice(SCRCPY)


class LiveScreen(Protocol):
    """The page's live view as a source of looks."""

    def frame_state(self) -> FrameState:
        """Whether a live frame can be had now, without encoding it."""
        ...

    async def frame_png(self) -> bytes:
        """The latest decoded frame as a PNG, at the stream's size."""
        ...


@dataclass(frozen=True)
class Look:
    """One look at the screen: the image, the device's size it covers, and where it came from."""

    png: bytes
    device_width: int
    device_height: int
    source: str = SCREENCAP
    reason: str = ""  # why screencap, when a live frame was wanted


async def take_look(device: Device, live: LiveScreen | None) -> Look:
    """A look from the live frame when ``choose_look`` says so, else the phone's own screenshot.

    A frame that cannot be read falls back to screencap with the reason; a failed screenshot raises
    (as it always did)."""
    choice = LookChoice(SCREENCAP)
    if live is not None:
        state = live.frame_state()
        choice = choose_look(state)
        if choice.source == SCRCPY and state.device_size is not None:
            try:
                png = await live.frame_png()
                png_size(png)
            except Exception as exc:  # a canvas the browser would not encode: the phone answers instead
                choice = LookChoice(SCREENCAP, f"the scrcpy frame could not be read: {exc}")
            else:
                return Look(png, state.device_size[0], state.device_size[1], SCRCPY)
    png = await device.screenshot_png()
    try:
        width, height = png_size(png)
    except ValueError:
        raise screenshot_not_png() from None
    return Look(png, width, height, SCREENCAP, choice.reason)


async def live_look(live: LiveScreen | None) -> Look:
    """The live frame only (take_screenshot's source "live"), by the same choice as the agent's looks:
    ToolError ``no_live_frame`` saying why when there is no fresh frame (retryable while scrcpy runs:
    a frame may come)."""
    if live is None:
        raise no_live_frame(NO_LIVE_VIEW_REASON, retryable=False)
    state = live.frame_state()
    choice = choose_look(state)
    if choice.source != SCRCPY or state.device_size is None:
        raise no_live_frame(choice.reason, retryable=state.running)
    try:
        png = await live.frame_png()
        png_size(png)
    except Exception as exc:
        raise no_live_frame(f"the scrcpy frame could not be read: {exc}", retryable=True) from None
    return Look(png, state.device_size[0], state.device_size[1], SCRCPY)


@dataclass
class LookTally:
    """The looks of one task by source. ``summary()`` is the line the task's report carries (kept up
    to date through ``on_summary``); ``on_change`` gets a progress line when a look comes from another
    source (or screencap for another reason) than the one before it — the first look's source is in
    the report, so a task that keeps one source adds no progress line."""

    on_change: Callable[[str], None] = lambda _line: None
    on_summary: Callable[[str | None], None] = lambda _summary: None
    counts: dict[str, int] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    _last: tuple[str, str] | None = None

    def add(self, source: str, reason: str = "") -> None:
        self.counts[source] = self.counts.get(source, 0) + 1
        if reason and reason not in self.reasons:
            self.reasons.append(reason)
        previous, self._last = self._last, (source, reason)
        if previous is not None and previous != self._last:
            self.on_change(f"📷 Screen: {describe(source, reason)}")
        self.on_summary(self.summary())

    def summary(self) -> str | None:
        """E.g. "scrcpy frame (6 looks)" or "scrcpy frame (4 looks), screencap (1 look: …)"."""
        if not self.counts:
            return None
        parts = []
        for source in (SCRCPY, SCREENCAP):
            count = self.counts.get(source)
            if not count:
                continue
            part = f"{source} ({count} look{'s' if count != 1 else ''}"
            if source == SCREENCAP and self.reasons:
                part += ": " + "; ".join(self.reasons)
            parts.append(part + ")")
        return ", ".join(parts)


def describe(source: str, reason: str = "") -> str:
    """A look's source as the progress line says it."""
    return f"{source} ({reason})" if reason else source
