"""Android key codes: the names `input keyevent` accepts and what typing keys insert."""

from __future__ import annotations

KEYCODES: dict[str, int] = {
    "UNKNOWN": 0,
    "SOFT_LEFT": 1,
    "SOFT_RIGHT": 2,
    "HOME": 3,
    "BACK": 4,
    "CALL": 5,
    "ENDCALL": 6,
    **{str(d): 7 + d for d in range(10)},
    "STAR": 17,
    "POUND": 18,
    "DPAD_UP": 19,
    "DPAD_DOWN": 20,
    "DPAD_LEFT": 21,
    "DPAD_RIGHT": 22,
    "DPAD_CENTER": 23,
    "VOLUME_UP": 24,
    "VOLUME_DOWN": 25,
    "POWER": 26,
    "CAMERA": 27,
    "CLEAR": 28,
    **{chr(ord("A") + i): 29 + i for i in range(26)},
    "COMMA": 55,
    "PERIOD": 56,
    "ALT_LEFT": 57,
    "ALT_RIGHT": 58,
    "SHIFT_LEFT": 59,
    "SHIFT_RIGHT": 60,
    "TAB": 61,
    "SPACE": 62,
    "SYM": 63,
    "EXPLORER": 64,
    "ENVELOPE": 65,
    "ENTER": 66,
    "DEL": 67,
    "GRAVE": 68,
    "MINUS": 69,
    "EQUALS": 70,
    "LEFT_BRACKET": 71,
    "RIGHT_BRACKET": 72,
    "BACKSLASH": 73,
    "SEMICOLON": 74,
    "APOSTROPHE": 75,
    "SLASH": 76,
    "AT": 77,
    "NUM": 78,
    "HEADSETHOOK": 79,
    "FOCUS": 80,
    "PLUS": 81,
    "MENU": 82,
    "NOTIFICATION": 83,
    "SEARCH": 84,
    "MEDIA_PLAY_PAUSE": 85,
    "MUTE": 91,
    "PAGE_UP": 92,
    "PAGE_DOWN": 93,
    "ESCAPE": 111,
    "FORWARD_DEL": 112,
    "CTRL_LEFT": 113,
    "CTRL_RIGHT": 114,
    "MOVE_HOME": 122,
    "MOVE_END": 123,
    "NUMPAD_ENTER": 160,
    "VOLUME_MUTE": 164,
    "APP_SWITCH": 187,
    "ASSIST": 219,
    "SLEEP": 223,
    "WAKEUP": 224,
    "CUT": 277,
    "COPY": 278,
    "PASTE": 279,
    "ALL_APPS": 284,
}

KEY_CHARS: dict[int, str] = {
    **{7 + d: str(d) for d in range(10)},
    **{29 + i: chr(ord("a") + i) for i in range(26)},
    17: "*",
    18: "#",
    55: ",",
    56: ".",
    62: " ",
    68: "`",
    69: "-",
    70: "=",
    71: "[",
    72: "]",
    73: "\\",
    74: ";",
    75: "'",
    76: "/",
    77: "@",
    81: "+",
}

MAX_KEYCODE = 316  # KEYCODE_SCREENSHOT… the last one Android 14 knows
HOME, BACK, ENTER, DEL, ESCAPE, NUMPAD_ENTER, APP_SWITCH, PASTE = 3, 4, 66, 67, 111, 160, 187, 279


def keycode_from_string(name: str) -> int:
    """KeyEvent.keyCodeFromString: a number first, then `KEYCODE_HOME` or `HOME`; unknown gives 0."""
    try:
        number = int(name)
    except ValueError:
        pass
    else:
        return number if 0 <= number <= MAX_KEYCODE else 0
    symbolic = name[len("KEYCODE_") :] if name.startswith("KEYCODE_") else name
    return KEYCODES.get(symbolic, 0)


def typeable(text: str) -> bool:
    """Whether the virtual keyboard's key map can type every character (ASCII only)."""
    return all(ch in "\n\t" or 0x20 <= ord(ch) < 0x7F for ch in text)
