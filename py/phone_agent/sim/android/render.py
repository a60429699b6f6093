"""Draw a screen's node tree with Pillow and encode it as screencap does
(PNG, or the raw header + RGBA pixels)."""

from __future__ import annotations

import io
import struct
from functools import lru_cache

from PIL import Image, ImageDraw

from .fonts import draw_text, ellipsize, font, line_height, tail, text_width, wrap
from .props import SCREEN_HEIGHT, SCREEN_WIDTH
from .ui import Color, Paint, Rect, SimulatedView

PRIMARY: Color = (26, 115, 232)
HINT: Color = (110, 114, 120)

RAW_FORMAT_RGBA_8888 = 1
COLOR_SPACE_SRGB = 1


@lru_cache(maxsize=4)
def _wallpaper(top: Color, bottom: Color) -> Image.Image:
    gradient = Image.linear_gradient("L").resize((SCREEN_WIDTH, SCREEN_HEIGHT))
    return Image.composite(
        Image.new("RGB", gradient.size, bottom), Image.new("RGB", gradient.size, top), gradient
    )


def render(windows: list[SimulatedView]) -> Image.Image:
    """The screen as an RGB image, windows drawn bottom to top."""
    image = Image.new("RGB", (SCREEN_WIDTH, SCREEN_HEIGHT), (0, 0, 0))
    draw_windows(image, windows)
    return image


def draw_windows(image: Image.Image, windows: list[SimulatedView]) -> None:
    """Draw ``windows`` over ``image``, bottom to top."""
    for root in windows:
        _draw_node(image, root, 0, 0)


class LayeredRenderer:
    """``render`` for a stream of frames (the scrcpy encoder): the image drawn up to a window that
    stayed the same is kept, and a frame redraws only from the first window that differs from the
    last frame's (by value: the trees are rebuilt per change). A clock tick redraws the status bar
    and the nav bar over the kept app window instead of the whole screen; an unchanged screen is the
    same image. Pixel for pixel what ``render`` draws (the same drawing, in the same order, on the
    same pixels).

    The layers are images allocated once and copied into (a new full-screen image per frame costs
    more in fresh memory than the drawing saves), so the image returned is valid until the next
    ``render`` and must not be drawn on. Not thread-safe: one per user.
    """

    def __init__(self) -> None:
        self._windows: list[SimulatedView] = []
        self._layers: list[Image.Image] = []  # _layers[i]: the screen with windows[: i + 1] drawn
        self._kept = 0  # how many of _layers hold the last frame's windows
        self._frame = Image.new("RGB", (SCREEN_WIDTH, SCREEN_HEIGHT), (0, 0, 0))

    def render(self, windows: list[SimulatedView]) -> Image.Image:
        frame, layers, last = self._frame, self._layers, self._windows
        same = 0
        limit = min(len(windows), len(last))
        while same < limit and (windows[same] is last[same] or windows[same] == last[same]):
            same += 1
        if same == len(windows) == len(last):
            return frame
        start = min(same, self._kept, len(windows) - 1) if windows else 0
        if start:
            frame.paste(layers[start - 1], (0, 0))
        else:
            frame.paste((0, 0, 0), (0, 0, SCREEN_WIDTH, SCREEN_HEIGHT))
        kept = start
        for index in range(start, len(windows)):
            _draw_node(frame, windows[index], 0, 0)
            # Kept only under the top window, and only for a window that did not just change (the
            # status bar of a ticking clock would be copied on every frame for nothing).
            if index == kept and index < same and index < len(windows) - 1:
                if index < len(layers):
                    layers[index].paste(frame, (0, 0))
                else:
                    layers.append(frame.copy())
                kept += 1
        self._windows, self._kept = list(windows), kept
        return frame


def _draw_node(image: Image.Image, node: SimulatedView, ox: int, oy: int) -> None:
    if node.paint is not None:
        x1, y1, x2, y2 = node.draw_box
        _paint(image, node, node.paint, (x1 - ox, y1 - oy, x2 - ox, y2 - oy))
    if node.clip and node.children:
        bx1, by1, bx2, by2 = node.bounds
        sub = image.crop((bx1 - ox, by1 - oy, bx2 - ox, by2 - oy))
        for child in node.children:
            _draw_node(sub, child, bx1, by1)
        image.paste(sub, (bx1 - ox, by1 - oy))
        return
    for child in node.children:
        _draw_node(image, child, ox, oy)


