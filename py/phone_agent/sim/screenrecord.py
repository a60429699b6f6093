"""``screenrecord`` on the simulated phone: the screen as H.264 in an MP4 file, written with PyAV.

Like Android's, it runs until its time limit (``--time-limit``, default and most 180 s) or until it is
interrupted (``pkill -INT screenrecord``, ``kill``, or the shell stream closing), then finishes the
MP4 and writes it to the path it was given. It is a process of its own (``ps`` lists it), served
beside the shell rather than in it: a command holding the phone for minutes would stop everything
else. Frames are the phone's screenshots at 10 per second, at half the screen's size.
"""

from __future__ import annotations

import asyncio
import io
import itertools
import logging
import shlex
import time
from typing import Any

from phone_agent.adb.shell_protocol import ShellId, encode_shell_packet
from phone_agent.sim.connection import AdbdStream, AdbdStreamClosedError, ServiceHandler

log = logging.getLogger(__name__)

FPS = 10
MAX_SECONDS = 180
_pids = itertools.count(7300)
USAGE = "Usage: screenrecord [options] <filename>\n"


def parse_command(command: str) -> tuple[int, str] | str | None:
    """``screenrecord [--time-limit N] [--bit-rate R] [--size WxH] [--verbose] FILE``: (limit, file);
    None when the command is something else; a message for a bad command line."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not words or words[0].rsplit("/", 1)[-1] != "screenrecord":
        return None
    limit, path, it = MAX_SECONDS, "", iter(words[1:])
    for word in it:
        if word == "--time-limit":
            value = next(it, "")
            if not value.isdigit() or not 1 <= int(value) <= MAX_SECONDS:
                return f"Time limit {value} is out of range [1,{MAX_SECONDS}]\n"
            limit = int(value)
        elif word in ("--bit-rate", "--size", "--rotate", "--display-id"):
            next(it, None)
        elif word.startswith("-"):
            continue
        else:
            path = word
    if not path:
        return USAGE
    return limit, path


class Recording:
    """One screenrecord process: frames encoded as they are taken, the MP4 finished at the end."""

    def __init__(self, server: Any, limit: int, path: str) -> None:
        self.server = server
        self.limit = limit
        self.path = path
        self.pid = next(_pids)
        self.stop = asyncio.Event()
        self.frames = 0
        self._image: Any = None
        self._image_key: object = None

    def _open(self) -> tuple[Any, Any, io.BytesIO]:
        import av  # the sim's own dependency (the scrcpy stream uses it too)

        buffer = io.BytesIO()
        container = av.open(buffer, mode="w", format="mp4")
        width, height = self.server.phone.screenshot().size
        stream = container.add_stream("libx264", rate=FPS)
        stream.width, stream.height = width // 2 // 2 * 2, height // 2 // 2 * 2
        stream.pix_fmt = "yuv420p"
        stream.options = {"preset": "ultrafast", "tune": "zerolatency"}
        return container, stream, buffer

    def _encode(self, container: Any, stream: Any, first: int, count: int) -> None:
        """Frames ``first`` … ``first + count - 1``: the screen now (a screen that did not change, or a
        recorder that fell behind, repeats the picture: the video keeps its frame rate)."""
        import av

        key = self.server.phone.version
        if self._image is None or key != self._image_key:
            image = self.server.phone.screenshot().convert("RGB").resize((stream.width, stream.height))
            self._image, self._image_key = image, key
        for index in range(first, first + count):
            frame = av.VideoFrame.from_image(self._image)
            frame.pts = index
            for packet in stream.encode(frame):
                container.mux(packet)
            self.frames += 1

    def _finish(self, container: Any, stream: Any, buffer: io.BytesIO) -> None:
        for packet in stream.encode():
            container.mux(packet)
        container.close()
        self.server.fs.write_file(self.server.fs.normalize(self.path, "/"), buffer.getvalue())

    async def run(self) -> str:
        """Record until stopped or the time limit; '' or the error message screenrecord prints."""
        run = self.server.run_blocking
        try:
            container, stream, buffer = await run(self._open)
        except Exception as exc:  # no encoder: what a phone without one says
            return f"ERROR: unable to create video encoder: {exc}\n"
        started = time.monotonic()
        index = 0
        while not self.stop.is_set() and time.monotonic() - started < self.limit:
            due_frames = min(int((time.monotonic() - started) * FPS) + 1, self.limit * FPS)
            await run(self._encode, container, stream, index, max(1, due_frames - index))
            index = max(index + 1, due_frames)
            due = started + index / FPS
            try:
                await asyncio.wait_for(self.stop.wait(), max(0.0, due - time.monotonic()))
            except TimeoutError:
                pass
        missing = min(int((time.monotonic() - started) * FPS), self.limit * FPS) - index
        if missing > 0:  # the time up to the stop, at the frame rate
            await run(self._encode, container, stream, index, missing)
        try:
            await run(self._finish, container, stream, buffer)
        except OSError as exc:
            return f"Unable to open '{self.path}': {exc}\n"
        return ""


def screenrecord_handler(server: Any, command: str, *, v2: bool) -> ServiceHandler | None:
    """The handler for a ``screenrecord`` shell command; None leaves other commands to the shell."""
    parsed = parse_command(command)
    if parsed is None:
        return None

    async def serve(stream: AdbdStream) -> None:
        async def finish(message: str, code: int) -> None:
            if message:
                data = message.encode()
                await stream.write(encode_shell_packet(ShellId.STDERR, data) if v2 else data)
            if v2:
                await stream.write(encode_shell_packet(ShellId.EXIT, bytes([code])))

        try:
            if isinstance(parsed, str):
                await finish(parsed, 1 if parsed != USAGE else 2)
                return
            limit, path = parsed
            recording = Recording(server, limit, path)
            phone, loop = server.phone, asyncio.get_running_loop()
            with phone.locked():  # `kill`/`pkill` (in a worker thread) interrupt it
                phone.processes[recording.pid] = "screenrecord"
                phone.process_stoppers[recording.pid] = lambda: loop.call_soon_threadsafe(recording.stop.set)

            async def watch_stream() -> None:  # the host hanging up interrupts it, as SIGHUP would
                while await stream.read():
                    pass
                recording.stop.set()

            watcher = asyncio.ensure_future(watch_stream())
            try:
                said = await recording.run()
            finally:
                watcher.cancel()
                with phone.locked():
                    phone.processes.pop(recording.pid, None)
                    phone.process_stoppers.pop(recording.pid, None)
            await finish(said, 1 if said else 0)
        except AdbdStreamClosedError:
            pass

    return serve
