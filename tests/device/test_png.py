"""device.png: raw ``screencap`` answers read (both header lengths, only RGBA_8888 of the right size)
and written as a PNG that decodes to the same pixels."""

from __future__ import annotations

import io
import struct

from PIL import Image

from phone_agent.device.png import encode_png, read_raw_screencap


def raw_answer(width: int, height: int, pixels: bytes, header: int = 16, pixel_format: int = 1) -> bytes:
    head = struct.pack("<3I", width, height, pixel_format) + (b"\0\0\0\0" if header == 16 else b"")
    return head + pixels


def test_a_raw_answer_becomes_a_png_of_the_same_pixels() -> None:
    pixels = bytes((x * 7 + y * 13 + c * 50) % 256 for y in range(5) for x in range(3) for c in range(4))
    for header in (16, 12):
        data = raw_answer(3, 5, pixels, header)
        raw = read_raw_screencap(data)
        assert raw is not None and raw.whole and (raw.width, raw.height, raw.header) == (3, 5, header)
        image = Image.open(io.BytesIO(encode_png(raw.width, raw.height, data, raw.header)))
        assert image.size == (3, 5) and image.mode == "RGBA"
        assert image.tobytes() == pixels


def test_what_is_not_a_whole_rgba_answer_is_not_read() -> None:
    pixels = b"\x10" * (3 * 5 * 4)
    assert read_raw_screencap(b"usage: screencap") is None  # too short for a header
    assert read_raw_screencap(raw_answer(3, 5, pixels, pixel_format=4)) is None  # RGB_565
    short = read_raw_screencap(raw_answer(3, 5, pixels[:-12]))  # a row missing
    assert short is not None and not short.whole
    bomb = read_raw_screencap(raw_answer(100_000, 100_000, pixels))  # says so; never allocated
    assert bomb is not None and (bomb.width, bomb.height) == (100_000, 100_000) and not bomb.whole
