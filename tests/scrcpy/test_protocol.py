"""scrcpy 2.5's server command line and video stream, against bytes laid out by hand from the format
(doc/develop.md, DesktopConnection and Streamer of the 2.5 server)."""

from __future__ import annotations

import pytest

from phone_agent.scrcpy.protocol import (
    CODEC_H264,
    CodecMeta,
    ConfigMerger,
    DeviceMeta,
    ScrcpyProtocolError,
    ScrcpyServerOptions,
    StreamDisabled,
    VideoPacket,
    VideoStreamParser,
    encode_codec_meta,
    encode_device_meta,
    encode_packet,
    parse_server_arguments,
    server_command,
    version_mismatch,
    video_size,
)

# A forward-tunnel video socket, byte by byte: dummy byte, name, codec meta, a config packet, a key frame.
NAME = b"Pixel 7".ljust(64, b"\0")
META = b"h264" + (576).to_bytes(4, "big") + (1024).to_bytes(4, "big")
CONFIG = b"\x00\x00\x00\x01\x67\x42\xc0\x1f" + b"\x00\x00\x00\x01\x68\xce"
CONFIG_HEADER = bytes([0x80, 0, 0, 0, 0, 0, 0, 0]) + len(CONFIG).to_bytes(4, "big")
FRAME = b"\x00\x00\x00\x01\x65\x88\x84" + bytes(100)
FRAME_HEADER = bytes([0x40, 0, 0, 0, 0, 0x01, 0xE2, 0x40]) + len(FRAME).to_bytes(4, "big")  # key, pts 123456
DELTA = b"\x00\x00\x00\x01\x41\x9a"
DELTA_HEADER = (156789).to_bytes(8, "big") + len(DELTA).to_bytes(4, "big")
STREAM = b"\0" + NAME + META + CONFIG_HEADER + CONFIG + FRAME_HEADER + FRAME + DELTA_HEADER + DELTA

EXPECTED = [
    DeviceMeta("Pixel 7"),
    CodecMeta(CODEC_H264, 576, 1024),
    VideoPacket(CONFIG, None, True, False),
    VideoPacket(FRAME, 123456, False, True),
    VideoPacket(DELTA, 156789, False, False),
]


def test_the_command_line_asks_for_forward_tunnel_video_control_h264_and_no_audio():
    command = server_command(ScrcpyServerOptions(max_size=1024, max_fps=30))
    assert command.startswith(
        "CLASSPATH=/data/local/tmp/scrcpy-server.jar app_process / com.genymobile.scrcpy.Server 2.5 "
    )
    args = command.split()[4:]
    for pair in (
        "video=true",
        "audio=false",
        "control=true",
        "tunnel_forward=true",
        "max_size=1024",
        "max_fps=30",
        "video_codec=h264",
    ):
        assert pair in args
    parsed = parse_server_arguments(args)
    assert (parsed.tunnel_forward, parsed.audio, parsed.control, parsed.max_size, parsed.max_fps) == (
        True,
        False,
        True,
        1024,
        30,
    )
    assert parsed.socket_name == "scrcpy"


def test_the_server_refuses_another_version_with_its_message():
    with pytest.raises(ValueError, match=r"^The server version \(2\.5\) does not match the client \(2\.4\)$"):
        parse_server_arguments(["2.4", "video=true"])
    assert version_mismatch("1.24") == "The server version (2.5) does not match the client (1.24)"
    with pytest.raises(ValueError, match="Invalid key=value pair"):
        parse_server_arguments(["2.5", "video"])


def test_max_size_is_rounded_down_to_a_multiple_of_8_and_an_scid_names_the_socket():
    parsed = parse_server_arguments(["2.5", "max_size=1023", "scid=0000abcd", "raw_stream=true"])
    assert parsed.max_size == 1016
    assert parsed.socket_name == "scrcpy_0000abcd"
    assert not (parsed.send_dummy_byte or parsed.send_device_meta or parsed.send_frame_meta)
    assert ScrcpyServerOptions(scid=0xABCD).socket_name == "scrcpy_0000abcd"


