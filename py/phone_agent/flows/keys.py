"""Maestro's key names (``pressKey: Volume Up``) as the press_key tool names them. Pure."""

from __future__ import annotations

# Maestro's documented names, lower-cased with spaces and underscores removed, to press_key's keys.
_KEYS: dict[str, str] = {
    "home": "home",
    "back": "back",
    "enter": "enter",
    "backspace": "delete",
    "delete": "delete",
    "volumeup": "volume_up",
    "volumedown": "volume_down",
    "power": "power",
    "lock": "power",
    "tab": "tab",
    "space": "space",
    "menu": "menu",
    "search": "search",
    "recents": "recents",
    "escape": "KEYCODE_ESCAPE",
    "remotedpadup": "KEYCODE_DPAD_UP",
    "remotedpaddown": "KEYCODE_DPAD_DOWN",
    "remotedpadleft": "KEYCODE_DPAD_LEFT",
    "remotedpadright": "KEYCODE_DPAD_RIGHT",
    "remotedpadcenter": "KEYCODE_DPAD_CENTER",
    "remotemediaplaypause": "KEYCODE_MEDIA_PLAY_PAUSE",
    "remotemediastop": "KEYCODE_MEDIA_STOP",
    "remotemedianext": "KEYCODE_MEDIA_NEXT",
    "remotemediaprevious": "KEYCODE_MEDIA_PREVIOUS",
    "remotemediarewind": "KEYCODE_MEDIA_REWIND",
    "remotemediafastforward": "KEYCODE_MEDIA_FAST_FORWARD",
    "remotesystemnavigationup": "KEYCODE_SYSTEM_NAVIGATION_UP",
    "remotesystemnavigationdown": "KEYCODE_SYSTEM_NAVIGATION_DOWN",
    "remotebuttona": "KEYCODE_BUTTON_A",
    "remotebuttonb": "KEYCODE_BUTTON_B",
    "remotemenu": "KEYCODE_MENU",
    "tvinput": "KEYCODE_TV_INPUT",
    "tvinputhdmi1": "KEYCODE_TV_INPUT_HDMI_1",
    "tvinputhdmi2": "KEYCODE_TV_INPUT_HDMI_2",
    "tvinputhdmi3": "KEYCODE_TV_INPUT_HDMI_3",
}
# press_key's names back to Maestro's, for recording.
MAESTRO_NAMES: dict[str, str] = {
    "home": "Home",
    "back": "Back",
    "enter": "Enter",
    "delete": "Backspace",
    "volume_up": "Volume Up",
    "volume_down": "Volume Down",
    "power": "Power",
    "tab": "Tab",
    "KEYCODE_ESCAPE": "Escape",
}


def maestro_key(name: str) -> str | None:
    """press_key's name for Maestro's key ``name`` (any case, spaces optional); None when unknown."""
    return _KEYS.get(name.replace(" ", "").replace("_", "").lower())
