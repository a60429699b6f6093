"""Draw a screen's node tree with Pillow and encode it as screencap does
(PNG, or the raw header + RGBA pixels)."""

from __future__ import annotations

import io
import struct
from collections.abc import Callable
from dataclasses import dataclass
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


@dataclass(frozen=True)
class _Canvas:
    """Where one node is painted: the image, its ``draw``, the node, its paint and its box."""

    image: Image.Image
    draw: ImageDraw.ImageDraw
    node: SimulatedView
    p: Paint
    box: Rect

    @property
    def center(self) -> tuple[int, int]:
        x1, y1, x2, y2 = self.box
        return (x1 + x2) // 2, (y1 + y2) // 2


# The kinds whose background ``p.bg`` is filled before their own painting.
_FILLED = frozenset({"box", "text", "button", "card", "edit"})


def _paint(image: Image.Image, node: SimulatedView, p: Paint, box: Rect) -> None:
    x1, y1, x2, y2 = box
    if p.kind == "wallpaper":
        image.paste(_wallpaper(p.bg or (0, 0, 0), (12, 18, 32)), (x1, y1))
        return
    draw = ImageDraw.Draw(image)
    if p.bg is not None and p.kind in _FILLED:
        if p.radius:
            draw.rounded_rectangle(box, radius=p.radius, fill=p.bg)
        else:
            draw.rectangle((x1, y1, x2 - 1, y2 - 1), fill=p.bg)
    painter = _PAINTERS.get(p.kind)
    if painter is not None:
        painter(_Canvas(image, draw, node, p, box))


def _paint_text(c: _Canvas) -> None:
    _text(c.draw, c.box, c.node.text, c.p)


def _paint_lines(c: _Canvas) -> None:
    _lines(c.draw, c.box, c.node.text, c.p)


def _paint_bubble(c: _Canvas) -> None:
    x1, y1, x2, y2 = c.box
    c.draw.rounded_rectangle(c.box, radius=c.p.radius, fill=c.p.bg)
    _lines(c.draw, (x1, y1 + 22 - c.p.pad, x2, y2), c.node.text, c.p)


def _paint_circle(c: _Canvas) -> None:
    c.draw.ellipse(c.box, fill=c.p.bg)
    draw_text(c.draw, c.center, c.p.label, c.p.size, c.p.fg, "mm", 1)


def _paint_app_icon(c: _Canvas) -> None:
    (cx, _), (_, y1, _, y2), r = c.center, c.box, 85
    c.draw.ellipse((cx - r, y1 + 10, cx + r, y1 + 10 + 2 * r), fill=c.p.bg)
    draw_text(c.draw, (cx, y1 + 10 + r), c.p.label, 80, c.p.fg, "mm", 2)
    draw_text(c.draw, (cx, y2 - 45), c.node.text, c.p.size, c.p.fg, "mm")


