"""The codec string WebCodecs wants, from an SPS laid out by hand (profile, constraints, level)."""

from __future__ import annotations

import pytest

from phone_agent.scrcpy.h264 import avc_codec_string, has_idr, nal_units

SPS_BASELINE_31 = b"\x67\x42\xc0\x1f\xda\x01\x40"  # constrained baseline (0x42, 0xc0), level 3.1
PPS = b"\x68\xce\x3c\x80"


def test_codec_string_from_the_sps_of_a_config_packet():
    assert (
        avc_codec_string(b"\x00\x00\x00\x01" + SPS_BASELINE_31 + b"\x00\x00\x00\x01" + PPS) == "avc1.42C01F"
    )
    assert avc_codec_string(b"\x00\x00\x01" + PPS + b"\x00\x00\x01\x67\x64\x00\x28") == "avc1.640028"


def test_no_sps_is_an_error():
    with pytest.raises(ValueError, match="sequence parameter set"):
        avc_codec_string(b"\x00\x00\x00\x01" + PPS)


def test_nal_units_split_on_three_and_four_byte_start_codes():
    data = b"\x00\x00\x00\x01\x67\x42" + b"\x00\x00\x01\x68\xce" + b"\x00\x00\x00\x01\x65\x88"
    assert nal_units(data) == [b"\x67\x42", b"\x68\xce", b"\x65\x88"]
    assert has_idr(data) and not has_idr(b"\x00\x00\x00\x01\x41\x9a")
