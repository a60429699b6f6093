"""The tests' ``ImageCodec``: Pillow in place of the page's OffscreenCanvas."""

from __future__ import annotations

import io
from collections.abc import Sequence

from PIL import Image

from phone_agent.agent.ports import Crop, RgbaImage


def _encode(image: Image.Image, mime: str, quality: float) -> bytes:
    out = io.BytesIO()
    if mime == "image/jpeg":
        image.convert("RGB").save(out, "JPEG", quality=round(quality * 100))
    else:
        image.save(out, "PNG", compress_level=1)
    return out.getvalue()


class PillowCodec:
    def __init__(self) -> None:
        self.calls: list[str] = []

    @staticmethod
    def _open(png: bytes) -> Image.Image:
        return Image.open(io.BytesIO(png)).convert("RGBA")

    async def decode(self, data: bytes, width: int, height: int) -> RgbaImage:
        self.calls.append("decode")
        image = self._open(data)
        if image.size != (width, height):
            image = image.resize((width, height), Image.Resampling.BILINEAR)
        return RgbaImage(width, height, image.tobytes())

    async def scale(self, png: bytes, width: int, height: int, mime: str, quality: float) -> bytes:
        self.calls.append("scale")
        image = self._open(png)
        if image.size != (width, height):
            image = image.resize((width, height), Image.Resampling.BILINEAR)
        return _encode(image, mime, quality)

    async def stitch(self, crops: Sequence[Crop], width: int, mime: str, quality: float) -> bytes:
        self.calls.append("stitch")
        decoded: dict[int, Image.Image] = {}
        parts = []
        for crop in crops:
            image = decoded.get(id(crop.png))
            if image is None:
                image = decoded[id(crop.png)] = self._open(crop.png)
            part = image.crop((0, crop.top, image.width, crop.bottom))
            height = max(1, round(part.height * width / image.width))
            parts.append(
                part.resize((width, height), Image.Resampling.BILINEAR) if width != image.width else part
            )
        total = sum(part.height for part in parts)
        canvas = Image.new("RGBA", (width, total))
        y = 0
        for part in parts:
            canvas.paste(part, (0, y))
            y += part.height
        return _encode(canvas, mime, quality)
