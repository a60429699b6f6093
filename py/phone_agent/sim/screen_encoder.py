"""The simulated phone's screen as H.264 (PyAV's libx264: constrained baseline, zero-latency tuning,
one packet out per frame in), split the way Android's MediaCodec hands packets to scrcpy: the
SPS and PPS in a config packet of their own, then the frames. Synchronous; runs in a worker thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import av
from PIL import Image

from phone_agent.scrcpy.h264 import NAL_PPS, NAL_SPS, nal_units

START = b"\x00\x00\x00\x01"


@dataclass(frozen=True, slots=True)
class EncodedPacket:
    data: bytes
    config: bool
    key_frame: bool


class ScreenEncoder:
    """Images in (any size; scaled to the video size), Annex B packets out."""

    def __init__(self, width: int, height: int, fps: int, bit_rate: int = 4_000_000) -> None:
        self.width, self.height = width, height
        codec = av.CodecContext.create("libx264", "w")
        codec.width, codec.height = width, height
        codec.pix_fmt = "yuv420p"
        codec.time_base = Fraction(1, 1_000_000)
        codec.framerate = Fraction(max(fps, 1), 1)
        codec.bit_rate = bit_rate
        # A key frame every 10 s at most (scrcpy's i-frame interval); baseline: no B-frames to reorder.
        codec.options = {
            "preset": "ultrafast",
            "tune": "zerolatency",
            "profile": "baseline",
            "g": str(max(fps, 1) * 10),
        }
        codec.open()
        self._codec = codec
        self._config: bytes | None = None
        self.closed = False

    def encode(self, image: Image.Image, pts_us: int) -> list[EncodedPacket]:
        # Scaling is most of the cost: an integer box reduction in PIL first (1080×2400 → 540×1200,
        # a few ms), then swscale to the video size and YUV in one step (PIL's resize of the whole
        # screen took ~45 ms a frame here, swscale from the full image ~15 ms).
        factor = max(1, min(image.width // self.width, image.height // self.height))
        if factor > 1:
            image = image.reduce(factor)
        if image.mode != "RGB":
            image = image.convert("RGB")
        frame = av.VideoFrame.from_image(image).reformat(
            self.width, self.height, "yuv420p", interpolation="BILINEAR"
        )
        frame.pts = pts_us
        out: list[EncodedPacket] = []
        for packet in self._codec.encode(frame):
            out += self._split(bytes(packet), packet.is_keyframe)
        return out

    def _split(self, data: bytes, key_frame: bool) -> list[EncodedPacket]:
        """A key frame from x264 carries SPS and PPS in band; MediaCodec gives them apart, once."""
        if not key_frame:
            return [EncodedPacket(data, False, False)]
        units = nal_units(data)
        params = [u for u in units if u and u[0] & 0x1F in (NAL_SPS, NAL_PPS)]
        rest = [u for u in units if u and u[0] & 0x1F not in (NAL_SPS, NAL_PPS)]
        out = []
        config = b"".join(START + u for u in params)
        if config and config != self._config:
            self._config = config
            out.append(EncodedPacket(config, True, False))
        out.append(EncodedPacket(b"".join(START + u for u in rest), False, True))
        return out

    def close(self) -> None:
        self.closed = True
        self._codec = None  # type: ignore[assignment]  # PyAV frees the encoder with its last reference
