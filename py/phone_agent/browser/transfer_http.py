"""The page's end of a streamed transfer (``server.transfers``): chunks over HTTP on the relay's origin.

A relay call frame that names a transfer (``relay.frames.TransferRef``) gets one of these as its
``CallEnv.transfer`` (``tools.transfer``): ``HttpSink`` posts each chunk of a download as ADB sync reads
it, ``HttpSource`` fetches each next chunk of an upload as ADB sync pushes it. One chunk is in the
page's hands at a time; each request is bounded in time, and a transfer the server broke off (410: the
caller went away, or the call ended) fails the call as ``transfer_broken``.
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlsplit

import js  # type: ignore[import-not-found]
from pyodide.ffi import to_js  # type: ignore[import-not-found]

from ..errors import transfer_broken
from ..relay.frames import TransferRef
from ..tools.transfer import DOWNLOAD, UPLOAD

REQUEST_S = 90.0  # the server waits ≤ 60 s for the other side before it answers


def http_origin(relay_url: str) -> str:
    """The HTTP origin of a relay URL (``ws://127.0.0.1:7788/relay`` → ``http://127.0.0.1:7788``)."""
    parts = urlsplit(relay_url)
    return f"{'https' if parts.scheme == 'wss' else 'http'}://{parts.netloc}"


class _HttpEnd:
    def __init__(self, tool: str, origin: str, ref: TransferRef) -> None:
        self.tool = tool
        self.url = origin + ref.path
        self.size = ref.size or 0

    async def _fetch(self, method: str, body: Any = None) -> Any:
        options: dict[str, Any] = {"method": method, "cache": "no-store"}
        if body is not None:
            options["body"] = body
        try:
            async with asyncio.timeout(REQUEST_S):
                response = await js.fetch(self.url, to_js(options, dict_converter=js.Object.fromEntries))
        except TimeoutError:
            raise transfer_broken(self.tool, f"the server did not answer within {REQUEST_S:g} s") from None
        except Exception as exc:  # a network error: the server went away
            raise transfer_broken(self.tool, f"the server cannot be reached ({exc})") from None
        if response.status >= 400:
            try:
                text = str(await response.text())[:300]
            except Exception:
                text = ""
            raise transfer_broken(self.tool, f"the server answered {response.status} {text}".strip())
        return response


class HttpSink(_HttpEnd):
    """A download's chunks, posted one at a time (the server answers when it has room)."""

    direction = DOWNLOAD

    async def write(self, data: bytes) -> None:
        body = js.Uint8Array.new(len(data))
        body.assign(data)
        await self._fetch("POST", body)


class HttpSource(_HttpEnd):
    """An upload's chunks, fetched one at a time; None once the server says they are all sent (204)."""

    direction = UPLOAD

    async def read(self) -> bytes | None:
        response = await self._fetch("GET")
        if response.status == 204:
            return None
        buffer = await response.arrayBuffer()
        return js.Uint8Array.new(buffer).to_bytes()


def transfer_end(tool: str, relay_url: str, ref: TransferRef | None) -> HttpSink | HttpSource | None:
    """The handler's end of the call's transfer (None for a call without one)."""
    if ref is None:
        return None
    origin = http_origin(relay_url)
    return HttpSink(tool, origin, ref) if ref.direction == DOWNLOAD else HttpSource(tool, origin, ref)