@pytest.mark.parametrize(
    ("screen", "max_size", "video"),
    [
        ((1080, 2400), 1024, (464, 1024)),
        ((1080, 2400), 0, (1080, 2400)),
        ((2400, 1080), 1024, (1024, 464)),
        ((720, 1280), 1920, (720, 1280)),
        ((1080, 2340), 800, (368, 800)),
    ],
)
def test_video_size_caps_the_long_side_and_keeps_multiples_of_8(screen, max_size, video):
    assert video_size(*screen, max_size) == video


def test_the_whole_stream_parses_in_one_piece():
    assert VideoStreamParser().receive_data(STREAM) == EXPECTED


def test_any_split_of_the_stream_gives_the_same_events():
    for step in (1, 2, 3, 7, 12, 13, 64, 65):
        parser = VideoStreamParser()
        events = []
        for at in range(0, len(STREAM), step):
            events += parser.receive_data(STREAM[at : at + step])
        assert events == EXPECTED, step
        assert parser.buffered == 0


def test_the_device_side_encoders_lay_out_the_same_bytes():
    device = (
        b"\0"
        + encode_device_meta("Pixel 7")
        + encode_codec_meta(CODEC_H264, 576, 1024)
        + encode_packet(CONFIG, 0, config=True)
        + encode_packet(FRAME, 123456, key_frame=True)
        + encode_packet(DELTA, 156789)
    )
    assert device == STREAM


def test_a_long_device_name_is_cut_at_a_character_boundary():
    meta = encode_device_meta("é" * 40)
    assert len(meta) == 64 and meta[62:] == b"\0\0"
    assert VideoStreamParser(dummy_byte=False).receive_data(meta)[0] == DeviceMeta("é" * 31)


def test_a_disabled_stream_and_a_configuration_error_are_events():
    assert VideoStreamParser().receive_data(b"\0" + NAME + bytes(4)) == [
        DeviceMeta("Pixel 7"),
        StreamDisabled(False),
    ]
    assert VideoStreamParser().receive_data(b"\0" + NAME + b"\0\0\0\1") == [
        DeviceMeta("Pixel 7"),
        StreamDisabled(True),
    ]


def test_garbage_is_refused():
    with pytest.raises(ScrcpyProtocolError, match="dummy byte"):
        VideoStreamParser().receive_data(b"\x07")
    with pytest.raises(ScrcpyProtocolError, match="codec id"):
        VideoStreamParser().receive_data(b"\0" + NAME + b"vp08" + bytes(8))
    with pytest.raises(ScrcpyProtocolError, match="limit"):
        VideoStreamParser(max_packet=1000).receive_data(
            b"\0" + NAME + META + bytes(8) + (1001).to_bytes(4, "big")
        )


def test_a_stream_cut_short_says_inside_what():
    parser = VideoStreamParser()
    parser.receive_data(b"\0" + NAME + META)
    assert parser.cut_short() is None  # between packets: a clean end
    frame = encode_packet(b"\x00\x00\x00\x01\x65" + bytes(95), 1000, key_frame=True)
    parser.receive_data(frame[:5])
    assert parser.cut_short() == "a header (5 bytes of it came)"
    parser.receive_data(frame[5:40])
    assert parser.cut_short() == "a packet (28 of its 100 bytes came)"
    assert len(parser.receive_data(frame[40:])) == 1 and parser.cut_short() is None


def test_the_config_packet_goes_in_front_of_the_next_frame_only():
    merger = ConfigMerger()
    assert merger.push(EXPECTED[2]) is None
    assert merger.push(EXPECTED[3]) == VideoPacket(CONFIG + FRAME, 123456, False, True)
    assert merger.push(EXPECTED[4]) == EXPECTED[4]
    assert merger.config == CONFIG
