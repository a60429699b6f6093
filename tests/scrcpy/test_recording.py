"""The recording buffer of scrcpy's stream: Annex B access units become MP4's length-prefixed samples
with avcC from the SPS and PPS, and a recording starts on the current group of pictures."""

from __future__ import annotations

import pytest

from phone_agent.scrcpy.protocol import VideoPacket
from phone_agent.scrcpy.recording import StreamRecorder, avcc_record, to_length_prefixed

SPS = bytes([0x67, 0x42, 0xC0, 0x1F, 0xDA, 0x01])
PPS = bytes([0x68, 0xCE, 0x3C, 0x80])
IDR = bytes([0x65, 0x88, 0x84, 0x00])
SLICE = bytes([0x41, 0x9A, 0x02])


def annex_b(*units: bytes) -> bytes:
    return b"".join(b"\x00\x00\x00\x01" + unit for unit in units)


def test_an_access_unit_becomes_length_prefixed_without_its_parameter_sets():
    data, sps, pps = to_length_prefixed(annex_b(bytes([0x09, 0xF0]), SPS, PPS, IDR))
    assert (sps, pps) == (SPS, PPS)
    assert data == len(IDR).to_bytes(4, "big") + IDR
    record = avcc_record(SPS, PPS)
    assert record[:4] == bytes([1, 0x42, 0xC0, 0x1F]) and record.endswith(PPS)


def test_a_recording_starts_on_the_current_key_frame_and_keeps_its_times():
    recorder = StreamRecorder()
    feed = [
        VideoPacket(annex_b(SPS, PPS, IDR), 1_000_000, False, True),
        VideoPacket(annex_b(SLICE), 1_100_000, False, False),
    ]
    for packet in feed:
        recorder.feed(packet, (464, 1024))
    recorder.start(10)
    recorder.feed(VideoPacket(annex_b(SLICE), 1_250_000, False, False), (464, 1024))
    track = recorder.finish()
    assert (track.codec, track.width, track.height) == ("avc1.42C01F", 464, 1024)
    assert [(key, ts, duration) for _data, key, ts, duration in track.samples] == [
        (True, 0, 100_000),
        (False, 100_000, 150_000),
        (False, 250_000, 100_000),
    ]
    assert recorder.recording is False
    with pytest.raises(ValueError):
        StreamRecorder().finish()
