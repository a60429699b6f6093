"""``ShellResult``: what one shell command wrote and how it ended — the one type for it on both ends.

The phone's ``Device.shell`` answers it, the ADB client's shell service returns it, and the simulated
phone's shell and Android commands produce it. Pure data.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class ShellResult:
    """``exit_code`` is -1 when unknown (the raw shell protocol, which also mixes stderr into stdout).
    ``merged``: stdout and stderr in the order written, when the writer kept it (the simulated shell,
    for a raw-protocol or PTY client); empty otherwise."""

    stdout: bytes = b""
    stderr: bytes = b""
    exit_code: int = 0
    merged: bytes = b""

    @property
    def text(self) -> str:
        """stdout as text (undecodable bytes replaced)."""
        return self.stdout.decode("utf-8", errors="replace")
