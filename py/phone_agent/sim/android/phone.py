"""VirtualPhone: the state of the simulated Android phone and the entry point
through which the device-side shell runs Android commands on it."""

from __future__ import annotations

import threading
from typing import Any

from . import commands
from .contract import CommandResult, FileStore
from .props import device_props


class VirtualPhone:
    """A small Android 14 phone: settings, apps, screens and a screen stack."""

    def __init__(self, *, serial: str = "PHAGSIM0001") -> None:
        self.serial = serial
        self.props: dict[str, str] = device_props(serial)
        self._lock = threading.RLock()
        self.version = 0

    def command_names(self) -> frozenset[str]:
        """The Android commands `run` handles."""
        return frozenset(commands.HANDLERS)

    def run(self, argv: list[str], stdin: bytes, fs: FileStore) -> CommandResult:
        """Run one Android command (argv[0] is one of command_names())."""
        handler = commands.HANDLERS.get(argv[0]) if argv else None
        if handler is None:
            name = argv[0] if argv else ""
            message = f"/system/bin/sh: {name}: inaccessible or not found\n"
            return CommandResult(stderr=message.encode(), exit_code=127)
        with self._lock:
            return handler(self, list(argv[1:]), stdin, fs)

    def state(self) -> dict[str, Any]:
        """A JSON-able snapshot of what tests and the control endpoint check."""
        with self._lock:
            return {"version": self.version}

    def reset(self) -> None:
        """Back to the home screen, default settings and the initial messages."""
        with self._lock:
            self.version += 1
