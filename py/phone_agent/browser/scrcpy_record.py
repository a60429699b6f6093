"""The page's screen recording while the live view runs scrcpy: the stream's own H.264 access units
(``scrcpy/recording.py`` keeps them and builds avcC) muxed into an MP4 by mp4-muxer, vendored from npm
into ``static/vendor/mp4-muxer/`` — no re-encoding, no phone-side screenrecord. ``ScrcpyDevice`` uses it
for start_recording / stop_recording while the stream runs.
"""

from __future__ import annotations

from typing import Any

import js  # type: ignore[import-not-found]
from pyodide.code import run_js  # type: ignore[import-not-found]
from pyodide.ffi import to_js  # type: ignore[import-not-found]

from ..errors import DeviceError
from ..scrcpy.protocol import VideoPacket
from ..scrcpy.recording import StreamRecorder

MUXER_MODULE = "static/vendor/mp4-muxer/mp4-muxer.mjs"

_MUX = """
async (url, chunks, width, height, codec, description) => {
  const { Muxer, ArrayBufferTarget } = await import(url);
  const muxer = new Muxer({
    target: new ArrayBufferTarget(),
    video: { codec: "avc", width, height },
    fastStart: "in-memory",
    firstTimestampBehavior: "offset",
  });
  const meta = { decoderConfig: { codec, codedWidth: width, codedHeight: height, description } };
  chunks.forEach((chunk, index) => {
    const type = chunk.key ? "key" : "delta";
    muxer.addVideoChunkRaw(chunk.data, type, chunk.ts, chunk.dur, index === 0 ? meta : undefined);
  });
  muxer.finalize();
  return new Uint8Array(muxer.target.buffer);
}
"""


class PageStreamRecording:
    """The live view's recorder: fed every packet, it records between start and stop."""

    def __init__(self) -> None:
        self.buffer = StreamRecorder()
        self._mux: Any = None

    @property
    def recording(self) -> bool:
        return self.buffer.recording

    def feed(self, packet: VideoPacket, size: tuple[int, int]) -> None:
        self.buffer.feed(packet, size)

    def start(self, max_seconds: int) -> None:
        self.buffer.start(max_seconds)

    async def stop(self) -> bytes:
        try:
            track = self.buffer.finish()
        except ValueError as exc:
            raise DeviceError(f"nothing was recorded: {exc}", retryable=False) from None
        if self._mux is None:
            self._mux = run_js(_MUX)
        chunks = js.Array.new()
        for data, key, ts, duration in track.samples:
            chunk = js.Object.new()
            chunk.data, chunk.key, chunk.ts, chunk.dur = to_js(data), key, ts, duration
            chunks.push(chunk)
        url = str(js.URL.new(MUXER_MODULE, js.document.baseURI).href)
        out = await self._mux(url, chunks, track.width, track.height, track.codec, to_js(track.avcc))
        return bytes(out.to_bytes())
