"""What the shell's tests share: a phone that echoes the Android commands it gets, and a runner."""

from __future__ import annotations

from phone_agent.device.shell_result import ShellResult
from phone_agent.sim.shell.interpreter import Shell


class EchoPhone:
    """A phone with one Android command, ``getprop``, that prints its argv joined by ``|``."""

    def command_names(self) -> frozenset[str]:
        return frozenset({"getprop"})

    def run(self, argv, stdin, fs) -> ShellResult:
        return ShellResult(stdout=("|".join(argv) + "\n").encode())


def run(sh: Shell, line: str) -> tuple[bytes, bytes, int]:
    """(stdout, stderr, exit code) of one command line."""
    result = sh.run(line)
    return result.stdout, result.stderr, result.exit_code
