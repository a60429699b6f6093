"""The realistic phone's time: what each command costs, and the animations that move the screen.

Only a phone started with ``--realistic`` has a ``Motion``; the default phone jumps from state to state
at once. ``Motion.run`` spends a command's cost (``sim/realistic.py`` declares them) around the command,
outside the phone's lock, as a real phone spends it in its own processes; ``uiautomator dump`` refuses
with Android's text while an animation runs. Animations (a transition between screens, a swipe's finger
and its fling, the keyboard sliding in) move the screen at ``FRAME_INTERVAL_S`` from a thread of their
own, each step a change of the phone (so the scrcpy stream sends frames throughout), and mark the phone
busy until they end.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Protocol

from PIL import Image

from ...device.shell_result import ShellResult
from ..realistic import FRAME_INTERVAL_S, IDLE_STATE_ERROR, Fling, RealisticProfile, fling_for
from .props import DENSITY


class AnimatedPhone(Protocol):
    """What the animations change of the phone (``VirtualPhone`` is one)."""

    def locked(self, *, wait: bool = True) -> AbstractContextManager[bool]: ...
    def set_scroll(self, value: int) -> None: ...
    def animation_frame(self) -> None: ...


# Commands answered by a system service over binder (`cmd …`): a small cost of their own.
BINDER_COMMANDS = frozenset({"cmd", "dumpsys", "settings", "pm", "wm", "ime", "svc", "getprop", "ps", "kill"})


@dataclass
class Transition:
    """The screen moving from ``before`` (an image) to the new screen: nothing moves during the
    app's launch (``delay``), then ``duration`` seconds of cross-fade."""

    start: float
    delay: float
    duration: float
    before: Image.Image | None
    launch: str | None = None  # "cold" or "warm" when an app was brought up

    @property
    def end(self) -> float:
        return self.start + self.delay + self.duration

    def progress(self, now: float) -> float:
        if self.duration <= 0:
            return 1.0
        return min(1.0, max(0.0, (now - self.start - self.delay) / self.duration))


@dataclass
class ScrollMotion:
    """A list following a finger for ``finger_s`` seconds over ``finger_px``, then flinging."""

    start: float
    origin: int
    finger_px: float
    finger_s: float
    fling: Fling | None
    limit: int

    @property
    def end(self) -> float:
        return self.start + self.finger_s + (self.fling.duration if self.fling else 0.0)

    def value(self, now: float) -> int:
        elapsed = now - self.start
        moved = self.finger_px * (min(1.0, elapsed / self.finger_s) if self.finger_s > 0 else 1.0)
        if self.fling is not None and elapsed > self.finger_s:
            moved += self.fling.distance * self.fling.done_at(elapsed - self.finger_s)
        return min(max(0, round(self.origin + moved)), self.limit)


