"""The scrcpy server's command line on the simulated phone: which shell commands are ``app_process``
runs, and whether one starts the scrcpy 2.5 server (the class, the jar by SHA-256, the arguments).

A command that would not start it fails with ``ServerRefused``: what the real ``app_process`` prints
on stderr, and the exit status.
"""

from __future__ import annotations

import hashlib
import posixpath
import shlex
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from phone_agent.scrcpy.protocol import (
    SCRCPY_VERSION,
    SERVER_CLASS,
    SERVER_SHA256,
    ParsedOptions,
    parse_server_arguments,
)

APP_PROCESS_NAMES = ("app_process", "app_process32", "app_process64")


@dataclass(frozen=True)
class AppProcessCommand:
    """``[VAR=value …] app_process PARENT_DIR [--options] CLASS ARGS…`` from a shell command line."""

    env: dict[str, str]
    class_name: str
    args: list[str]


class ServerRefused(Exception):
    """The command does not start a server: ``stderr`` is what it prints, ``exit_code`` its status."""

    def __init__(self, stderr: bytes, exit_code: int = 1) -> None:
        super().__init__(stderr.decode(errors="replace"))
        self.stderr = stderr
        self.exit_code = exit_code


def parse_app_process(command: str) -> AppProcessCommand | None:
    """The app_process invocation in ``command``, or None when it is something else."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    env: dict[str, str] = {}
    while words and "=" in words[0] and not words[0].startswith("="):
        key, _, value = words.pop(0).partition("=")
        if not key.replace("_", "").isalnum():
            return None
        env[key] = value
    if words and words[0] == "exec":
        words.pop(0)
    if not words or posixpath.basename(words[0]) not in APP_PROCESS_NAMES:
        return None
    rest = words[1:]
    if rest and not rest[0].startswith("-"):
        rest = rest[1:]  # the parent directory (unused)
    while rest and rest[0].startswith("--"):
        rest = rest[1:]
    if not rest:
        return AppProcessCommand(env, "", [])
    return AppProcessCommand(env, rest[0], rest[1:])


def parse_server_options(command: AppProcessCommand, read_file: Callable[[str], bytes]) -> ParsedOptions:
    """The options of the server ``command`` starts, reading the jar on its CLASSPATH with
    ``read_file`` (OSError when there is none); ServerRefused when it starts no server."""
    if command.class_name != SERVER_CLASS:
        name = command.class_name or "(none)"
        raise ServerRefused(f"Error: could not find class '{name}'\n".encode())
    jar = command.env.get("CLASSPATH", "")
    try:
        digest = hashlib.sha256(read_file(jar)).hexdigest() if jar else ""
    except OSError:
        digest = ""
    if not digest:
        raise ServerRefused(f"Error: could not find class '{SERVER_CLASS}'\n".encode())
    server_version = SCRCPY_VERSION if digest == SERVER_SHA256 else "unknown"
    try:
        return parse_server_arguments(command.args, server_version)
    except ValueError as error:
        where = "com.genymobile.scrcpy.Options.parse(Options.java:273)"
        raise ServerRefused(_java_error(str(error), "java.lang.IllegalArgumentException", where)) from None


def device_line(props: Mapping[str, str]) -> bytes:
    """What the server prints on stdout as it starts: the phone it runs on."""
    return (
        f"[server] INFO: Device: [{props.get('ro.product.manufacturer', '')}] "
        f"{props.get('ro.product.brand', '')} {props.get('ro.product.model', '')} "
        f"(Android {props.get('ro.build.version.release', '')})\n"
    ).encode()


def _java_error(message: str, exception: str, where: str) -> bytes:
    """What ``Ln.e(message, throwable)`` prints: the message, then the stack trace."""
    return (
        f"[server] ERROR: {message}\n{exception}: {message}\n\tat {where}\n"
        f"\tat com.genymobile.scrcpy.Server.internalMain(Server.java:215)\n"
        f"\tat com.genymobile.scrcpy.Server.main(Server.java:195)\n"
        f"\tat com.android.internal.os.RuntimeInit.nativeFinishInit(Native Method)\n"
        f"\tat com.android.internal.os.RuntimeInit.main(RuntimeInit.java:355)\n"
    ).encode()
