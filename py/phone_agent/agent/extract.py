"""ExtractScrollingContent: scroll and capture until the content stops moving, stitch the frames into
one long image, and have the model extract what the instruction asks from it.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from ..device.interface import Device, settle_screen
from ..errors import DeviceError
from ..tools.screen_source import png_size
from .model import ChatModel, collect_turn
from .ports import ImageCodec
from .prompts import extract_messages
from .stitch import FrameMatch, StitchPlan, match_frames, plan_stitch, row_keys, split_pages

MATCH_WIDTH = 120  # columns of the renderings compared row by row


@dataclass(frozen=True)
class ExtractConfig:
    max_frames: int = 20
    settle_ms: int = 2_000  # the longest wait for the scroll to settle before the screenshot
    swipe_ms: int = 400
    swipe_from: float = 0.75  # of the scrolling area's height
    swipe_to: float = 0.28
    output_width: int = 720  # the stitched image's width for the model
    page_height: int = 2400  # device rows per image sent to the model (tall images get shrunk)
    mime: str = "image/jpeg"
    quality: float = 0.85


@dataclass
class ExtractionResult:
    summary: str
    frames: int
    stitched_height: int  # device pixels
    reached_end: bool
    images: list[bytes] = field(default_factory=list, repr=False)
    note: str = ""

    def describe(self) -> str:
        end = "reached the end" if self.reached_end else "stopped before the end"
        text = f"captured {self.frames} frames, stitched {self.stitched_height} px ({end})"
        return f"{text}; {self.note}" if self.note else text


class ExtractionError(Exception):
    """Extraction gave nothing usable; the message goes back to the model."""


async def _scroll_area(device: Device, width: int, height: int) -> tuple[int, int, int]:
    """x, top and bottom of the largest scrollable node, or the middle of the screen."""
    try:
        nodes = await device.ui_nodes()
    except DeviceError:
        nodes = []
    best = None
    for node in nodes:
        if node.scrollable and node.bounds.height > height // 5:
            area = node.bounds.width * node.bounds.height
            if best is None or area > best[0]:
                best = (area, node.bounds)
    if best is None:
        return width // 2, height // 6, height * 5 // 6
    bounds = best[1]
    return bounds.center[0], bounds.top, bounds.bottom


async def extract_scrolling_content(
    device: Device,
    codec: ImageCodec,
    model: ChatModel,
    instruction: str,
    goal: str,
    config: ExtractConfig,
    on_text: Callable[[str], None] | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> ExtractionResult:
    first = await device.screenshot_png()
    width, height = png_size(first)
    match_width = min(width, MATCH_WIDTH)
    x, top, bottom = await _scroll_area(device, width, height)
    start_y = top + round((bottom - top) * config.swipe_from)
    end_y = top + round((bottom - top) * config.swipe_to)

    frames = [first]
    keys = row_keys(await codec.decode(first, match_width, height))
    matches: list[FrameMatch] = []
    reached_end = False
    note = ""
    while len(frames) < config.max_frames:
        await device.swipe(x, start_y, x, end_y, config.swipe_ms)
        if config.settle_ms:  # the scroll settled (bounded), not a fixed sleep
            await settle_screen(device, config.settle_ms)
        png = await device.screenshot_png()
        if png_size(png) != (width, height):
            note = "the screen's size changed while scrolling"
            break
        new_keys = row_keys(await codec.decode(png, match_width, height))
        match = match_frames(keys, new_keys)
        if match is None:
            note = "the screen changed in a way that is not scrolling; stopped there"
            break
        if not match.scrolled:
            reached_end = True
            break
        frames.append(png)
        matches.append(match)
        keys = new_keys
    else:
        note = f"stopped after {config.max_frames} frames"

    plan: StitchPlan = plan_stitch(height, matches)
    pages = split_pages(plan.crops(frames), config.page_height)
    images = [await codec.stitch(page, config.output_width, config.mime, config.quality) for page in pages]
    del frames  # the PNGs are no longer needed; keep memory bounded
    urls = [f"data:{config.mime};base64,{base64.b64encode(image).decode('ascii')}" for image in images]
    heights = [round(sum(c.bottom - c.top for c in page) * config.output_width / width) for page in pages]
    messages = extract_messages(instruction, goal, urls, config.output_width, heights)
    turn = await collect_turn(model, messages, [], on_text)
    summary = turn.text.strip()
    if not summary:
        raise ExtractionError("the model extracted nothing from the captured content")
    return ExtractionResult(summary, len(matches) + 1, plan.total_height, reached_end, images, note)
