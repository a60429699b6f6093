"""The services a simulated adbd offers on OPEN: ``shell:`` (raw and v2), ``exec:``, ``sync:`` and
``localabstract:`` (the scrcpy server's socket while one runs).

``shell,v2,…:CMD`` frames its traffic as shell-protocol packets (``u8 id + u32 LE length + data``;
ids 0 stdin, 1 stdout, 2 stderr, 3 exit, 4 close stdin, 5 window size); ``shell:CMD`` and
``exec:CMD`` are raw bytes with stdout and stderr merged (exec: is what binary output uses). A PTY
request (``shell,v2,TERM=…,pty:``) is served raw: there is no terminal to emulate. Packets do not
line up with WRTE boundaries, so input is buffered.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from phone_agent.adb.shell_protocol import (
    ShellId,
    ShellPacketDecoder,
    ShellProtocolError,
    encode_shell_packet,
)
from phone_agent.device.shell_result import ShellResult
from phone_agent.sim.connection import AdbdStream, AdbdStreamClosedError, ServiceHandler
from phone_agent.sim.hostile import hostile_handler
from phone_agent.sim.screenrecord import screenrecord_handler
from phone_agent.sim.shell.interpreter import Shell
from phone_agent.sim.sync_service import serve_sync
from phone_agent.sim.vfs import VirtualFileSystem

T = TypeVar("T")


class ServiceHost(Protocol):
    """What the services need of the simulated adbd (``SimulatedPhoneServer`` is one)."""

    phone: Any
    fs: VirtualFileSystem

    async def run_blocking(self, function: Callable[..., T], *args: Any) -> T: ...


STDIN, STDOUT, STDERR, EXIT, CLOSE_STDIN = (
    ShellId.STDIN,
    ShellId.STDOUT,
    ShellId.STDERR,
    ShellId.EXIT,
    ShellId.CLOSE_STDIN,
)
STDIN_TIMEOUT = 60.0  # how long a command that reads stdin waits for the host to close it
shell_packet = encode_shell_packet  # the device side writes the same packets the host decodes


class StdinPump:
    """Reads the stream in the background: collects stdin, notices its end, keeps OKAYs flowing.

    With ``pty`` it also plays the terminal's line discipline, as the phone's PTY would: echo,
    CR as end of line, backspace, Ctrl-C (drop the line) and Ctrl-D (end of input on an empty line).
    """

    def __init__(self, stream: AdbdStream, v2: bool, pty: bool = False) -> None:
        self.stream = stream
        self.v2 = v2
        self.pty = pty
        self.data = bytearray()
        self.lines: asyncio.Queue[bytes | None] = asyncio.Queue()
        self.ended = asyncio.Event()
        self._pending_line = bytearray()
        self.task = asyncio.get_running_loop().create_task(self._pump())

    async def _pump(self) -> None:
        parser = ShellPacketDecoder()
        try:
            while True:
                chunk = await self.stream.read()
                if not chunk:
                    break
                if not self.v2:
                    if not await self._add(chunk):
                        return
                    continue
                try:
                    packets = parser.receive_data(chunk)
                except ShellProtocolError:
                    return  # a host that does not speak the shell protocol: its stdin ends here
                for packet in packets:
                    if packet.id == STDIN and not await self._add(packet.data):
                        return
                    if packet.id == CLOSE_STDIN:
                        return
        finally:
            if self._pending_line:
                self.lines.put_nowait(bytes(self._pending_line))
            self.lines.put_nowait(None)
            self.ended.set()

    async def _add(self, data: bytes) -> bool:
        """Take stdin bytes; False at a PTY's end of input (Ctrl-D on an empty line)."""
        if not self.pty:
            self.data += data
            self._pending_line += data
            while (cut := self._pending_line.find(b"\n")) >= 0:
                self.lines.put_nowait(bytes(self._pending_line[: cut + 1]))
                del self._pending_line[: cut + 1]
            return True
        echo, lines, end_of_input = bytearray(), [], False
        for byte in data:
            char = bytes([byte])
            if char in b"\r\n":
                echo += b"\r\n"
                lines.append(bytes(self._pending_line) + b"\n")
                self._pending_line.clear()
            elif char in b"\x7f\x08":
                if self._pending_line:
                    del self._pending_line[-1]
                    echo += b"\x08 \x08"
            elif char == b"\x03":
                echo += b"^C\r\n"
                self._pending_line.clear()
                lines.append(b"\n")
            elif char == b"\x04":
                if not self._pending_line:
                    end_of_input = True
                    break
            else:
                echo += char
                self._pending_line += char
        await self._echo(echo)  # the echo goes out before any output of the lines it ends
        for line in lines:
            self.lines.put_nowait(line)
        return not end_of_input

    async def _echo(self, data: bytes | bytearray) -> None:
        if data:
            await self.stream.write(shell_packet(STDOUT, bytes(data)) if self.v2 else bytes(data))

    async def read_exactly(self, size: int) -> bytes:
        """The first ``size`` bytes of stdin (a streamed install sends that many and keeps it open)."""
        deadline = asyncio.get_running_loop().time() + STDIN_TIMEOUT
        while len(self.data) < size and not self.ended.is_set():
            if asyncio.get_running_loop().time() > deadline:
                break
            await asyncio.sleep(0.01)
        return bytes(self.data[:size])

    async def read_all(self) -> bytes:
        try:
            await asyncio.wait_for(self.ended.wait(), STDIN_TIMEOUT)
        except TimeoutError:
            pass
        return bytes(self.data)

    def stop(self) -> None:
        self.task.cancel()


