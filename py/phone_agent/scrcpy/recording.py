"""A recording of scrcpy's H.264 stream as MP4 samples, without re-encoding: the access units the phone
sent, turned from Annex B (start codes) into the length-prefixed form MP4 keeps, with the
``avcC`` decoder configuration built from the stream's SPS and PPS. The page hands the samples to an
MP4 muxer (``browser/scrcpy_record.py``); this module is pure.

A recording must begin on a key frame, and scrcpy sends one only every few seconds: the buffer always
keeps the current group of pictures (the last key frame and the frames after it), and a recording starts
with it — up to one key-frame interval before the call.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from .h264 import NAL_PPS, NAL_SPS, avc_codec_string, nal_units
from .protocol import VideoPacket

NAL_AUD = 9
MAX_SAMPLES = 60 * 60 * 3  # three minutes at 60 fps


@dataclass(frozen=True)
class Sample:
    data: bytes  # length-prefixed NAL units
    key: bool
    pts_us: int


@dataclass
class Mp4Track:
    """What an MP4 muxer needs: the codec string, the size, avcC and the samples with their times."""

    codec: str
    width: int
    height: int
    avcc: bytes
    samples: list[tuple[bytes, bool, int, int]]  # data, key frame, timestamp and duration (µs, from 0)


def to_length_prefixed(data: bytes) -> tuple[bytes, bytes | None, bytes | None]:
    """An Annex B access unit as MP4 keeps it (4-byte lengths; SPS, PPS and delimiters left out, they
    go in avcC), and the SPS and PPS it carried."""
    out, sps, pps = bytearray(), None, None
    for nal in nal_units(data):
        kind = nal[0] & 0x1F if nal else 0
        if kind == NAL_SPS:
            sps = sps or nal
        elif kind == NAL_PPS:
            pps = pps or nal
        elif kind != NAL_AUD and nal:
            out += struct.pack(">I", len(nal)) + nal
    return bytes(out), sps, pps


def avcc_record(sps: bytes, pps: bytes) -> bytes:
    """The AVCDecoderConfigurationRecord of one SPS and one PPS (4-byte NAL lengths)."""
    return (
        bytes([1, sps[1], sps[2], sps[3], 0xFF, 0xE1])
        + struct.pack(">H", len(sps))
        + sps
        + b"\x01"
        + struct.pack(">H", len(pps))
        + pps
    )


@dataclass
class StreamRecorder:
    """Fed every packet of the live stream; records between ``start`` and ``finish``."""

    recording: bool = False
    max_us: int = 0
    _gop: list[Sample] = field(default_factory=list)
    _samples: list[Sample] = field(default_factory=list)
    _config: tuple[str, bytes] | None = None  # codec string, avcC of the current stream
    _size: tuple[int, int] = (0, 0)

    def feed(self, packet: VideoPacket, size: tuple[int, int]) -> None:
        if packet.config or packet.pts_us is None:
            return
        data, sps, pps = to_length_prefixed(packet.data)
        if sps is not None and pps is not None:
            self._config = (avc_codec_string(packet.data), avcc_record(sps, pps))
            self._size = size
        if not data:
            return
        sample = Sample(data, packet.key_frame, packet.pts_us)
        if packet.key_frame:
            self._gop = []
        if self._gop or packet.key_frame:
            self._gop.append(sample)
        if self.recording:
            if not self._samples and packet.key_frame:
                self._samples.append(sample)
            elif self._samples and sample.pts_us - self._samples[0].pts_us <= self.max_us:
                if len(self._samples) < MAX_SAMPLES:
                    self._samples.append(sample)

    def start(self, max_seconds: int) -> None:
        self.recording = True
        self.max_us = max_seconds * 1_000_000
        self._samples = list(self._gop)

    def finish(self) -> Mp4Track:
        """The recorded track (ValueError when no key frame came); recording stops."""
        self.recording = False
        samples, self._samples = self._samples, []
        if not samples or self._config is None:
            raise ValueError("the stream sent no key frame since the recording started")
        first = samples[0].pts_us
        timed = []
        for index, sample in enumerate(samples):
            following = samples[index + 1].pts_us if index + 1 < len(samples) else None
            end = following if following is not None else sample.pts_us + 100_000  # the last: 0.1 s
            timed.append((sample.data, sample.key, sample.pts_us - first, max(1, end - sample.pts_us)))
        codec, avcc = self._config
        return Mp4Track(codec, self._size[0], self._size[1], avcc, timed)
