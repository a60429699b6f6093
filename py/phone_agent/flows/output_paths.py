"""Where a flow may write: the paths its commands name for their output (``takeScreenshot: shots/home``)
stay under the folder the run writes to (``phone-agent flow run``: the working directory), so a flow read
from anywhere cannot write elsewhere or create folders outside it.

``output_path`` is the one check, used where a flow is read (a path written in the flow: FlowError at
its line and column) and where it runs (a path made of ``${NAME}`` variables, known only then); the
command line checks the resolved path once more before it writes. A path is refused when it is
absolute (``/x``, ``\\x``, ``C:x``), when any of its parts is ``..``, or when it is empty or holds a
NUL or a line break. Pure.
"""

from __future__ import annotations

import re

_DRIVE = re.compile(r"^[A-Za-z]:")


class OutputPathError(ValueError):
    """A flow's output path that would leave the run's folder; the message says why."""


def output_path(path: str) -> str:
    """``path`` (stripped) when it stays under the run's folder; OutputPathError otherwise."""
    text = str(path).strip()
    if not text or any(ch in text for ch in "\x00\r\n"):
        raise OutputPathError(f"the output path {text!r} is empty or holds a control character")
    if text.startswith(("/", "\\", "~")) or _DRIVE.match(text):
        raise OutputPathError(
            f"the output path {text!r} is absolute: write a path relative to the folder the flow runs in"
        )
    if ".." in re.split(r"[\\/]", text):
        raise OutputPathError(
            f"the output path {text!r} climbs out with '..': write a path inside the folder the flow "
            "runs in"
        )
    return text