def _paint_switch(c: _Canvas) -> None:
    (x1, _, x2, _), (_, cy), checked = c.box, c.center, c.node.checked
    track_on, track_off = PRIMARY, (226, 226, 233)
    h = 80
    c.draw.rounded_rectangle(
        (x1 + 10, cy - h // 2, x2 - 10, cy + h // 2),
        radius=h // 2,
        fill=track_on if checked else track_off,
        outline=None if checked else (120, 120, 128),
        width=4,
    )
    if checked:
        c.draw.ellipse((x2 - 10 - h + 10, cy - h // 2 + 10, x2 - 20, cy + h // 2 - 10), fill=(255, 255, 255))
    else:
        c.draw.ellipse((x1 + 26, cy - 20, x1 + 66, cy + 20), fill=(120, 120, 128))


def _paint_edit(c: _Canvas) -> None:
    (x1, _, x2, _), (_, cy), p, node = c.box, c.center, c.p, c.node
    if node.focused:
        c.draw.rounded_rectangle(c.box, radius=p.radius, outline=PRIMARY, width=4)
    shown = (node.text if node.text != p.label else "").replace("\n", " ")
    width = x2 - x1 - 2 * p.pad - 10
    if shown:
        visible = tail(shown, p.size, width)
        draw_text(c.draw, (x1 + p.pad, cy), visible, p.size, (28, 27, 31))
        caret_x = x1 + p.pad + text_width(visible, p.size) + 4
    else:
        draw_text(c.draw, (x1 + p.pad, cy), p.label, p.size, HINT)
        caret_x = x1 + p.pad - 2
    if node.focused:
        c.draw.line((caret_x, cy - p.size // 2 - 4, caret_x, cy + p.size // 2 + 4), fill=PRIMARY, width=4)


def _paint_send(c: _Canvas) -> None:
    cx, cy = c.center
    c.draw.ellipse(c.box, fill=c.p.bg)
    c.draw.polygon([(cx - 30, cy - 34), (cx + 38, cy), (cx - 30, cy + 34), (cx - 18, cy)], fill=c.p.fg)


def _paint_arrow_back(c: _Canvas) -> None:
    (cx, cy), color = c.center, (28, 27, 31)
    c.draw.line((cx - 36, cy, cx + 36, cy), fill=color, width=7)
    c.draw.line((cx - 36, cy, cx - 6, cy - 30), fill=color, width=7)
    c.draw.line((cx - 36, cy, cx - 6, cy + 30), fill=color, width=7)


def _paint_nav_back(c: _Canvas) -> None:
    cx, cy = c.center
    c.draw.polygon([(cx + 22, cy - 28), (cx + 22, cy + 28), (cx - 26, cy)], outline=c.p.fg, width=5)


def _paint_nav_home(c: _Canvas) -> None:
    cx, cy = c.center
    c.draw.ellipse((cx - 30, cy - 30, cx + 30, cy + 30), outline=c.p.fg, width=5)


def _paint_nav_recent_apps(c: _Canvas) -> None:
    cx, cy = c.center
    c.draw.rounded_rectangle((cx - 26, cy - 26, cx + 26, cy + 26), radius=6, outline=c.p.fg, width=5)


def _paint_battery(c: _Canvas) -> None:
    (x1, y1, x2, y2), (cx, _) = c.box, c.center
    c.draw.rounded_rectangle((x1 + 12, y1 + 4, x2 - 12, y2 - 2), radius=5, outline=c.p.fg, width=3)
    c.draw.rectangle((cx - 6, y1, cx + 6, y1 + 4), fill=c.p.fg)
    c.draw.rectangle((x1 + 17, y1 + 14, x2 - 17, y2 - 7), fill=c.p.fg)


def _paint_wifi(c: _Canvas) -> None:
    x1, y1, x2, _ = c.box
    c.draw.pieslice((x1, y1, x2, y1 + (x2 - x1)), 225, 315, fill=c.p.fg)


def _paint_bluetooth(c: _Canvas) -> None:
    (x1, y1, x2, y2), (cx, _) = c.box, c.center
    top, bottom, left, right = y1 + 4, y2 - 4, x1 + 4, x2 - 4
    mid = (top + bottom) // 2
    q = (bottom - top) // 4
    c.draw.line(
        [(left, mid - q), (right, mid + q), (cx, bottom), (cx, top), (right, mid - q), (left, mid + q)],
        fill=c.p.fg,
        width=4,
    )


def _paint_keyboard(c: _Canvas) -> None:
    _keyboard(c.draw, c.box, c.p)


def _paint_scrim(c: _Canvas) -> None:
    x1, y1, x2, y2 = c.box
    overlay = Image.new("RGB", (x2 - x1, y2 - y1), (0, 0, 0))
    c.image.paste(Image.blend(c.image.crop(c.box), overlay, 0.45), (x1, y1))


def _paint_divider_top(c: _Canvas) -> None:
    x1, y1, x2, _ = c.box
    c.draw.line((x1, y1, x2, y1), fill=c.p.fg, width=2)


def _paint_divider_bottom(c: _Canvas) -> None:
    x1, _, x2, y2 = c.box
    c.draw.line((x1 + 60, y2 - 1, x2 - 60, y2 - 1), fill=c.p.fg, width=2)


# How each kind of node is painted over its background (a box or a card is its background alone).
_PAINTERS: dict[str, Callable[[_Canvas], None]] = {
    "text": _paint_text,
    "button": _paint_text,
    "multiline": _paint_lines,
    "bubble": _paint_bubble,
    "circle": _paint_circle,
    "app_icon": _paint_app_icon,
    "switch": _paint_switch,
    "edit": _paint_edit,
    "send": _paint_send,
    "arrow_back": _paint_arrow_back,
    "nav_back": _paint_nav_back,
    "nav_home": _paint_nav_home,
    "nav_recent_apps": _paint_nav_recent_apps,
    "battery": _paint_battery,
    "wifi": _paint_wifi,
    "bluetooth": _paint_bluetooth,
    "keyboard": _paint_keyboard,
    "scrim": _paint_scrim,
    "divider_top": _paint_divider_top,
    "divider_bottom": _paint_divider_bottom,
}


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