def parse_service(name: str) -> tuple[str, list[str], str]:
    """``shell,v2,raw:ls -l`` → (``shell``, [``v2``, ``raw``], ``ls -l``)."""
    head, _, arg = name.partition(":")
    kind, *options = head.split(",")
    return kind, options, arg


def find_service(server: ServiceHost, name: str) -> ServiceHandler | None:
    """The handler for an OPEN's service name, or None (the OPEN is refused with CLSE)."""
    kind, options, arg = parse_service(name)
    hostile = hostile_handler(getattr(server, "hostile", frozenset()), kind, options, arg)
    if hostile is not None:  # asked for by name: what a broken or malicious phone sends
        return hostile
    hierarchy = getattr(server, "hierarchy", None)
    if kind in ("shell", "exec") and arg.strip() and hierarchy is not None:
        started = hierarchy.shell_handler(arg, v2=kind == "shell" and "v2" in options)
        if started is not None:  # app_process running the hierarchy server (sim/hierarchy_server.py)
            return started
    if kind == "tcp" and hierarchy is not None:
        return hierarchy.tcp_handler(arg)
    if kind in ("shell", "exec") and arg.strip():
        recorder = screenrecord_handler(server, arg, v2=kind == "shell" and "v2" in options)
        if recorder is not None:  # screenrecord runs beside the shell (sim/screenrecord.py)
            return recorder
        launched = server.scrcpy.shell_handler(arg, v2=kind == "shell" and "v2" in options)
        if launched is not None:  # app_process running the scrcpy server (sim/scrcpy_server/)
            return launched
    if kind == "localabstract":
        return server.scrcpy.socket_handler(arg)
    if kind == "shell":
        # Like adbd: an explicit raw/pty option wins; otherwise a PTY only for an interactive shell.
        v2, pty = "v2" in options, "pty" in options or ("raw" not in options and not arg.strip())
        return lambda stream: serve_shell(server, stream, arg, v2=v2, pty=pty)
    if kind == "exec" and arg:
        return lambda stream: serve_shell(server, stream, arg, v2=False)
    if kind == "sync" and not options:
        return lambda stream: serve_sync(server.fs, stream)
    return None


async def serve_shell(
    server: ServiceHost, stream: AdbdStream, command: str, *, v2: bool, pty: bool = False
) -> None:
    """Run ``command`` (or an interactive session when empty) and send its output and exit code."""
    loop = asyncio.get_running_loop()
    pump = StdinPump(stream, v2, pty)

    def read_stdin(size: int | None = None) -> bytes:
        reading = pump.read_all() if size is None else pump.read_exactly(size)
        future = asyncio.run_coroutine_threadsafe(reading, loop)
        return future.result(STDIN_TIMEOUT + 5)

    # A command may read the session's stdin; in an interactive session stdin carries the commands.
    shell = Shell(server.fs, server.phone, read_stdin=read_stdin if command.strip() else None)
    try:
        if command.strip():
            result = await server.run_blocking(shell.run, command)
            await _send_output(stream, result, v2, pty)
            if v2:
                await stream.write(shell_packet(EXIT, bytes([result.exit_code & 0xFF])))
            return
        await _interactive(server, stream, shell, pump, v2, prompt=pty)
    except AdbdStreamClosedError:
        pass
    finally:
        pump.stop()


async def _send_output(stream: AdbdStream, result: ShellResult, v2: bool, pty: bool = False) -> None:
    if pty:  # a terminal turns \n into \r\n (ONLCR) and has one output for stdout and stderr
        merged = (result.merged or result.stdout + result.stderr).replace(b"\n", b"\r\n")
        result = ShellResult(merged, b"", result.exit_code, merged)
    if not v2:
        merged = result.merged or result.stdout + result.stderr
        if merged:
            await stream.write(merged)
        return
    # One packet per stream kind; AdbdStream.write splits it into WRTEs of the negotiated size.
    for packet_id, data in ((STDOUT, result.stdout), (STDERR, result.stderr)):
        if data:
            await stream.write(shell_packet(packet_id, data))


async def _interactive(
    server: ServiceHost, stream: AdbdStream, shell: Shell, pump: StdinPump, v2: bool, *, prompt: bool
) -> None:
    """Commands from stdin, one line at a time; a prompt only when a terminal was asked for."""
    device = server.phone.props.get("ro.product.device", "generic")
    while True:
        if prompt:
            text = f"{device}:{shell.cwd} $ ".encode()
            await stream.write(shell_packet(STDOUT, text) if v2 else text)
        line = await pump.lines.get()
        if line is None:
            break
        result = await server.run_blocking(shell.run, line.decode("utf-8", "replace"))
        await _send_output(stream, result, v2, prompt)
        if shell.exited:
            break
    if v2:
        await stream.write(shell_packet(EXIT, bytes([shell.status & 0xFF])))
