"""The agent's ``ImageCodec`` in the page: the browser decodes, scales and encodes images natively
(``createImageBitmap`` + ``OffscreenCanvas``), so Python never loops over pixels.

Bytes cross the JavaScript boundary in one copy each way (``to_js(bytes)`` in, ``JsBuffer.to_bytes()``
out; PLATFORM.md measures both as cheap). ``decode`` with the height unchanged draws with bilinear
smoothing and no mipmaps, so each output row comes from exactly one source row: scroll stitching
compares rows byte for byte and needs a row scrolled by ``d`` pixels to stay the same row.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import js  # type: ignore[import-not-found]
from pyodide.ffi import to_js  # type: ignore[import-not-found]

from ..agent.ports import Crop, RgbaImage
from .interop import to_js_json


async def _bitmap(data: bytes) -> Any:
    blob = js.Blob.new(to_js([to_js(data)]))
    return await js.createImageBitmap(blob)


def _canvas(width: int, height: int, quality: str) -> tuple[Any, Any]:
    canvas = js.OffscreenCanvas.new(width, height)
    context = canvas.getContext("2d")
    context.imageSmoothingEnabled = True
    context.imageSmoothingQuality = quality
    return canvas, context


async def _encode(canvas: Any, mime: str, quality: float) -> bytes:
    options = to_js_json({"type": mime, "quality": quality} if mime == "image/jpeg" else {"type": mime})
    blob = await canvas.convertToBlob(options)
    buffer = await blob.arrayBuffer()
    return buffer.to_bytes()


async def canvas_png(source: Any) -> bytes:
    """A canvas's pixels (the live view's latest scrcpy frame) as a PNG at its own size."""
    bitmap = await js.createImageBitmap(source)
    try:
        canvas, context = _canvas(bitmap.width, bitmap.height, "low")
        context.drawImage(bitmap, 0, 0)
    finally:
        bitmap.close()
    return await _encode(canvas, "image/png", 1.0)


class CanvasImageCodec:
    """``ImageCodec`` over createImageBitmap and OffscreenCanvas."""

    def __init__(self) -> None:
        # The last image ``scale`` made and the canvas it was drawn on: the agent decodes that image
        # again at once for its screen-change thumbnail, and drawing from the canvas saves a decode.
        self._last: tuple[bytes, Any] | None = None

    async def decode(self, image: bytes, width: int, height: int) -> RgbaImage:
        last = self._last
        if last is not None and image is last[0]:
            _node, context = _canvas(width, height, "high")
            context.drawImage(last[1], 0, 0, width, height)
            return RgbaImage(width, height, context.getImageData(0, 0, width, height).data.to_bytes())
        bitmap = await _bitmap(image)
        try:
            # Rows must stay rows when only the width changes (see the module's docstring): "low" is
            # plain bilinear; "high" may use mipmaps, which blend neighbouring rows.
            quality = "low" if height == bitmap.height else "high"
            _canvas_node, context = _canvas(width, height, quality)
            context.drawImage(bitmap, 0, 0, width, height)
        finally:
            bitmap.close()
        pixels = context.getImageData(0, 0, width, height).data
        return RgbaImage(width, height, pixels.to_bytes())

    async def scale(self, png: bytes, width: int, height: int, mime: str, quality: float) -> bytes:
        bitmap = await _bitmap(png)
        try:
            canvas, context = _canvas(width, height, "high")
            context.drawImage(bitmap, 0, 0, width, height)
        finally:
            bitmap.close()
        encoded = await _encode(canvas, mime, quality)
        self._last = (encoded, canvas)
        return encoded

    async def stitch(self, crops: Sequence[Crop], width: int, mime: str, quality: float) -> bytes:
        bitmaps: dict[int, Any] = {}  # by id of the PNG: a frame cut into several crops is decoded once
        try:
            placed: list[tuple[Any, Crop, int]] = []
            for crop in crops:
                bitmap = bitmaps.get(id(crop.png))
                if bitmap is None:
                    bitmap = bitmaps[id(crop.png)] = await _bitmap(crop.png)
                rows = crop.bottom - crop.top
                placed.append((bitmap, crop, max(1, round(rows * width / bitmap.width))))
            total = max(1, sum(height for _, _, height in placed))
            canvas, context = _canvas(width, total, "high")
            y = 0
            for bitmap, crop, height in placed:
                context.drawImage(
                    bitmap, 0, crop.top, bitmap.width, crop.bottom - crop.top, 0, y, width, height
                )
                y += height
        finally:
            for bitmap in bitmaps.values():
                bitmap.close()
        return await _encode(canvas, mime, quality)