class Motion:
    """The realistic phone's clock: costs, animations and the idle state ``uiautomator`` waits for."""

    def __init__(self, phone: AnimatedPhone, profile: RealisticProfile) -> None:
        self.phone = phone
        self.profile = profile
        self.busy_until = 0.0  # monotonic time when the last animation ends
        self.transition: Transition | None = None
        self.scroll: ScrollMotion | None = None
        self.ime_shown_at = 0.0  # when the keyboard began to slide in (its height grows over ime_show)
        self.ime_duration = 0.0
        self._wake = threading.Condition()
        self._thread: threading.Thread | None = None
        self._closed = False

    # ----- costs

    def sleep(self, name: str, times: float = 1.0) -> None:
        seconds = self.profile.draw(name) * times
        if seconds > 0:
            time.sleep(seconds)

    def animating(self, now: float | None = None) -> bool:
        return (now if now is not None else time.monotonic()) < self.busy_until

    def run(self, argv: list[str], run: Callable[[], ShellResult]) -> ShellResult:
        """Run one Android command (``run`` runs it under the phone's lock) with a real phone's costs."""
        name = argv[0] if argv else ""
        args = argv[1:]
        if name == "cmd" and args[:1] in (["input"], ["activity"]):  # what `input` and `am` call
            name, args = {"input": "input", "activity": "am"}[args[0]], args[1:]
        if name == "uiautomator" and args[:1] == ["dump"]:
            self.sleep("uiautomator_connect")
            if self.animating():  # waitForIdle saw events: DumpCommand prints this and exits
                return ShellResult(stderr=IDLE_STATE_ERROR.encode(), exit_code=0)
            result = run()  # the tree as it is when the dump reads it
            self.sleep("uiautomator_dump")
            return result
        if name == "input":
            self.sleep("input")
            result = run()
            sub = [a for a in args if a not in ("touchscreen", "keyboard")][:1]
            if sub == ["text"] and len(args) > 1:
                self.sleep("input_text_char", times=len(args[-1]))
            elif sub in (["swipe"], ["draganddrop"]):
                time.sleep(_swipe_seconds(args))  # the finger moves for the swipe's duration
            return result
        if name == "screencap":
            result = run()  # the capture is of this moment; the encoding takes the time
            png = "-p" in args or any(a.endswith(".png") for a in args)
            self.sleep("screencap_png" if png else "screencap_raw")
            return result
        if name in ("am", "monkey"):
            self.sleep("am_command")
            result = run()
            if "-W" in args and self.transition is not None:  # am start -W: until the app has drawn
                return self._waited(result, self.transition)
            return result
        if name in BINDER_COMMANDS:
            self.sleep("shell_command")
            return run()
        return run()

    def _waited(self, result: ShellResult, transition: Transition) -> ShellResult:
        """``am start -W``'s answer once the launch and its transition are over, with their times."""
        time.sleep(max(0.0, transition.end - time.monotonic()))
        total = round((transition.delay + transition.duration) * 1000)
        text = result.stdout.decode()
        text = re.sub(r"TotalTime: \d+", f"TotalTime: {total}", text)
        text = re.sub(r"WaitTime: \d+", f"WaitTime: {total + 3}", text)
        if transition.launch == "warm":
            text = text.replace("LaunchState: COLD", "LaunchState: WARM")
        return ShellResult(text.encode(), result.stderr, result.exit_code)

    # ----- animations

    def start_transition(self, before: Image.Image | None, launch: str | None) -> None:
        """The screen changed to another screen: animate from ``before`` (after the launch, if any)."""
        now = time.monotonic()
        delay = self.profile.draw(f"launch_{launch}") if launch else 0.0
        self.transition = Transition(now, delay, self.profile.draw("transition"), before, launch)
        self._busy(self.transition.end)

    def start_scroll(
        self, origin: int, finger_px: float, finger_ms: int, limit: int, *, followed: bool = False
    ) -> None:
        """A swipe on a list: it follows the finger, then flings at the finger's speed (``followed``:
        it has followed the finger already, the fling starts from where it is)."""
        finger_s = max(0.0, finger_ms / 1000)
        velocity = finger_px / finger_s if finger_s > 0 else 0.0
        fling = fling_for(velocity, DENSITY) if finger_s > 0 else None
        if followed:
            finger_px, finger_s = 0.0, 0.0
        self.scroll = ScrollMotion(time.monotonic(), origin, finger_px, finger_s, fling, limit)
        self._busy(self.scroll.end)

    def reset(self) -> None:
        """Stop every animation (the phone was put back to its first state)."""
        with self._wake:
            self.transition = self.scroll = None
            self.busy_until = 0.0
            self.ime_duration = 0.0

    def touched(self) -> None:
        """A finger moved the screen: it is not idle for the next frame or so."""
        self._busy(time.monotonic() + 2 * FRAME_INTERVAL_S)

    def show_ime(self) -> None:
        self.ime_shown_at = time.monotonic()
        self.ime_duration = self.profile.draw("ime_show")
        self._busy(self.ime_shown_at + self.ime_duration)

    def ime_fraction(self, now: float | None = None) -> float:
        """How far the keyboard has slid in (0 to 1)."""
        if self.ime_duration <= 0:
            return 1.0
        elapsed = (now if now is not None else time.monotonic()) - self.ime_shown_at
        return min(1.0, max(0.0, elapsed / self.ime_duration))

    def compose(self, image: Image.Image, now: float | None = None) -> Image.Image:
        """The picture of the screen at ``now``: ``image`` (the new screen) blended in over the old."""
        transition = self.transition
        if transition is None or transition.before is None:
            return image
        progress = transition.progress(now if now is not None else time.monotonic())
        if progress >= 1.0:
            return image
        if progress <= 0.0:
            return transition.before
        return Image.blend(transition.before.convert(image.mode), image, progress)

    def _busy(self, until: float) -> None:
        with self._wake:
            self.busy_until = max(self.busy_until, until)
            if self._thread is None:
                self._thread = threading.Thread(target=self._animate, name="sim-motion", daemon=True)
                self._thread.start()
            self._wake.notify()

    def _animate(self) -> None:
        """Step every running animation each frame; sleep while none runs."""
        while True:
            with self._wake:
                while not self._closed and not self.animating():
                    self._wake.wait()
                if self._closed:
                    return
            self._step(time.monotonic())
            time.sleep(FRAME_INTERVAL_S)

    def _step(self, now: float) -> None:
        phone = self.phone
        with phone.locked():
            scroll = self.scroll
            if scroll is not None:
                phone.set_scroll(scroll.value(now))
                if now >= scroll.end:
                    self.scroll = None
            if self.transition is not None and now >= self.transition.end:
                self.transition = None
            phone.animation_frame()  # a new picture each frame, even when only the blend moved

    def close(self) -> None:
        with self._wake:
            self._closed = True
            self._wake.notify()


def _swipe_seconds(args: list[str]) -> float:
    """The duration argument of ``input swipe x1 y1 x2 y2 [ms]`` (300 ms when absent)."""
    numbers = [a for a in args if a.lstrip("-").isdigit()]
    if len(numbers) >= 5:
        return max(0, int(numbers[4])) / 1000
    return 0.3
