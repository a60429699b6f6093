"""What the model sees of the phone: a downscaled screenshot, the UI tree's useful nodes, and the
exact mapping between the image's pixels and the device's.

The image is the device screenshot scaled by one factor so its longer side is at most
``max_side``; a point of the image maps to the device pixel under its centre, and a device point
maps to the image pixel that contains it, so a node's centre taken from the summary and sent back
lands inside the node.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Callable
from dataclasses import dataclass, field

from ..device.interface import Device, UiNode
from ..errors import DeviceError
from ..tools.locators import ScreenSnapshot
from ..tools.screen_source import SCREENCAP, LiveScreen, take_look
from .ports import ImageCodec

THUMB_WIDTH = 48
THUMB_HEIGHT = 96
MAX_NODES = 80


@dataclass(frozen=True)
class ScreenMapping:
    """Device size and the model image's size; converts points both ways."""

    device_width: int
    device_height: int
    image_width: int
    image_height: int

    @classmethod
    def fit(cls, width: int, height: int, max_side: int) -> ScreenMapping:
        scale = min(1.0, max_side / max(width, height))
        return cls(width, height, max(1, round(width * scale)), max(1, round(height * scale)))

    def to_device(self, x: int, y: int) -> tuple[int, int]:
        dx = (2 * x + 1) * self.device_width // (2 * self.image_width)
        dy = (2 * y + 1) * self.device_height // (2 * self.image_height)
        return min(max(dx, 0), self.device_width - 1), min(max(dy, 0), self.device_height - 1)

    def to_image(self, x: int, y: int) -> tuple[int, int]:
        ix = x * self.image_width // self.device_width
        iy = y * self.image_height // self.device_height
        return min(max(ix, 0), self.image_width - 1), min(max(iy, 0), self.image_height - 1)


@dataclass(frozen=True)
class NodeSummary:
    """One useful UI element as the model reads it: its ref, label, role and centre in image pixels."""

    label: str
    kind: str
    x: int
    y: int
    flags: tuple[str, ...] = ()
    ref: str = ""

    def line(self) -> str:
        flags = f" [{', '.join(self.flags)}]" if self.flags else ""
        ref = f"{self.ref} " if self.ref else ""
        return f'- {ref}"{self.label}" {self.kind} at ({self.x}, {self.y}){flags}'


@dataclass
class Observation:
    """One look at the screen."""

    png: bytes
    mapping: ScreenMapping
    image: bytes  # encoded for the model
    image_mime: str
    nodes: list[NodeSummary] = field(default_factory=list)
    thumb: bytes = b""  # a tiny RGBA rendering, to tell whether the screen changed
    snapshot: ScreenSnapshot | None = None  # the elements behind the refs the model is shown
    nodes_error: str | None = None
    current_app: str | None = None  # the foreground app, when asked for and known
    source: str = SCREENCAP  # where ``png`` came from: looks.SCREENCAP or looks.SCRCPY (a live frame)
    source_reason: str = ""  # why screencap, when a live frame was possible

    def data_url(self) -> str:
        return f"data:{self.image_mime};base64,{base64.b64encode(self.image).decode('ascii')}"

    def nodes_text(self) -> str:
        if self.nodes_error:
            return f"(the UI tree is not available: {self.nodes_error})"
        if not self.nodes:
            return "(no labelled elements in the UI tree)"
        return "\n".join(node.line() for node in self.nodes)


def summarize_nodes(nodes: list[UiNode], mapping: ScreenMapping, limit: int = MAX_NODES) -> list[NodeSummary]:
    """The elements worth telling the model (``list_elements``' own), with refs; deduplicated."""
    snapshot = ScreenSnapshot.from_nodes(nodes, mapping.device_width, mapping.device_height)
    return summarize_snapshot(snapshot, mapping, limit)


# The agent's screen words a checked element "on" and an unchecked one "off" (the tools: checked/unchecked).
_SWITCH_WORDS = {"checked": "on", "unchecked": "off"}


def summarize_snapshot(
    snapshot: ScreenSnapshot, mapping: ScreenMapping, limit: int = MAX_NODES
) -> list[NodeSummary]:
    summaries: list[NodeSummary] = []
    seen: set[tuple[str, int, int]] = set()
    for element in snapshot.elements:
        x, y = mapping.to_image(*element.center)
        key = (element.label, x, y)
        if key in seen:
            continue
        seen.add(key)
        flags = tuple(_SWITCH_WORDS.get(state, state) for state in element.states())
        summaries.append(NodeSummary(element.label, element.role, x, y, flags, element.ref))
        if len(summaries) >= limit:
            break
    return summaries


