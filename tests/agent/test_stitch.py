"""Scroll stitching: the overlap between frames is found from their pixel rows, exactly, despite a
fixed header and footer, a status bar that changes, and blank rows that look alike."""

from __future__ import annotations

import io
import itertools
import random

from PIL import Image

from phone_agent.agent.ports import Crop, RgbaImage
from phone_agent.agent.stitch import match_frames, plan_stitch, row_keys, split_pages
from phone_agent.sim.android.screens import catalog_max_scroll
from tests.agent.pillow_codec import PillowCodec
from tests.agent.sim_device import SimDevice

WIDTH, HEADER, VIEW, FOOTER = 40, 30, 300, 20
HEIGHT = HEADER + VIEW + FOOTER


def content_rows(count: int, seed: int = 7) -> list[bytes]:
    rng = random.Random(seed)
    rows = []
    for y in range(count):
        if y % 50 < 12:  # separators: blank rows, identical everywhere
            rows.append(bytes([250, 250, 250, 255]) * WIDTH)
        else:
            rows.append(bytes(rng.randrange(256) if i % 4 != 3 else 255 for i in range(WIDTH * 4)))
    return rows


def frame(content: list[bytes], offset: int, clock: int = 0) -> RgbaImage:
    header = [
        bytes([clock, 10, 10, 255]) * WIDTH if y < 8 else bytes([20, 20, 20, 255]) * WIDTH
        for y in range(HEADER)
    ]
    footer = [bytes([240, 240, 244, 255]) * WIDTH] * FOOTER
    rows = header + content[offset : offset + VIEW] + footer
    return RgbaImage(WIDTH, HEIGHT, b"".join(rows))


def test_shift_is_found_exactly_despite_fixed_bars_and_a_changing_clock():
    content = content_rows(2000)
    for old, new in [(0, 1), (0, 137), (100, 299), (500, 520)]:
        match = match_frames(row_keys(frame(content, old, clock=1)), row_keys(frame(content, new, clock=2)))
        assert match is not None and match.shift == new - old


def test_unchanged_and_unrelated_frames():
    content = content_rows(2000)
    same = match_frames(row_keys(frame(content, 40, clock=1)), row_keys(frame(content, 40, clock=9)))
    assert same is not None and same.shift == 0
    other = content_rows(2000, seed=99)
    assert match_frames(row_keys(frame(content, 0)), row_keys(frame(other, 0))) is None


def test_stitched_rows_are_the_content_without_gaps_or_repeats():
    content = content_rows(1400)
    offsets = [0, 211, 422, 600, 811, 1022, 1100]  # the last scroll is short: the list's end
    frames = [frame(content, offset, clock=index) for index, offset in enumerate(offsets)]
    keys = [row_keys(f) for f in frames]
    matches = [match_frames(a, b) for a, b in itertools.pairwise(keys)]
    assert [m.shift for m in matches] == [b - a for a, b in itertools.pairwise(offsets)]
    plan = plan_stitch(HEIGHT, matches)
    names = [str(i).encode() for i in range(len(frames))]
    rows: list[bytes] = []
    for crop in plan.crops(names):
        image = frames[int(crop.png)]
        rows += [image.row(y) for y in range(crop.top, crop.bottom)]
    expected = [frames[0].row(y) for y in range(HEADER)] + content[: offsets[-1] + VIEW]
    expected += [frames[-1].row(y) for y in range(HEADER + VIEW, HEIGHT)]
    assert plan.total_height == len(rows) == HEIGHT + offsets[-1]
    assert rows[HEADER:-FOOTER] == expected[HEADER:-FOOTER]


def test_split_pages_cuts_crops_at_page_height():
    crops = [Crop(b"a", 0, 700), Crop(b"b", 100, 400), Crop(b"c", 0, 50)]
    pages = split_pages(crops, 400)
    assert [sum(c.bottom - c.top for c in page) for page in pages] == [400, 400, 250]
    assert pages[1][0] == Crop(b"a", 400, 700) and pages[1][1] == Crop(b"b", 100, 200)


async def test_sim_catalog_stitches_to_the_true_list():
    """Frames of the simulated phone's Catalog, stitched at full width, equal the list at every offset."""
    device, codec = SimDevice(), PillowCodec()
    await device.open_app("com.phoneagent.catalog")
    pngs, keys, matches = [], [], []
    for _ in range(12):
        png = await device.screenshot_png()
        current = row_keys(await codec.decode(png, 120, 2400))
        if keys:
            match = match_frames(keys[-1], current)
            assert match is not None
            if not match.scrolled:
                break
            matches.append(match)
        pngs.append(png)
        keys.append(current)
        await device.swipe(540, 1800, 540, 700, 400)
    plan = plan_stitch(2400, matches)
    assert plan.total_height == 2400 + catalog_max_scroll()
    stitched = Image.open(io.BytesIO(await codec.stitch(plan.crops(pngs), 1080, "image/png", 1.0))).convert(
        "RGB"
    )
    assert stitched.size == (1080, plan.total_height)
    for scroll in (0, 1234, 4321, catalog_max_scroll()):
        device.phone.catalog_scroll = scroll
        device.phone.version += 1
        truth = (
            Image.open(io.BytesIO(device.phone.screenshot_png())).convert("RGB").crop((0, 340, 1080, 2274))
        )
        # Rows 340-341 are the list's top divider, drawn over the content: compare below it.
        got = stitched.crop((0, 342 + scroll, 1080, 2274 + scroll))
        assert got.tobytes() == truth.crop((0, 2, 1080, truth.height)).tobytes(), scroll
