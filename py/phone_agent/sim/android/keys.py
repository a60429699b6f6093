"""Android key codes: the names `input keyevent` accepts and what typing keys insert."""

from __future__ import annotations

from phone_agent.device.key_codes import ANDROID_KEY_NAMES, KEY_CODE_NUMBERS

# Every name Android has: `input keyevent` takes the same names press_key is checked against.
KEYCODES: dict[str, int] = KEY_CODE_NUMBERS

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

MAX_KEYCODE = len(ANDROID_KEY_NAMES) - 1  # KEYCODE_SCREENSHOT, the last one Android 14 knows
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