async def observe(
    device: Device,
    codec: ImageCodec,
    *,
    max_side: int,
    mime: str = "image/jpeg",
    quality: float = 0.8,
    with_nodes: bool = True,
    with_app: bool = False,
    previous: Observation | None = None,
    live: LiveScreen | None = None,
    redact_nodes: Callable[[list[UiNode]], None] | None = None,
) -> Observation:
    """Screenshot, scale for the model, read the UI tree and the foreground app. ``redact_nodes``
    hides in the tree the secrets typed into plain fields (named_secrets.SecretBook.redact_nodes).

    With ``live`` (the page's scrcpy view) the picture is its latest frame when fresh, else the
    phone's screenshot (``looks.take_look``); either way the model's image has the size a screenshot
    would give and maps to device pixels the same way.

    The phone's three answers are asked for at once (each is its own ADB stream; on a real phone
    ``screencap`` and ``uiautomator dump`` take 1–3 s each), and the screenshot is scaled while the UI
    dump is still running. A failed UI tree only loses the nodes, a failed app query only the app's
    name; a failed screenshot raises. A screenshot byte for byte the same as ``previous``'s reuses its
    scaled image instead of scaling it again.
    """
    nodes_task = asyncio.ensure_future(device.ui_nodes()) if with_nodes else None
    app_task = asyncio.ensure_future(device.current_app()) if with_app else None
    for side in (nodes_task, app_task):
        if side is not None:
            # Pyodide's loop reports a task that fails with no callback but its own as unhandled, at
            # once: a side read can fail (the link dropped) before the look awaits it, or after the
            # look gave up on it.
            side.add_done_callback(_retrieve)
    try:
        look = await take_look(device, live)
        png = look.png
        mapping = ScreenMapping.fit(look.device_width, look.device_height, max_side)
        if previous is not None and previous.png == png and previous.mapping == mapping:
            image, thumb = previous.image, previous.thumb
        else:
            image = await codec.scale(png, mapping.image_width, mapping.image_height, mime, quality)
            # From the small scaled image, not the full PNG: decoding that again costs as much as scaling.
            thumb = (await codec.decode(image, THUMB_WIDTH, THUMB_HEIGHT)).data
        observation = Observation(
            png, mapping, image, mime, thumb=thumb, source=look.source, source_reason=look.reason
        )
        if nodes_task is not None:
            try:
                nodes = await nodes_task
                if redact_nodes is not None:
                    redact_nodes(nodes)
                snapshot = ScreenSnapshot.from_nodes(nodes, mapping.device_width, mapping.device_height)
                observation.snapshot = snapshot
                observation.nodes = summarize_snapshot(snapshot, mapping)
            except DeviceError as exc:
                observation.nodes_error = exc.message
        if app_task is not None:
            try:
                observation.current_app = await app_task
            except DeviceError:
                observation.current_app = None
        return observation
    finally:
        # Work is still pending here only when something raised (or the look was cancelled). A
        # cancelled read can still end in an error (a transport that turns the cancel into
        # "disconnected"): the callback above retrieves it, whenever it ends.
        for pending in (nodes_task, app_task):
            if pending is not None:
                pending.cancel()


def _retrieve(task: asyncio.Future) -> None:
    """Mark a finished side read's outcome as seen (its error, if any, was already accounted for)."""
    if not task.cancelled():
        task.exception()


def screen_changed(before: bytes, after: bytes, ignore_rows: int = 8, tolerance: int = 24) -> bool:
    """Whether two thumbnails differ outside their top and bottom rows (status and navigation bars).

    A pixel counts as changed when a channel moves by more than ``tolerance``; the screen changed when
    more than 0.2 % of the compared pixels did (a blinking cursor alone does not count).
    """
    if len(before) != len(after) or not before:
        return True
    stride = THUMB_WIDTH * 4
    start, end = ignore_rows * stride, len(before) - ignore_rows * stride
    a, b = before[start:end], after[start:end]
    if a == b:
        return False
    changed = 0
    limit = max(1, (len(a) // 4) // 500)
    for index in range(0, len(a), 4):
        if (
            abs(a[index] - b[index]) > tolerance
            or abs(a[index + 1] - b[index + 1]) > tolerance
            or abs(a[index + 2] - b[index + 2]) > tolerance
        ):
            changed += 1
            if changed > limit:
                return True
    return False