def _text(draw: ImageDraw.ImageDraw, box: Rect, text: str, p: Paint, fg: Color | None = None) -> None:
    x1, y1, x2, y2 = box
    cy = (y1 + y2) // 2
    width = x2 - x1 - 2 * p.pad
    text = ellipsize(text.replace("\n", " "), p.size, width)
    stroke = 1 if p.bold else 0
    color = fg or p.fg
    if p.align == "center":
        draw_text(draw, ((x1 + x2) // 2, cy), text, p.size, color, "mm", stroke)
    elif p.align == "right":
        draw_text(draw, (x2 - p.pad, cy), text, p.size, color, "rm", stroke)
    else:
        draw_text(draw, (x1 + p.pad, cy), text, p.size, color, "lm", stroke)


def _lines(draw: ImageDraw.ImageDraw, box: Rect, text: str, p: Paint) -> None:
    x1, y1, x2, _ = box
    step = line_height(p.size)
    top = y1 + p.pad if p.pad else y1
    for i, line in enumerate(wrap(text, p.size, x2 - x1 - 2 * p.pad)):
        draw_text(draw, (x1 + p.pad, top + i * step + step // 2), line, p.size, p.fg)


def _paint(image: Image.Image, node: SimulatedView, p: Paint, box: Rect) -> None:
    draw = ImageDraw.Draw(image)
    x1, y1, x2, y2 = box
    cx, cy = (x1 + x2) // 2, (y1 + y2) // 2
    kind = p.kind
    if kind == "wallpaper":
        image.paste(_wallpaper(p.bg or (0, 0, 0), (12, 18, 32)), (x1, y1))
        return
    if p.bg is not None and kind in ("box", "text", "button", "card", "edit"):
        if p.radius:
            draw.rounded_rectangle(box, radius=p.radius, fill=p.bg)
        else:
            draw.rectangle((x1, y1, x2 - 1, y2 - 1), fill=p.bg)
    if kind in ("text", "button"):
        _text(draw, box, node.text, p)
    elif kind == "multiline":
        _lines(draw, box, node.text, p)
    elif kind == "bubble":
        draw.rounded_rectangle(box, radius=p.radius, fill=p.bg)
        _lines(draw, (x1, y1 + 22 - p.pad, x2, y2), node.text, p)
    elif kind == "circle":
        draw.ellipse(box, fill=p.bg)
        draw_text(draw, (cx, cy), p.label, p.size, p.fg, "mm", 1)
    elif kind == "app_icon":
        r = 85
        draw.ellipse((cx - r, y1 + 10, cx + r, y1 + 10 + 2 * r), fill=p.bg)
        draw_text(draw, (cx, y1 + 10 + r), p.label, 80, p.fg, "mm", 2)
        draw_text(draw, (cx, y2 - 45), node.text, p.size, p.fg, "mm")
    elif kind == "switch":
        track_on, track_off = PRIMARY, (226, 226, 233)
        h = 80
        draw.rounded_rectangle(
            (x1 + 10, cy - h // 2, x2 - 10, cy + h // 2),
            radius=h // 2,
            fill=track_on if node.checked else track_off,
            outline=None if node.checked else (120, 120, 128),
            width=4,
        )
        if node.checked:
            draw.ellipse(
                (x2 - 10 - h + 10, cy - h // 2 + 10, x2 - 20, cy + h // 2 - 10), fill=(255, 255, 255)
            )
        else:
            draw.ellipse((x1 + 26, cy - 20, x1 + 66, cy + 20), fill=(120, 120, 128))
    elif kind == "edit":
        if node.focused:
            draw.rounded_rectangle(box, radius=p.radius, outline=PRIMARY, width=4)
        shown = (node.text if node.text != p.label else "").replace("\n", " ")
        width = x2 - x1 - 2 * p.pad - 10
        if shown:
            visible = tail(shown, p.size, width)
            draw_text(draw, (x1 + p.pad, cy), visible, p.size, (28, 27, 31))
            caret_x = x1 + p.pad + text_width(visible, p.size) + 4
        else:
            draw_text(draw, (x1 + p.pad, cy), p.label, p.size, HINT)
            caret_x = x1 + p.pad - 2
        if node.focused:
            draw.line((caret_x, cy - p.size // 2 - 4, caret_x, cy + p.size // 2 + 4), fill=PRIMARY, width=4)
    elif kind == "send":
        draw.ellipse(box, fill=p.bg)
        draw.polygon([(cx - 30, cy - 34), (cx + 38, cy), (cx - 30, cy + 34), (cx - 18, cy)], fill=p.fg)
    elif kind == "card":
        pass
    elif kind == "arrow_back":
        c = (28, 27, 31)
        draw.line((cx - 36, cy, cx + 36, cy), fill=c, width=7)
        draw.line((cx - 36, cy, cx - 6, cy - 30), fill=c, width=7)
        draw.line((cx - 36, cy, cx - 6, cy + 30), fill=c, width=7)
    elif kind == "nav_back":
        draw.polygon([(cx + 22, cy - 28), (cx + 22, cy + 28), (cx - 26, cy)], outline=p.fg, width=5)
    elif kind == "nav_home":
        draw.ellipse((cx - 30, cy - 30, cx + 30, cy + 30), outline=p.fg, width=5)
    elif kind == "nav_recent_apps":
        draw.rounded_rectangle((cx - 26, cy - 26, cx + 26, cy + 26), radius=6, outline=p.fg, width=5)
    elif kind == "battery":
        draw.rounded_rectangle((x1 + 12, y1 + 4, x2 - 12, y2 - 2), radius=5, outline=p.fg, width=3)
        draw.rectangle((cx - 6, y1, cx + 6, y1 + 4), fill=p.fg)
        draw.rectangle((x1 + 17, y1 + 14, x2 - 17, y2 - 7), fill=p.fg)
    elif kind == "wifi":
        draw.pieslice((x1, y1, x2, y1 + (x2 - x1)), 225, 315, fill=p.fg)
    elif kind == "bluetooth":
        top, bottom, left, right = y1 + 4, y2 - 4, x1 + 4, x2 - 4
        mid = (top + bottom) // 2
        q = (bottom - top) // 4
        draw.line(
            [(left, mid - q), (right, mid + q), (cx, bottom), (cx, top), (right, mid - q), (left, mid + q)],
            fill=p.fg,
            width=4,
        )
    elif kind == "keyboard":
        _keyboard(draw, box, p)
    elif kind == "scrim":
        overlay = Image.new("RGB", (x2 - x1, y2 - y1), (0, 0, 0))
        image.paste(Image.blend(image.crop(box), overlay, 0.45), (x1, y1))
    elif kind == "divider_top":
        draw.line((x1, y1, x2, y1), fill=p.fg, width=2)
    elif kind == "divider_bottom":
        draw.line((x1 + 60, y2 - 1, x2 - 60, y2 - 1), fill=p.fg, width=2)


KEY_ROWS = ("qwertyuiop", "asdfghjkl", "zxcvbnm")


def _keyboard(draw: ImageDraw.ImageDraw, box: Rect, p: Paint) -> None:
    """A soft keyboard's keys (the IME window's picture; its keys are not nodes, as on Gboard)."""
    x1, y1, x2, y2 = box
    draw.rectangle((x1, y1, x2 - 1, y2 - 1), fill=p.bg or (232, 234, 237))
    rows = [*KEY_ROWS, ""]
    step = (y2 - y1 - 20) // len(rows)
    f = font(p.size)
    for r, keys in enumerate(rows):
        top = y1 + 20 + r * step
        labels = list(keys) if keys else ["?123", ",", "space", ".", "enter"]
        width = (x2 - x1) // 10
        left = x1 + ((x2 - x1) - width * len(labels)) // 2 if keys else x1
        widths = [width] * len(labels) if keys else [160, 110, 540, 110, 160]
        for text, w in zip(labels, widths, strict=True):
            draw.rounded_rectangle(
                (left + 6, top + 8, left + w - 6, top + step - 8), radius=14, fill=WHITE_KEY
            )
            draw.text((left + w // 2, top + step // 2), text, font=f, fill=p.fg, anchor="mm")
            left += w


WHITE_KEY = (255, 255, 255)


def encode_png(image: Image.Image) -> bytes:
    """PNG as `screencap -p` writes it (RGBA, 8 bits per channel)."""
    out = io.BytesIO()
    image.convert("RGBA").save(out, "PNG", compress_level=1)
    return out.getvalue()


def encode_raw(image: Image.Image) -> bytes:
    """`screencap` without -p: u32 width, height, format (RGBA_8888), colour space, then pixels."""
    header = struct.pack("<4I", image.width, image.height, RAW_FORMAT_RGBA_8888, COLOR_SPACE_SRGB)
    return header + image.convert("RGBA").tobytes()
