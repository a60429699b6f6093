"""scrcpy 2.5's control socket, sans I/O: messages the client sends (encoders, and a decoder for the
device side) and the messages the device sends back (clipboard, clipboard acknowledgement).

Client → device, big-endian, one type byte first: 0 inject keycode (u8 action, i32 keycode,
i32 repeat, i32 meta state), 1 inject text (u32 length + UTF-8, at most 300 bytes), 2 inject touch
(u8 action, i64 pointer id, i32 x, i32 y, u16 screen width, u16 screen height, u16 pressure as
fixed point with 0xffff = 1.0, i32 action button, i32 buttons), 3 inject scroll (position as above,
i16 hscroll, i16 vscroll as fixed point in [-1, 1], i32 buttons), 4 back or screen on (u8 action),
5–7 expand notification / settings panel, collapse panels (no payload), 8 get clipboard (u8 copy
key), 9 set clipboard (i64 sequence, u8 paste, u32 length + UTF-8), 10 set screen power mode (u8),
11 rotate device, 12 UHID create and 13 UHID input (u16 id, u16 length + data), 14 open hard
keyboard settings. Device → client: 0 clipboard (u32 length + UTF-8), 1 ack clipboard (i64
sequence), 2 UHID output (u16 id, u16 length + data).

Positions are in the video's coordinates with the video's size: the server drops a touch whose
size is not the one it streams (the screen may have rotated since).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

INJECT_KEYCODE = 0
INJECT_TEXT = 1
INJECT_TOUCH_EVENT = 2
INJECT_SCROLL_EVENT = 3
BACK_OR_SCREEN_ON = 4
EXPAND_NOTIFICATION_PANEL = 5
EXPAND_SETTINGS_PANEL = 6
COLLAPSE_PANELS = 7
GET_CLIPBOARD = 8
SET_CLIPBOARD = 9
SET_SCREEN_POWER_MODE = 10
ROTATE_DEVICE = 11
UHID_CREATE = 12
UHID_INPUT = 13
OPEN_HARD_KEYBOARD_SETTINGS = 14
NO_PAYLOAD = frozenset(
    {
        EXPAND_NOTIFICATION_PANEL,
        EXPAND_SETTINGS_PANEL,
        COLLAPSE_PANELS,
        ROTATE_DEVICE,
        OPEN_HARD_KEYBOARD_SETTINGS,
    }
)

# Android's KeyEvent and MotionEvent actions
KEY_DOWN, KEY_UP = 0, 1
MOTION_DOWN, MOTION_UP, MOTION_MOVE = 0, 1, 2
POINTER_ID_MOUSE = -1
POINTER_ID_GENERIC_FINGER = -2
POINTER_ID_VIRTUAL_FINGER = -3
BUTTON_PRIMARY = 1
KEYCODE_PASTE = 279

INJECT_TEXT_MAX_BYTES = 300
MESSAGE_MAX_SIZE = 1 << 18
CLIPBOARD_TEXT_MAX_BYTES = MESSAGE_MAX_SIZE - 14

DEVICE_CLIPBOARD = 0
DEVICE_ACK_CLIPBOARD = 1
DEVICE_UHID_OUTPUT = 2

_KEYCODE = struct.Struct(">BBiii")
_TOUCH = struct.Struct(">BBqiiHHHii")
_SCROLL = struct.Struct(">BiiHHhhi")
_CLIPBOARD_HEAD = struct.Struct(">BqB")


class ControlProtocolError(ValueError):
    """Bytes that are not scrcpy 2.5 control (or device) messages."""


def _u16_fixed(value: float) -> int:
    """A pressure in [0, 1] as the server reads it: 0xffff is exactly 1.0."""
    value = min(max(value, 0.0), 1.0)
    return 0xFFFF if value >= 1.0 else int(value * 0x10000)


def _i16_fixed(value: float) -> int:
    value = min(max(value, -1.0), 1.0)
    return 0x7FFF if value >= 1.0 else int(value * 0x8000)


def _utf8_cut(text: str, limit: int) -> bytes:
    raw = text.encode()
    if len(raw) > limit:
        raw = raw[:limit].decode("utf-8", "ignore").encode()
    return raw


# ----- client → device: encoders


def inject_keycode(action: int, keycode: int, repeat: int = 0, meta_state: int = 0) -> bytes:
    return _KEYCODE.pack(INJECT_KEYCODE, action, keycode, repeat, meta_state)


def key_press(keycode: int, meta_state: int = 0) -> bytes:
    """A key pressed and released."""
    return inject_keycode(KEY_DOWN, keycode, 0, meta_state) + inject_keycode(KEY_UP, keycode, 0, meta_state)


def inject_text(text: str) -> bytes:
    """Text the server types key by key (what its key map can type; at most 300 UTF-8 bytes)."""
    raw = _utf8_cut(text, INJECT_TEXT_MAX_BYTES)
    return bytes([INJECT_TEXT]) + len(raw).to_bytes(4, "big") + raw


def inject_touch(
    action: int,
    x: int,
    y: int,
    screen_width: int,
    screen_height: int,
    *,
    pointer_id: int = POINTER_ID_GENERIC_FINGER,
    pressure: float = 1.0,
    action_button: int = 0,
    buttons: int = 0,
) -> bytes:
    return _TOUCH.pack(
        INJECT_TOUCH_EVENT,
        action,
        pointer_id,
        x,
        y,
        screen_width,
        screen_height,
        _u16_fixed(pressure),
        action_button,
        buttons,
    )


def inject_scroll(
    x: int, y: int, screen_width: int, screen_height: int, hscroll: float, vscroll: float, buttons: int = 0
) -> bytes:
    return _SCROLL.pack(
        INJECT_SCROLL_EVENT,
        x,
        y,
        screen_width,
        screen_height,
        _i16_fixed(hscroll),
        _i16_fixed(vscroll),
        buttons,
    )


def back_or_screen_on(action: int) -> bytes:
    return bytes([BACK_OR_SCREEN_ON, action])


def empty_message(message_type: int) -> bytes:
    if message_type not in NO_PAYLOAD:
        raise ValueError(f"message type {message_type} has a payload")
    return bytes([message_type])


def get_clipboard(copy_key: int = 0) -> bytes:
    return bytes([GET_CLIPBOARD, copy_key])


def set_clipboard(text: str, *, paste: bool = False, sequence: int = 0) -> bytes:
    """Set the phone's clipboard (and press PASTE with ``paste``); a non-zero ``sequence`` asks the
    device for an acknowledgement carrying it."""
    raw = _utf8_cut(text, CLIPBOARD_TEXT_MAX_BYTES)
    return (
        _CLIPBOARD_HEAD.pack(SET_CLIPBOARD, sequence, 1 if paste else 0) + len(raw).to_bytes(4, "big") + raw
    )


def set_screen_power_mode(mode: int) -> bytes:
    return bytes([SET_SCREEN_POWER_MODE, mode])


# ----- client → device: decoder (the device side)


@dataclass(frozen=True, slots=True)
class ControlMessage:
    """One decoded message; the fields its type does not use keep their defaults."""

    type: int
    action: int = 0
    keycode: int = 0
    repeat: int = 0
    meta_state: int = 0
    text: str = ""
    pointer_id: int = 0
    x: int = 0
    y: int = 0
    screen_width: int = 0
    screen_height: int = 0
    pressure: float = 0.0
    action_button: int = 0
    buttons: int = 0
    hscroll: float = 0.0
    vscroll: float = 0.0
    copy_key: int = 0
    sequence: int = 0
    paste: bool = False
    id: int = 0
    data: bytes = b""


class ControlMessageDecoder:
    """Bytes of the control socket in, ``ControlMessage`` out, whatever the split of the input.
    An unknown type raises: the stream cannot be resynchronised after it."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    @property
    def buffered(self) -> int:
        return len(self._buffer)

    def receive_data(self, data: bytes | bytearray | memoryview) -> list[ControlMessage]:
        self._buffer += data
        messages = []
        while self._buffer:
            parsed = self._parse(self._buffer)
            if parsed is None:
                break
            message, used = parsed
            del self._buffer[:used]
            messages.append(message)
        return messages

    @staticmethod
    def _parse(b: bytearray) -> tuple[ControlMessage, int] | None:
        kind, n = b[0], len(b)
        if kind == INJECT_KEYCODE:
            if n < _KEYCODE.size:
                return None
            _, action, keycode, repeat, meta = _KEYCODE.unpack_from(b)
            return ControlMessage(kind, action=action, keycode=keycode, repeat=repeat, meta_state=meta), 14
        if kind == INJECT_TEXT:
            text = _string(b, 1)
            return None if text is None else (ControlMessage(kind, text=text[0]), text[1])
        if kind == INJECT_TOUCH_EVENT:
            if n < _TOUCH.size:
                return None
            _, action, pointer, x, y, w, h, pressure, action_button, buttons = _TOUCH.unpack_from(b)
            message = ControlMessage(
                kind,
                action=action,
                pointer_id=pointer,
                x=x,
                y=y,
                screen_width=w,
                screen_height=h,
                pressure=1.0 if pressure == 0xFFFF else pressure / 0x10000,
                action_button=action_button,
                buttons=buttons,
            )
            return message, _TOUCH.size
        if kind == INJECT_SCROLL_EVENT:
            if n < _SCROLL.size:
                return None
            _, x, y, w, h, hs, vs, buttons = _SCROLL.unpack_from(b)
            message = ControlMessage(
                kind,
                x=x,
                y=y,
                screen_width=w,
                screen_height=h,
                hscroll=1.0 if hs == 0x7FFF else hs / 0x8000,
                vscroll=1.0 if vs == 0x7FFF else vs / 0x8000,
                buttons=buttons,
            )
            return message, _SCROLL.size
        if kind in (BACK_OR_SCREEN_ON, GET_CLIPBOARD, SET_SCREEN_POWER_MODE):
            if n < 2:
                return None
            if kind == GET_CLIPBOARD:
                return ControlMessage(kind, copy_key=b[1]), 2
            return ControlMessage(kind, action=b[1]), 2
        if kind == SET_CLIPBOARD:
            if n < _CLIPBOARD_HEAD.size:
                return None
            _, sequence, paste = _CLIPBOARD_HEAD.unpack_from(b)
            text = _string(b, _CLIPBOARD_HEAD.size)
            if text is None:
                return None
            return ControlMessage(kind, sequence=sequence, paste=paste != 0, text=text[0]), text[1]
        if kind in NO_PAYLOAD:
            return ControlMessage(kind), 1
        if kind in (UHID_CREATE, UHID_INPUT):
            if n < 5:
                return None
            uhid_id, size = struct.unpack_from(">HH", b, 1)
            if n < 5 + size:
                return None
            return ControlMessage(kind, id=uhid_id, data=bytes(b[5 : 5 + size])), 5 + size
        raise ControlProtocolError(f"unknown control message type {kind}")


