"""The live view as a remote control: clicks, drags, the wheel and typing on the phone's screen in the
page, and the Back / Home / Recents buttons under it, become calls of the catalog's tools through the
one dispatch (so they show in the activity log like any call).

What an event means is decided by the pure ``live_gestures`` module; this adapter only reads the
events and the view's geometry, and runs the calls one after another in order.

Typing lands in ``#live-input``, an invisible text field that takes the focus whenever the view does:
keys that are not text (Enter, Backspace, arrows …) are pressed as keys, and text arrives the way the
browser delivers it — a key, an accented letter from a dead key, an IME's composition, a paste — as
``input`` and ``compositionend`` events, sent whole as ``type_text``. An image or a canvas receives no
text input at all, which is why the view does not type by itself.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import js  # type: ignore[import-not-found]
from pyodide.ffi import create_proxy  # type: ignore[import-not-found]

from ..tools.dispatch import ToolDispatcher
from ..tools.spec import Channel
from .interop import is_nullish, to_js_json
from .live_gestures import CatalogCall, ViewGeometry, key_action, merge_typing, pointer_gesture, wheel_gesture

SCREEN_ID = "screen"
INPUT_ID = "live-input"
NAV_BUTTONS = {"nav-back": "back", "nav-home": "home", "nav-recents": "recents"}
TYPING_PAUSE_S = 0.12  # characters typed within this of each other go to the phone together
WHEEL_PAUSE_S = 0.15  # wheel events within this of each other make one scroll


class LiveViewControls:
    """Turns input on the live view (element ``#screen``) into tool calls on the connected phone."""

    def __init__(self, context: ToolDispatcher) -> None:
        self.context = context
        self._doc = js.document
        self._proxies: list[Any] = []
        self._queue: asyncio.Queue[CatalogCall] = asyncio.Queue()
        self._press: tuple[float, float, float] | None = None  # x, y (CSS px in the view), time (ms)
        self._press_view: ViewGeometry | None = None  # the view's geometry when the press began
        self._wheel: tuple[float, float, float] | None = None  # x, y, accumulated delta
        self._wheel_task: asyncio.Task[None] | None = None
        self._size: tuple[int, int] | None = None  # the screen's size in device pixels, last seen
        self._worker = asyncio.ensure_future(self._run())
        self._attach_screen()
        # scrcpy swaps the <img id="screen"> for a <canvas id="screen"> and back (browser.scrcpy_view).
        self._listen(self._doc, "live-screen-replaced", lambda _event: self._attach_screen())
        for element_id, key in NAV_BUTTONS.items():
            node = self._doc.getElementById(element_id)
            if node is not None:
                self._listen(node, "click", lambda _event, key=key: self.send(("press_key", {"key": key})))
        field = self._doc.getElementById(INPUT_ID)
        if not is_nullish(field):
            self._listen(field, "keydown", self._on_field_key)
            self._listen(field, "input", self._on_input)
            self._listen(field, "compositionend", self._on_input)

    def _attach_screen(self) -> None:
        """Listen on the element that is ``#screen`` now (once per element)."""
        screen = self._doc.getElementById(SCREEN_ID)
        if screen is None or getattr(screen.dataset, "controls", None) == "on":
            return
        screen.tabIndex = 0
        screen.draggable = False
        screen.dataset.controls = "on"
        for event, handler in (
            ("pointerdown", self._on_down),
            ("pointerup", self._on_up),
            ("pointercancel", self._on_cancel),
            ("wheel", self._on_wheel),
            ("keydown", self._on_key),
            ("focus", lambda _event: self._focus_input()),
            ("load", lambda _event: self._view()),  # a frame shown: its size is the phone's, kept
            ("dragstart", lambda event: event.preventDefault()),
            ("contextmenu", lambda event: event.preventDefault()),
        ):
            self._listen(screen, event, handler)
        self._view()  # the size it shows, if it shows a frame already

    def _listen(self, node: Any, event: str, handler: Any) -> None:
        proxy = create_proxy(handler)
        self._proxies.append(proxy)
        options = js.Object.new()
        options.passive = False
        node.addEventListener(event, proxy, options)

    def send(self, call: CatalogCall) -> None:
        """Queue one call; calls reach the phone in the order they were made."""
        if self.context.device is not None:
            self._queue.put_nowait(call)

    # -- geometry -------------------------------------------------------------------------------

    def _view(self) -> ViewGeometry | None:
        screen = self._doc.getElementById(SCREEN_ID)
        # An <img> knows the picture's own size; scrcpy's <canvas> shows a scaled-down video of the
        # screen and says the device's size in data-device-width/height.
        dataset = screen.dataset
        width = int(getattr(dataset, "deviceWidth", 0) or getattr(screen, "naturalWidth", 0) or 0)
        height = int(getattr(dataset, "deviceHeight", 0) or getattr(screen, "naturalHeight", 0) or 0)
        if width > 0 and height > 0:
            self._size = (width, height)
        elif self._size is not None:  # a new frame is loading: the last one's size still holds
            width, height = self._size
        box_width, box_height = float(screen.clientWidth), float(screen.clientHeight)
        if width <= 0 or height <= 0 or box_width <= 0 or box_height <= 0:
            return None  # nothing shown yet: nothing to aim at
        return ViewGeometry(box_width, box_height, width, height)

    def _point(self, event: Any) -> tuple[float, float]:
        """The event's point in the view's content box (inside its border)."""
        screen = self._doc.getElementById(SCREEN_ID)
        rect = screen.getBoundingClientRect()
        return (
            float(event.clientX - rect.left - screen.clientLeft),
            float(event.clientY - rect.top - screen.clientTop),
        )

    # -- events ---------------------------------------------------------------------------------

    def _on_down(self, event: Any) -> None:
        if event.button != 0:
            return
        event.preventDefault()
        screen = self._doc.getElementById(SCREEN_ID)
        self._focus_input()
        with contextlib.suppress(Exception):
            screen.setPointerCapture(event.pointerId)
        x, y = self._point(event)
        self._press = (x, y, float(js.performance.now()))
        self._press_view = self._view()

    def _on_up(self, event: Any) -> None:
        press, self._press = self._press, None
        # A frame being replaced (or the <img> swapped for scrcpy's <canvas>) between press and
        # release has no size for a moment: the press's geometry still says where the finger is.
        view = self._view() or self._press_view
        if press is None or view is None:
            return
        event.preventDefault()
        end = self._point(event)
        self.send(pointer_gesture(view, (press[0], press[1]), end, float(js.performance.now()) - press[2]))

    def _on_cancel(self, _event: Any) -> None:
        self._press = None

    def _on_wheel(self, event: Any) -> None:
        view = self._view()
        if view is None:
            return
        event.preventDefault()
        x, y = self._point(event)
        delta = float(event.deltaY) * (16 if event.deltaMode == 1 else 1)  # lines → pixels
        previous = self._wheel[2] if self._wheel is not None else 0.0
        self._wheel = (x, y, previous + delta)
        if self._wheel_task is None or self._wheel_task.done():
            self._wheel_task = asyncio.ensure_future(self._flush_wheel())

    async def _flush_wheel(self) -> None:
        await asyncio.sleep(WHEEL_PAUSE_S)
        wheel, self._wheel = self._wheel, None
        view = self._view()
        if wheel is not None and view is not None:
            call = wheel_gesture(view, (wheel[0], wheel[1]), wheel[2])
            if call is not None:
                self.send(call)

    def _focus_input(self) -> None:
        """Typing goes to the text field (the screen itself receives no text input)."""
        field = self._doc.getElementById(INPUT_ID)
        if not is_nullish(field):
            field.focus(to_js_json({"preventScroll": True}))

    def _on_key(self, event: Any) -> None:
        call = key_action(str(event.key), bool(event.ctrlKey), bool(event.metaKey))
        if call is None:
            return
        event.preventDefault()
        self.send(call)

    def _on_field_key(self, event: Any) -> None:
        """Keys in the text field: keys that are not text are pressed; text comes as input events."""
        if bool(event.isComposing) or str(event.key) in ("Process", "Dead"):
            return  # an IME or a dead key is composing: its text comes at compositionend / input
        call = key_action(str(event.key), bool(event.ctrlKey), bool(event.metaKey))
        if call is not None and call[0] == "press_key":
            event.preventDefault()
            self._send_field_text()  # what was typed before the key reaches the phone first
            self.send(call)

    def _on_input(self, event: Any) -> None:
        if bool(getattr(event, "isComposing", False)):
            return  # mid-composition: the text is not chosen yet
        self._send_field_text()

    def _send_field_text(self) -> None:
        field = self._doc.getElementById(INPUT_ID)
        text = str(field.value or "")
        field.value = ""
        if text:
            self.send(("type_text", {"text": text}))

    # -- the calls ------------------------------------------------------------------------------

    async def _run(self) -> None:
        while True:
            calls = [await self._queue.get()]
            if calls[0][0] == "type_text":  # gather what follows at typing speed
                with contextlib.suppress(TimeoutError):
                    while True:
                        calls.append(await asyncio.wait_for(self._queue.get(), TYPING_PAUSE_S))
            for name, args in merge_typing(calls):
                try:
                    await self.context.dispatch(name, args, Channel.PAGE)
                except asyncio.CancelledError:
                    raise
                except Exception as exc:  # dispatch answers failures as results; this is a bug
                    js.console.error(f"[live view] {name} failed: {exc}")
