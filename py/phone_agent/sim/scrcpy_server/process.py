"""The simulated scrcpy server's processes: ``SimScrcpy`` starts one for an ``app_process`` shell
command and routes ``localabstract:`` opens to it; ``ScrcpyServerProcess`` is one running server,
which accepts its sockets in order and ties the video (``video.py``) and control (``control.py``)
sockets to the shell stream's life. What each socket carries is in those modules; what the command
line must say is in ``command_line.py``.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Callable
from typing import Any, Protocol, TypeVar

from phone_agent.adb.shell_protocol import ShellId, encode_shell_packet
from phone_agent.scrcpy.protocol import ParsedOptions, encode_device_meta, video_size
from phone_agent.sim.connection import AdbdStream, AdbdStreamClosedError, ServiceHandler
from phone_agent.sim.scrcpy_server.command_line import (
    AppProcessCommand,
    ServerRefused,
    device_line,
    parse_app_process,
    parse_server_options,
)
from phone_agent.sim.scrcpy_server.control import ControlReceiver
from phone_agent.sim.scrcpy_server.video import VideoSender

T = TypeVar("T")
_pids = itertools.count(5100)


class AdbdForScrcpy(Protocol):
    """What the scrcpy side needs of the simulated phone's adbd (it does not import the adbd's
    server: the server owns the scrcpy side)."""

    phone: Any
    fs: Any

    async def run_blocking(self, function: Callable[..., T], *args: Any) -> T: ...


def screen_size() -> tuple[int, int]:
    """The simulated phone's screen in pixels (portrait)."""
    from phone_agent.sim.android.props import SCREEN_HEIGHT, SCREEN_WIDTH

    return SCREEN_WIDTH, SCREEN_HEIGHT


class ScrcpyServerProcess:
    """One running server: a listening abstract socket, then a video and a control stream."""

    def __init__(self, adbd: AdbdForScrcpy, options: ParsedOptions) -> None:
        self.adbd = adbd
        self.options = options
        self.pid = next(_pids)
        self.socket_name = options.socket_name
        self.ended = asyncio.Event()
        self._accepted: list[AdbdStream] = []
        self._accept_wanted = int(options.video) + int(options.audio) + int(options.control)
        self._ready = asyncio.Event()
        screen = screen_size()
        self.video_width, self.video_height = video_size(*screen, options.max_size)
        video = (self.video_width, self.video_height)
        self.video = VideoSender(adbd.phone, adbd.run_blocking, options, video, self.stop)
        self.control = ControlReceiver(adbd.phone, adbd.run_blocking, video, screen)

    # ----- what tests and bench/bench_scrcpy.py read and do

    @property
    def frames_sent(self) -> int:
        return self.video.frames_sent

    @property
    def encode_seconds(self) -> float:
        return self.video.encode_seconds

    @property
    def write_seconds(self) -> float:
        return self.video.write_seconds

    @property
    def control_messages(self) -> int:
        return self.control.messages

    def inject(self, data: bytes, *, key_frame: bool = False, cut_after: int | None = None) -> None:
        """``VideoSender.inject``: the next video packet is ``data`` (cut after ``cut_after`` bytes,
        and the process ends)."""
        self.video.inject(data, key_frame=key_frame, cut_after=cut_after)

    # ----- the abstract socket

    def accepting(self) -> bool:
        return not self.ended.is_set() and len(self._accepted) < self._accept_wanted

    async def serve_socket(self, stream: AdbdStream) -> None:
        """One accepted connection on the abstract socket; the order of arrival says what it is."""
        index = len(self._accepted)
        self._accepted.append(stream)
        if index == 0 and self.options.tunnel_forward and self.options.send_dummy_byte:
            await stream.write(b"\0")
        if len(self._accepted) == self._accept_wanted:
            self._ready.set()
        await self.ended.wait()

    # ----- the process

    async def run(self) -> int:
        """Serve until a socket or the shell hangs up; the exit status."""
        phone = self.adbd.phone
        getattr(phone, "processes", {})[self.pid] = "app_process"
        loop = asyncio.get_running_loop()  # `kill` runs in the shell's worker thread
        getattr(phone, "process_stoppers", {})[self.pid] = lambda: loop.call_soon_threadsafe(self.stop)
        try:
            await self._ready.wait()
            sockets = list(self._accepted)
            kinds = (["video"] if self.options.video else []) + (["audio"] if self.options.audio else [])
            kinds += ["control"] if self.options.control else []
            by_kind = dict(zip(kinds, sockets, strict=True))
            first = sockets[0]
            if self.options.send_device_meta:
                await first.write(encode_device_meta(str(phone.props.get("ro.product.model", "Android"))))
            tasks = []
            if "video" in by_kind:
                tasks.append(asyncio.create_task(self.video.serve(by_kind["video"])))
            if "audio" in by_kind:
                await by_kind["audio"].write(bytes(4))  # audio disabled: codec id 0
            if "control" in by_kind:
                tasks.append(asyncio.create_task(self.control.serve(by_kind["control"])))
            try:
                await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
            finally:
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
            return 0
        finally:
            self.stop()

    def stop(self) -> None:
        if self.ended.is_set():
            return
        self.ended.set()
        self._ready.set()
        getattr(self.adbd.phone, "processes", {}).pop(self.pid, None)
        getattr(self.adbd.phone, "process_stoppers", {}).pop(self.pid, None)
        for stream in self._accepted:
            if not stream.closed:
                stream.connection.close_stream(stream)


