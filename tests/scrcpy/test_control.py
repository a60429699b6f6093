"""scrcpy 2.5's control messages, against bytes laid out by hand from ControlMessageReader's format
(big-endian, type byte first), and the device-side decoder against the encoders."""

from __future__ import annotations

import pytest

from phone_agent.scrcpy import control
from phone_agent.scrcpy.control import (
    ControlMessage,
    ControlMessageDecoder,
    ControlProtocolError,
    DeviceMessage,
    DeviceMessageDecoder,
)


def test_inject_keycode_is_14_bytes():
    assert control.inject_keycode(control.KEY_UP, 66, 5, 0x41) == bytes(
        [0, 1, 0, 0, 0, 66, 0, 0, 0, 5, 0, 0, 0, 0x41]
    )


def test_inject_text_is_length_prefixed_utf8_cut_at_300_bytes():
    assert control.inject_text("hé") == b"\x01\x00\x00\x00\x03h\xc3\xa9"
    long = control.inject_text("é" * 200)
    assert int.from_bytes(long[1:5], "big") == 300 and len(long) == 305


def test_inject_touch_is_32_bytes_with_the_screen_size_and_fixed_point_pressure():
    message = control.inject_touch(control.MOTION_DOWN, 100, 200, 576, 1024)
    assert message == (
        b"\x02\x00"
        + b"\xff" * 7
        + b"\xfe"
        + (100).to_bytes(4, "big")
        + (200).to_bytes(4, "big")
        + (576).to_bytes(2, "big")
        + (1024).to_bytes(2, "big")
        + b"\xff\xff"
        + bytes(8)
    )
    half = control.inject_touch(
        control.MOTION_UP,
        1,
        2,
        3,
        4,
        pointer_id=control.POINTER_ID_MOUSE,
        pressure=0.5,
        action_button=1,
        buttons=1,
    )
    assert (
        half[1:10] == b"\x01" + b"\xff" * 8
        and half[22:24] == b"\x80\x00"
        and half[24:] == bytes([0, 0, 0, 1] * 2)
    )


def test_inject_scroll_is_21_bytes():
    message = control.inject_scroll(10, 20, 576, 1024, 0.0, -1.0)
    assert message == (
        b"\x03"
        + (10).to_bytes(4, "big")
        + (20).to_bytes(4, "big")
        + b"\x02\x40\x04\x00"
        + b"\x00\x00\x80\x00"
        + bytes(4)
    )


def test_set_clipboard_with_paste_and_sequence():
    assert control.set_clipboard("你好", paste=True, sequence=7) == (
        b"\x09" + (7).to_bytes(8, "big") + b"\x01" + (6).to_bytes(4, "big") + "你好".encode()
    )


def test_small_messages():
    assert control.back_or_screen_on(0) == b"\x04\x00"
    assert control.get_clipboard(1) == b"\x08\x01"
    assert control.set_screen_power_mode(2) == b"\x0a\x02"
    assert control.empty_message(control.EXPAND_NOTIFICATION_PANEL) == b"\x05"
    with pytest.raises(ValueError):
        control.empty_message(control.INJECT_TEXT)
    assert control.key_press(4) == control.inject_keycode(0, 4) + control.inject_keycode(1, 4)


ALL = [
    control.inject_keycode(0, 3, 1, 2),
    control.inject_text("héllo"),
    control.inject_touch(2, -5, 7, 100, 200, pressure=0.25),
    control.inject_scroll(1, 2, 3, 4, 1.0, -0.5, 0),
    control.back_or_screen_on(1),
    control.empty_message(control.COLLAPSE_PANELS),
    control.get_clipboard(2),
    control.set_clipboard("x y", paste=True, sequence=99),
    control.set_screen_power_mode(0),
    bytes([control.UHID_INPUT, 0, 1, 0, 2, 9, 9]),
]


def test_the_decoder_reads_every_message_whatever_the_split():
    stream = b"".join(ALL)
    whole = ControlMessageDecoder().receive_data(stream)
    assert [m.type for m in whole] == [0, 1, 2, 3, 4, 7, 8, 9, 10, 13]
    assert whole[0] == ControlMessage(0, action=0, keycode=3, repeat=1, meta_state=2)
    assert whole[1].text == "héllo"
    touch = whole[2]
    assert (
        touch.action,
        touch.x,
        touch.y,
        touch.screen_width,
        touch.screen_height,
        touch.pressure,
        touch.pointer_id,
    ) == (2, -5, 7, 100, 200, 0.25, control.POINTER_ID_GENERIC_FINGER)
    assert (whole[3].hscroll, whole[3].vscroll) == (1.0, -0.5)
    assert (whole[7].text, whole[7].paste, whole[7].sequence) == ("x y", True, 99)
    assert (whole[9].id, whole[9].data) == (1, b"\x09\x09")
    for step in (1, 3, 5):
        decoder = ControlMessageDecoder()
        parts = []
        for at in range(0, len(stream), step):
            parts += decoder.receive_data(stream[at : at + step])
        assert parts == whole and decoder.buffered == 0


def test_an_unknown_type_is_an_error():
    with pytest.raises(ControlProtocolError):
        ControlMessageDecoder().receive_data(b"\x2a")


def test_device_messages_clipboard_and_ack():
    data = control.encode_clipboard("copied") + control.encode_ack_clipboard(99) + b"\x02\x00\x01\x00\x01\x07"
    assert data[:5] == b"\x00\x00\x00\x00\x06"
    decoder = DeviceMessageDecoder()
    messages = decoder.receive_data(data[:3]) + decoder.receive_data(data[3:])
    assert messages == [
        DeviceMessage(0, text="copied"),
        DeviceMessage(1, sequence=99),
        DeviceMessage(2, id=1, data=b"\x07"),
    ]
