"""Scroll-capture stitching: find how far each frame scrolled (by comparing pixel rows) and plan one
long image from the frames.

Frames are compared as *row keys*: each pixel row of a narrow, full-height rendering (columns
averaged, rows untouched, so a row scrolled by ``d`` pixels stays byte-identical) is hashed, minus a
margin at both sides where scrollbars fade in and out. The shift between two frames is found by
voting: every distinctive row of the new frame votes for the offsets at which the same row appears
in the old one. The winner is checked by the longest run of rows that match at that offset, so a
fixed status bar, header or navigation bar (which match at offset 0) cannot fool it.

Cost: one hash per row plus a dictionary lookup; a 2400-row frame takes a few milliseconds.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from .ports import Crop, RgbaImage

SIDE_MARGIN = 0.06  # of the width, ignored on each side (scrollbars, edge effects)
COMMON_ROW_LIMIT = 6  # a row value seen more often than this in a frame (blank rows) does not vote
MIN_RUN_ROWS = 24  # the shortest matching run that proves an overlap
GAP_ROWS = 2  # mismatching rows tolerated inside a run (a blinking caret, a ripple)


def row_keys(image: RgbaImage) -> list[int]:
    """One hash per pixel row, side margins left out."""
    stride = image.width * 4
    margin = int(image.width * SIDE_MARGIN) * 4
    data = image.data
    return [hash(data[start + margin : start + stride - margin]) for start in range(0, len(data), stride)]


@dataclass(frozen=True)
class FrameMatch:
    """How a new frame relates to the previous one.

    ``shift``: rows the content moved up (0 when nothing scrolled); ``run_start``/``run_end``: the
    rows of the new frame that show content already seen (at ``row + shift`` in the previous frame).
    """

    shift: int
    run_start: int
    run_end: int
    fixed_top: int
    fixed_bottom: int

    @property
    def scrolled(self) -> bool:
        return self.shift > 0


def _fixed_rows(old: Sequence[int], new: Sequence[int]) -> tuple[int, int]:
    height = min(len(old), len(new))
    top = 0
    while top < height and old[top] == new[top]:
        top += 1
    bottom = 0
    while bottom < height - top and old[-1 - bottom] == new[-1 - bottom]:
        bottom += 1
    return top, bottom


def _longest_run(old: Sequence[int], new: Sequence[int], shift: int) -> tuple[int, int]:
    """The longest stretch of new rows equal to old rows ``shift`` below, allowing short gaps."""
    best = (0, 0)
    start = None
    last_match = -1
    for y in range(len(new) - shift):
        if new[y] == old[y + shift]:
            if start is None or y - last_match > GAP_ROWS + 1:
                start = y
            last_match = y
            if last_match + 1 - start > best[1] - best[0]:
                best = (start, last_match + 1)
    return best


def match_frames(old: Sequence[int], new: Sequence[int]) -> FrameMatch | None:
    """The scroll between two frames' row keys; ``shift == 0`` when the content did not move; None
    when the new frame is not a scrolled version of the old one (the screen changed otherwise)."""
    if len(old) != len(new) or not old:
        return None
    height = len(new)
    top, bottom = _fixed_rows(old, new)
    if top + bottom >= height - GAP_ROWS:
        return FrameMatch(0, 0, height, height, 0)
    positions: dict[int, list[int]] = {}
    for y in range(top, height - bottom):
        positions.setdefault(old[y], []).append(y)
    counts = Counter(new[top : height - bottom])
    votes: Counter[int] = Counter()
    for y in range(top, height - bottom):
        key = new[y]
        if counts[key] > COMMON_ROW_LIMIT:
            continue
        found = positions.get(key)
        if not found or len(found) > COMMON_ROW_LIMIT:
            continue
        for position in found:
            if position > y:
                votes[position - y] += 1
    for shift, _count in votes.most_common(3):
        run_start, run_end = _longest_run(old, new, shift)
        if run_end - run_start >= MIN_RUN_ROWS:
            return FrameMatch(shift, run_start, run_end, top, bottom)
    # Nothing scrolled but some rows changed (a clock, an animation): unchanged if most rows agree.
    same = sum(1 for a, b in zip(old, new, strict=True) if a == b)
    if same >= height * 0.9:
        return FrameMatch(0, 0, height, top, bottom)
    return None


@dataclass
class StitchPlan:
    """Which rows of which frame make the long image, in device pixels.

    Frame 0 gives rows ``[0, view_bottom)``, every later frame the rows its scroll revealed just
    above ``view_bottom``, and the last frame its rows from ``view_bottom`` down (the fixed bottom).
    """

    height: int
    shifts: list[int]
    view_bottom: int

    @property
    def total_height(self) -> int:
        return self.height + sum(self.shifts)

    def crops(self, frames: Sequence[bytes]) -> list[Crop]:
        assert len(frames) == len(self.shifts) + 1
        crops = [Crop(frames[0], 0, self.view_bottom)]
        for frame, shift in zip(frames[1:], self.shifts, strict=True):
            crops.append(Crop(frame, self.view_bottom - shift, self.view_bottom))
        crops.append(Crop(frames[-1], self.view_bottom, self.height))
        return [crop for crop in crops if crop.bottom > crop.top]


def plan_stitch(height: int, matches: Sequence[FrameMatch]) -> StitchPlan:
    """The plan for frames whose consecutive matches (all scrolled) are ``matches``.

    The visible bottom of the scrolling area is the lowest row every match agrees on: a row the
    content reached in every pair, above any fixed footer. Taking the minimum can only move the cut
    up, which still covers the content without a gap because each frame adds exactly its shift.
    """
    if not matches:
        return StitchPlan(height, [], height)
    bottom = height
    for match in matches:
        bottom = min(bottom, match.run_end + match.shift, height - match.fixed_bottom)
    shifts = [match.shift for match in matches]
    floor = max(shifts)
    return StitchPlan(height, shifts, max(bottom, floor))


def split_pages(crops: Sequence[Crop], page_height: int) -> list[list[Crop]]:
    """The crops cut into pages of at most ``page_height`` source rows (models shrink tall images)."""
    pages: list[list[Crop]] = [[]]
    room = page_height
    for crop in crops:
        top = crop.top
        while top < crop.bottom:
            take = min(room, crop.bottom - top)
            pages[-1].append(Crop(crop.png, top, top + take))
            top += take
            room -= take
            if room == 0:
                pages.append([])
                room = page_height
    return [page for page in pages if page]