def _string(b: bytearray, at: int) -> tuple[str, int] | None:
    """A u32-length-prefixed UTF-8 string at ``at``: (text, end offset) or None when incomplete."""
    if len(b) < at + 4:
        return None
    size = int.from_bytes(b[at : at + 4], "big")
    if size > MESSAGE_MAX_SIZE:
        raise ControlProtocolError(f"string of {size} bytes in a control message")
    end = at + 4 + size
    if len(b) < end:
        return None
    return bytes(b[at + 4 : end]).decode("utf-8", "replace"), end


# ----- device → client


@dataclass(frozen=True, slots=True)
class DeviceMessage:
    type: int
    text: str = ""
    sequence: int = 0
    id: int = 0
    data: bytes = b""


def encode_clipboard(text: str) -> bytes:
    raw = _utf8_cut(text, CLIPBOARD_TEXT_MAX_BYTES)
    return bytes([DEVICE_CLIPBOARD]) + len(raw).to_bytes(4, "big") + raw


def encode_ack_clipboard(sequence: int) -> bytes:
    return bytes([DEVICE_ACK_CLIPBOARD]) + sequence.to_bytes(8, "big", signed=True)


class DeviceMessageDecoder:
    """Bytes the device sends on the control socket in, ``DeviceMessage`` out."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def receive_data(self, data: bytes | bytearray | memoryview) -> list[DeviceMessage]:
        b = self._buffer
        b += data
        messages = []
        while b:
            kind = b[0]
            if kind == DEVICE_CLIPBOARD:
                text = _string(b, 1)
                if text is None:
                    break
                messages.append(DeviceMessage(kind, text=text[0]))
                del b[: text[1]]
            elif kind == DEVICE_ACK_CLIPBOARD:
                if len(b) < 9:
                    break
                messages.append(DeviceMessage(kind, sequence=int.from_bytes(b[1:9], "big", signed=True)))
                del b[:9]
            elif kind == DEVICE_UHID_OUTPUT:
                if len(b) < 5:
                    break
                uhid_id, size = struct.unpack_from(">HH", b, 1)
                if len(b) < 5 + size:
                    break
                messages.append(DeviceMessage(kind, id=uhid_id, data=bytes(b[5 : 5 + size])))
                del b[: 5 + size]
            else:
                raise ControlProtocolError(f"unknown device message type {kind}")
        return messages
