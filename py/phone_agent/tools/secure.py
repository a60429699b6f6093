"""Whether the screen in front is a secure window (FLAG_SECURE), which screencap and scrcpy capture
as black while the UI tree still reads.

Android says so in ``dumpsys window windows``: each window's attributes print its flags (``fl=``), and
FLAG_SECURE prints as ``SECURE``; ``mCurrentFocus`` names the window in front. ``SECURE_CHECK`` asks for
just those lines; ``focused_window_secure`` reads them. Pure: the tools run the command through the
Device interface, beside the screenshot.
"""

from __future__ import annotations

import re

from ..device.interface import Device

SECURE_CHECK = "dumpsys window windows | grep -E 'Window #|^ +fl=|mCurrentFocus'"
SECURE_TEXT = (
    "The screen in front is a secure window (FLAG_SECURE): the phone blanks it in screenshots, so the "
    "image is black there. Its elements can still be read with list_elements."
)
_WINDOW = re.compile(r"Window #\d+ Window\{(\w+) ")
_FOCUS = re.compile(r"mCurrentFocus=Window\{(\w+) ")


def focused_window_secure(dump: str) -> bool:
    """Whether the focused window of a ``SECURE_CHECK`` answer has FLAG_SECURE."""
    secure: set[str] = set()
    window = None
    focus = None
    for line in dump.splitlines():
        if match := _WINDOW.search(line):
            window = match.group(1)
        elif (match := _FOCUS.search(line)) is not None:
            focus = match.group(1)
        elif line.lstrip().startswith("fl=") and window is not None and "SECURE" in line.split():
            secure.add(window)
    return focus is not None and focus in secure


async def screen_is_secure(device: Device) -> bool:
    """Asks the phone; False when it cannot say (a failed or refused dumpsys)."""
    try:
        result = await device.shell(SECURE_CHECK, 5_000)
    except Exception:  # a phone that cannot answer: the screenshot is answered as it is
        return False
    return focused_window_secure(result.stdout.decode("utf-8", "replace"))
