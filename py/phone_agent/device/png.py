"""PNG written from RGBA pixels, and ``screencap``'s raw answer read as pixels. Pure.

A phone's ``screencap -p`` spends most of its time PNG-encoding ~10 MB of pixels on one core (0.3–1 s
on a mid-range phone); ``screencap`` without ``-p`` writes the same capture uncompressed (~0.1 s) and
the host writes the PNG (``encode_png``: no row filter, zlib's fastest level — tens of ms).

The raw answer (AOSP frameworks/base/cmds/screencap/screencap.cpp): little-endian u32 width, height,
pixel format, then (Android 9 and later) the data space, then the rows, 4 bytes a pixel for RGBA_8888.
``read_raw_screencap`` reads only what it is sure to read right: RGBA_8888 whose size is exactly a
12- or 16-byte header and the pixels; for anything else the caller asks for ``-p`` instead.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
RAW_RGBA_8888 = 1  # android.graphics.PixelFormat.RGBA_8888 (the format screencap writes on phones)
RAW_HEADERS = (16, 12)  # width, height, format and data space (Android 9+); no data space before


@dataclass(frozen=True)
class RawScreen:
    """What a raw capture's header says, and where its RGBA rows begin in the answer (no copy made)."""

    width: int
    height: int
    header: int  # bytes before the first pixel: the answer's size less the pixels the header says

    @property
    def whole(self) -> bool:
        """Whether the answer is exactly a header and the pixels it says (none missing, none extra)."""
        return self.header in RAW_HEADERS


def read_raw_screencap(data: bytes) -> RawScreen | None:
    """The raw answer's header when it says RGBA_8888 (check its sides and ``whole`` before reading the
    pixels), else None: another pixel format, or not a raw answer at all."""
    if len(data) < 12:
        return None
    width, height, pixel_format = struct.unpack_from("<3I", data)
    if pixel_format != RAW_RGBA_8888:
        return None
    return RawScreen(width, height, len(data) - width * height * 4)


def encode_png(width: int, height: int, rgba: bytes | memoryview, offset: int = 0) -> bytes:
    """RGBA pixels (``width`` × ``height``, from ``offset`` in ``rgba``) as a PNG: no row filter, zlib's
    fastest level, the rows fed to the compressor in place (no joined copy of the image)."""
    stride = width * 4
    view = memoryview(rgba)
    packer = zlib.compressobj(1)
    parts: list[bytes] = []
    for row in range(height):
        start = offset + row * stride
        parts.append(packer.compress(b"\x00"))  # filter type 0 (None) before each row
        parts.append(packer.compress(view[start : start + stride]))
    parts.append(packer.flush())

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return PNG_SIGNATURE + chunk(b"IHDR", header) + chunk(b"IDAT", b"".join(parts)) + chunk(b"IEND", b"")
