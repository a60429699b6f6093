"""The screenshot step: an image answered while a plain field shows a secret typed into it has that
field's box blacked out (the page knows its bounds from the UI tree), and the answer says so. Where it
cannot be blacked out (no image codec, not a PNG, the tree unreadable), the image is withheld, said."""

from __future__ import annotations

import base64
from typing import Any

from ...device.interface import Bounds, UiNode, read_ui_tree
from ...device.png import encode_png
from ..screen_source import png_size
from ..session import Pixels
from .call import Call, Next, Result
from .host import PipelineHost

BLACKED = "A field showing a secret ({names}) is blacked out in this image."
WITHHELD = "The image is withheld: a field on the screen shows a secret ({names}) and {why}."


def black_out(pixels: Pixels, boxes: list[Bounds], screen: tuple[int, int]) -> bytes:
    """The pixels with every box (device pixels on a ``screen``-sized screen) black, as a PNG."""
    width, height = pixels.width, pixels.height
    data = bytearray(pixels.data)
    sx, sy = width / max(1, screen[0]), height / max(1, screen[1])
    for box in boxes:
        left, right = max(0, int(box.left * sx)), min(width, int(box.right * sx + 1))
        top, bottom = max(0, int(box.top * sy)), min(height, int(box.bottom * sy + 1))
        if right <= left:
            continue
        black = b"\x00\x00\x00\xff" * (right - left)
        for y in range(top, bottom):
            data[(y * width + left) * 4 : (y * width + right) * 4] = black
    return encode_png(width, height, bytes(data))


class ScreenshotSecrets:
    def __init__(self, host: PipelineHost) -> None:
        self.host = host

    async def __call__(self, call: Call, call_next: Next) -> Result:
        result = await call_next(call)
        book, device = self.host.secrets, self.host.device
        content = result.get("content", [])
        images = [i for i, item in enumerate(content) if item.get("type") == "image"]
        if not images or book is None or not book.has_fields() or device is None:
            return result
        try:
            nodes: list[UiNode] | None = (await read_ui_tree(device)).nodes
        except Exception:  # the tree cannot say where the field is: withhold rather than show it
            nodes = None
        shown = book.fields_shown(nodes) if nodes is not None else None
        if shown == []:
            return result
        return await self._answer(result, images, shown, nodes or [])

    async def _answer(
        self, result: Result, images: list[int], shown: list[tuple[str, Bounds]] | None, nodes: list[UiNode]
    ) -> Result:
        names = ", ".join(sorted({name for name, _ in shown or []})) or "a secret typed"
        content: list[dict[str, Any]] = list(result["content"])
        codec = self.host.image_codec
        why = "this page cannot black it out"
        if shown is None:
            why = "the screen's tree could not be read to find it"
        screen = (
            max((n.bounds.right for n in nodes), default=0),
            max((n.bounds.bottom for n in nodes), default=0),
        )
        for index in images:
            item = content[index]
            png = base64.b64decode(item["data"])
            if shown is not None and codec is not None and item.get("mimeType") == "image/png":
                width, height = png_size(png)
                pixels = await codec.decode(png, width, height)
                blacked = black_out(pixels, [box for _, box in shown], screen)
                content[index] = {**item, "data": base64.b64encode(blacked).decode("ascii")}
                note = BLACKED.format(names=names)
            else:
                content[index] = {"type": "text", "text": WITHHELD.format(names=names, why=why)}
                note = ""
            if note:
                content.append({"type": "text", "text": note})
        return {**result, "content": content}
