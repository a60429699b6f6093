"""Fonts and text measurement shared by the screen layouts and the renderer.

Text is drawn glyph by glyph from the first font that has the glyph: Pillow's bundled Aileron (ASCII),
then Debian's DejaVu Sans (Latin, Greek, Cyrillic, symbols), WenQuanYi Micro Hei (Chinese, Japanese,
Korean) and Noto Color Emoji (emoji, a colour bitmap scaled to the text's size). ``scripts/setup``
installs the packages (fonts-dejavu-core, fonts-wqy-microhei, fonts-noto-color-emoji); a phone without
them draws boxes for what they would cover, and ``missing_fonts`` says which, so the screen can say so.
Which characters a font has comes from its ``cmap`` table, read here (no extra dependency).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

Color = tuple[int, int, int]

# (what it covers, the Debian package, where Debian puts it, a bitmap strike size or 0 for outlines)
FALLBACKS: tuple[tuple[str, str, str, int], ...] = (
    ("accents, Greek, Cyrillic", "fonts-dejavu-core", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", 0),
    ("Chinese, Japanese, Korean", "fonts-wqy-microhei", "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc", 0),
    ("emoji", "fonts-noto-color-emoji", "/usr/share/fonts/truetype/noto/NotoColorEmoji.ttf", 109),
)
EMOJI_SCALE = 1.15  # an emoji is drawn a little taller than the text's size, as phones do


def _cmap(path: str) -> frozenset[int]:
    """The code points a TrueType/OpenType font (or the first of a collection) maps to a glyph."""
    data = Path(path).read_bytes()
    base = struct.unpack_from(">I", data, 12)[0] if data[:4] == b"ttcf" else 0
    (tables,) = struct.unpack_from(">H", data, base + 4)
    cmap = next(
        (
            struct.unpack_from(">I", data, base + 12 + 16 * i + 8)[0]
            for i in range(tables)
            if data[base + 12 + 16 * i : base + 16 + 16 * i] == b"cmap"
        ),
        None,
    )
    if cmap is None:
        return frozenset()
    (count,) = struct.unpack_from(">H", data, cmap + 2)
    subtables = {}
    for i in range(count):
        platform, encoding, offset = struct.unpack_from(">HHI", data, cmap + 4 + 8 * i)
        subtables[(platform, encoding)] = cmap + offset
    codes: set[int] = set()
    for key in ((3, 10), (0, 4), (0, 6), (3, 1), (0, 3), (0, 1), (0, 0)):
        at = subtables.get(key)
        if at is None:
            continue
        (kind,) = struct.unpack_from(">H", data, at)
        if kind == 12:
            (groups,) = struct.unpack_from(">I", data, at + 12)
            for g in range(groups):
                start, end, _glyph = struct.unpack_from(">III", data, at + 16 + 12 * g)
                codes.update(range(start, end + 1))
        elif kind == 4:
            (seg_x2,) = struct.unpack_from(">H", data, at + 6)
            segs = seg_x2 // 2
            ends = struct.unpack_from(f">{segs}H", data, at + 14)
            starts = struct.unpack_from(f">{segs}H", data, at + 16 + seg_x2)
            deltas = struct.unpack_from(f">{segs}h", data, at + 16 + 2 * seg_x2)
            range_at = at + 16 + 3 * seg_x2
            offsets = struct.unpack_from(f">{segs}H", data, range_at)
            for s in range(segs):
                for code in range(starts[s], min(ends[s], 0xFFFE) + 1):
                    if offsets[s] == 0:
                        glyph = (code + deltas[s]) & 0xFFFF
                    else:
                        where = range_at + 2 * s + offsets[s] + 2 * (code - starts[s])
                        (glyph,) = struct.unpack_from(">H", data, where)
                        glyph = (glyph + deltas[s]) & 0xFFFF if glyph else 0
                    if glyph:
                        codes.add(code)
        else:
            continue
        break
    return frozenset(codes)


@dataclass(frozen=True)
class Face:
    """One font of the chain: its file (None: Pillow's own), what it covers, its bitmap strike."""

    path: str | None
    codes: frozenset[int]
    strike: int = 0

    def has(self, char: str) -> bool:
        return ord(char) in self.codes


@lru_cache(maxsize=1)
def faces() -> tuple[Face, ...]:
    """The fonts present on this machine, in the order they are tried."""
    chain = [Face(None, frozenset(range(0x20, 0x7F)))]
    for _covers, _package, path, strike in FALLBACKS:
        try:
            chain.append(Face(path, _cmap(path), strike))
        except (OSError, struct.error):
            continue
    return tuple(chain)


def missing_fonts() -> list[str]:
    """What this phone cannot draw for want of a font package: ``["emoji (fonts-noto-color-emoji)"]``."""
    present = {face.path for face in faces()}
    return [f"{covers} ({package})" for covers, package, path, _ in FALLBACKS if path not in present]


@lru_cache(maxsize=256)
def _pillow_font(path: str | None, size: int) -> ImageFont.FreeTypeFont:
    if path is None:
        return ImageFont.load_default(size=size)  # type: ignore[return-value]
    return ImageFont.truetype(path, size)


def font(size: int) -> ImageFont.FreeTypeFont:
    """The primary font at ``size`` (ASCII)."""
    return _pillow_font(None, size)


def _face_for(char: str) -> Face:
    chain = faces()
    return next((face for face in chain if face.has(char)), chain[0])


def runs(text: str) -> list[tuple[Face, str]]:
    """``text`` cut where the font that draws it changes."""
    if text.isascii() and text.isprintable():  # the common case: the primary font draws it all
        return [(faces()[0], text)] if text else []
    out: list[tuple[Face, str]] = []
    for char in text:
        face = _face_for(char)
        if out and out[-1][0] is face:
            out[-1] = (face, out[-1][1] + char)
        else:
            out.append((face, char))
    return out


def _run_width(face: Face, text: str, size: int) -> float:
    if face.strike:
        return _pillow_font(face.path, face.strike).getlength(text) * size * EMOJI_SCALE / face.strike
    return _pillow_font(face.path, size).getlength(text)


def text_width(text: str, size: int) -> int:
    return int(sum(_run_width(face, run, size) for face, run in runs(text)))


def draw_text(
    draw: ImageDraw.ImageDraw,
    xy: tuple[int, int],
    text: str,
    size: int,
    fill: Color,
    anchor: str = "lm",
    stroke_width: int = 0,
) -> None:
    """Draw one line of ``text``, each glyph from the font that has it. ``anchor``: l/m/r then m (the
    line's middle at ``xy``'s y)."""
    x, y = xy
    chunks = runs(text)
    if len(chunks) == 1 and chunks[0][0].path is None:  # one font: Pillow anchors it itself
        draw.text(
            xy, text, font=font(size), fill=fill, anchor=anchor, stroke_width=stroke_width, stroke_fill=fill
        )
        return
    width = text_width(text, size)
    left = x - width // 2 if anchor[0] == "m" else x - width if anchor[0] == "r" else x
    for face, run in chunks:
        run_width = _run_width(face, run, size)
        if face.strike:
            _paste_bitmap_run(draw, face, run, (int(left), y), size)
        else:
            draw.text(
                (left, y),
                run,
                font=_pillow_font(face.path, size),
                fill=fill,
                anchor="lm",
                stroke_width=stroke_width,
                stroke_fill=fill,
            )
        left += run_width


def _paste_bitmap_run(
    draw: ImageDraw.ImageDraw, face: Face, run: str, at: tuple[int, int], size: int
) -> None:
    """Colour emoji: drawn at the font's one bitmap size, scaled to the text's, pasted by its alpha."""
    big = _pillow_font(face.path, face.strike)
    width = max(1, int(big.getlength(run)))
    height = int(face.strike * 1.25)
    tile = Image.new("RGBA", (width, height), (0, 0, 0, 0))
    ImageDraw.Draw(tile).text((0, height // 2), run, font=big, embedded_color=True, anchor="lm")
    scale = size * EMOJI_SCALE / face.strike
    tile = tile.resize((max(1, int(width * scale)), max(1, int(height * scale))), Image.Resampling.LANCZOS)
    image = draw._image  # the image this draw paints on
    image.paste(tile, (at[0], at[1] - tile.height // 2), tile)


def ellipsize(text: str, size: int, width: int) -> str:
    """Cut text to fit `width` pixels, ending with '...' when cut."""
    if text_width(text, size) <= width:
        return text
    while text and text_width(text + "...", size) > width:
        text = text[:-1]
    return text + "..."


def tail(text: str, size: int, width: int) -> str:
    """The end of text that fits `width` pixels (a field showing its last characters)."""
    while text and text_width(text, size) > width:
        text = text[1:]
    return text


def wrap(text: str, size: int, width: int) -> list[str]:
    """Break text into lines of at most `width` pixels, at spaces when possible."""
    lines: list[str] = []
    for paragraph in text.split("\n"):
        line = ""
        for word in paragraph.split(" "):
            candidate = f"{line} {word}" if line else word
            if text_width(candidate, size) <= width:
                line = candidate
                continue
            if line:
                lines.append(line)
            line = ""
            while text_width(word, size) > width:  # a word longer than a line
                cut = len(word)
                while cut > 1 and text_width(word[:cut], size) > width:
                    cut -= 1
                lines.append(word[:cut])
                word = word[cut:]
            line = word
        lines.append(line)
    return lines


def line_height(size: int) -> int:
    """Distance between baselines of wrapped text."""
    return size * 4 // 3 + 2
