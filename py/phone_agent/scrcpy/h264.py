"""What WebCodecs needs to know of an H.264 stream: the ``avc1.PPCCLL`` codec string from the
sequence parameter set (profile_idc, the constraint-flags byte, level_idc, in hex), found in an
Annex B config packet (start codes ``00 00 01`` / ``00 00 00 01`` before each NAL unit).
"""

from __future__ import annotations

NAL_SPS = 7
NAL_PPS = 8
NAL_IDR = 5


def nal_units(data: bytes) -> list[bytes]:
    """The NAL units of an Annex B byte string (start codes removed)."""
    units: list[bytes] = []
    starts: list[tuple[int, int]] = []  # (start code offset, payload offset)
    i = data.find(b"\x00\x00\x01")
    while i >= 0:
        begin = i - 1 if i > 0 and data[i - 1] == 0 else i
        starts.append((begin, i + 3))
        i = data.find(b"\x00\x00\x01", i + 3)
    for index, (_, payload) in enumerate(starts):
        end = starts[index + 1][0] if index + 1 < len(starts) else len(data)
        if payload < end:
            units.append(data[payload:end])
    return units


def _unescape(nal: bytes) -> bytes:
    """Drop emulation-prevention bytes (``00 00 03`` → ``00 00``)."""
    return nal.replace(b"\x00\x00\x03", b"\x00\x00")


def avc_codec_string(config: bytes) -> str:
    """``avc1.PPCCLL`` from the first SPS in ``config``; ValueError when it has none."""
    for nal in nal_units(config):
        if nal and nal[0] & 0x1F == NAL_SPS:
            sps = _unescape(nal[:8])
            if len(sps) < 4:
                break
            return f"avc1.{sps[1]:02X}{sps[2]:02X}{sps[3]:02X}"
    raise ValueError("no H.264 sequence parameter set in the config packet")


def has_idr(data: bytes) -> bool:
    """True when the access unit holds an IDR slice (a key frame a decoder can start from)."""
    return any(nal and nal[0] & 0x1F == NAL_IDR for nal in nal_units(data))
