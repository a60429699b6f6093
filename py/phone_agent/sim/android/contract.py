"""The fixed interface between the virtual phone and the shell that calls it.

The device-side shell (outside this package) parses command lines, runs its own
built-ins, and hands every Android command (`getprop`, `input`, `am`, …) to
`VirtualPhone.run` with the command's stdin and the virtual file system as a
`FileStore`.
"""

from __future__ import annotations

from typing import Protocol

from ...shell_result import ShellResult

__all__ = ["FileStore", "ShellResult"]


class FileStore(Protocol):
    """The slice of the virtual file system the Android commands need."""

    def read_file(self, path: str) -> bytes:
        """Raise FileNotFoundError or IsADirectoryError like open() does."""
        ...

    def write_file(self, path: str, data: bytes) -> None:
        """Raise FileNotFoundError when the parent directory is missing."""
        ...