class SimScrcpy:
    """The scrcpy side of one simulated phone: starts server processes, routes abstract sockets."""

    def __init__(self, adbd: AdbdForScrcpy, *, enabled: bool = True) -> None:
        self.adbd = adbd
        self.enabled = enabled
        self.processes: dict[int, ScrcpyServerProcess] = {}

    def running(self) -> list[ScrcpyServerProcess]:
        return [p for p in self.processes.values() if not p.ended.is_set()]

    # ----- hooks for services.find_service

    def shell_handler(self, command: str, *, v2: bool) -> ServiceHandler | None:
        """A handler for an app_process command line; None leaves the command to the shell."""
        parsed = parse_app_process(command)
        if parsed is None:
            return None
        if not self.enabled:  # no app_process on this phone: sh's "not found"
            return lambda stream: self._not_found(stream, v2)
        return lambda stream: self._serve_process(stream, parsed, v2)

    async def _not_found(self, stream: AdbdStream, v2: bool) -> None:
        message = b"/system/bin/sh: app_process: inaccessible or not found\n"
        if not v2:
            return await stream.write(message)
        await stream.write(encode_shell_packet(ShellId.STDERR, message))
        await stream.write(encode_shell_packet(ShellId.EXIT, bytes([127])))

    def socket_handler(self, name: str) -> ServiceHandler | None:
        """``localabstract:NAME``: the server listening there, or None (the OPEN is refused)."""
        for process in self.running():
            if process.socket_name == name and process.accepting():
                return process.serve_socket
        return None

    # ----- the process behind the shell stream

    async def _serve_process(self, stream: AdbdStream, command: AppProcessCommand, v2: bool) -> None:
        async def out(fd: int, data: bytes) -> None:
            if data:
                await stream.write(encode_shell_packet(fd, data) if v2 else data)

        async def finish(code: int) -> None:
            if v2:
                await stream.write(encode_shell_packet(ShellId.EXIT, bytes([code & 0xFF])))

        try:
            options = parse_server_options(command, self.adbd.fs.read_file)
        except ServerRefused as refused:
            await out(ShellId.STDERR, refused.stderr)
            return await finish(refused.exit_code)
        await out(ShellId.STDOUT, device_line(self.adbd.phone.props))
        process = ScrcpyServerProcess(self.adbd, options)
        run = asyncio.create_task(self._run(process))
        hangup = asyncio.create_task(_wait_for_hangup(stream))
        try:
            done, _ = await asyncio.wait({run, hangup}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            process.stop()
            hangup.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await run
        if run in done and not stream.closed:
            with contextlib.suppress(AdbdStreamClosedError):
                await finish(run.result())

    async def _run(self, process: ScrcpyServerProcess) -> int:
        """``process.run()``, listed in ``processes`` (so its socket can be opened) while it runs."""
        self.processes[process.pid] = process
        try:
            return await process.run()
        finally:
            self.processes.pop(process.pid, None)


async def _wait_for_hangup(stream: AdbdStream) -> None:
    """Returns when the adb host (the computer) closes the shell stream (stdin is read and dropped)."""
    while await stream.read():
        pass
