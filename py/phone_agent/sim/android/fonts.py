"""Fonts and text measurement shared by the screen layouts and the renderer.

Pillow's bundled scalable font (Aileron) covers ASCII only; characters outside
it are drawn as boxes, which is fine for a test phone (state() keeps the text).
"""

from __future__ import annotations

from functools import lru_cache

from PIL import ImageFont


@lru_cache(maxsize=64)
def font(size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.load_default(size=size)  # type: ignore[return-value]


def text_width(text: str, size: int) -> int:
    return int(font(size).getlength(text))


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
