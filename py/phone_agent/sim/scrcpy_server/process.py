"""The simulated phone speaks scrcpy 2.5, as the real server does once a client has pushed it.

``adb shell CLASSPATH=/data/local/tmp/scrcpy-server.jar app_process / com.genymobile.scrcpy.Server
2.5 tunnel_forward=true …`` starts a "server process" when that file is the official 2.5 jar (by
SHA-256): it listens on ``localabstract:scrcpy`` (or ``scrcpy_<scid>``), takes the video socket
then the control socket, sends the dummy byte, the device name and the codec meta on them, streams
the screen as H.264 at the asked size and rate (a frame when the screen changes, a repeat at least
once a second) and applies control messages to the virtual UI as ``input`` would. ``ps -A`` lists
``app_process`` while it runs. It ends when a socket or the shell stream closes (adbd hangs up the
process). A wrong version or another jar fails as the real server does: a message on stderr, exit 1.
With scrcpy disabled the phone has no ``app_process`` at all (a phone scrcpy cannot run on).

For tests of bad input, ``ScrcpyServerProcess.inject`` sends a packet of the test's bytes next (a
corrupt frame for the client's decoder), or only its first bytes before hanging up (a truncated
stream).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import itertools
import logging
import posixpath
import shlex
import time
from dataclasses import dataclass
from typing import Any, Protocol

from phone_agent.adb.shell_protocol import ShellId, encode_shell_packet
from phone_agent.scrcpy import control as ctl
from phone_agent.scrcpy.protocol import (
    CODEC_H264,
    SERVER_CLASS,
    SERVER_SHA256,
    VERSION,
    ParsedOptions,
    encode_codec_meta,
    encode_device_meta,
    encode_packet,
    parse_server_arguments,
    video_size,
)
from phone_agent.sim.connection import AdbdStream, AdbdStreamClosedError, ServiceHandler


class PhoneServerForScrcpy(Protocol):
    """What the scrcpy host needs of the simulated phone's server (it does not import the server:
    the server owns the host)."""

    phone: Any
    fs: Any

    async def run_blocking(self, function: Any, *args: Any) -> Any: ...


log = logging.getLogger(__name__)

APP_PROCESS_NAMES = ("app_process", "app_process32", "app_process64")
REPEAT_INTERVAL = 1.0  # seconds without a change before the same screen is sent again
DEFAULT_FPS = 60  # max_fps=0 (no limit): the fastest the sim looks for changes
_pids = itertools.count(5100)


@dataclass(frozen=True)
class AppProcessCommand:
    """``[VAR=value …] app_process PARENT_DIR [--options] CLASS ARGS…`` from a shell command line."""

    env: dict[str, str]
    class_name: str
    args: list[str]


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


def _java_error(message: str, exception: str, where: str) -> bytes:
    """What ``Ln.e(message, throwable)`` prints: the message, then the stack trace."""
    return (
        f"[server] ERROR: {message}\n{exception}: {message}\n\tat {where}\n"
        f"\tat com.genymobile.scrcpy.Server.internalMain(Server.java:215)\n"
        f"\tat com.genymobile.scrcpy.Server.main(Server.java:195)\n"
        f"\tat com.android.internal.os.RuntimeInit.nativeFinishInit(Native Method)\n"
        f"\tat com.android.internal.os.RuntimeInit.main(RuntimeInit.java:355)\n"
    ).encode()


class ScrcpyServerProcess:
    """One running server: a listening abstract socket, then a video and a control stream."""

    def __init__(self, host: ScrcpyHost, options: ParsedOptions) -> None:
        self.host = host
        self.options = options
        self.pid = next(_pids)
        self.socket_name = options.socket_name
        self.ended = asyncio.Event()
        self._accepted: list[AdbdStream] = []
        self._accept_wanted = int(options.video) + int(options.audio) + int(options.control)
        self._ready = asyncio.Event()
        self.frames_sent = 0
        # Where the video loop's time went (wall clock, for bench/bench_scrcpy.py): drawing and
        # encoding frames (a worker thread), and handing them to the client (flow control included).
        self.encode_seconds = 0.0
        self.write_seconds = 0.0
        self.control_messages = 0
        self._touch: tuple[float, float, float] | None = None  # down point (physical) and time
        self._touch_last: tuple[float, float] = (0.0, 0.0)
        self._injected: list[tuple[bytes, bool, int | None]] = []
        self._renderer: Any = None  # android.render.LayeredRenderer, made by the encoding thread
        self._due = 0.0  # when the last video frame was due (time.monotonic)
        width, height = host.screen_size()
        self.video_width, self.video_height = video_size(width, height, options.max_size)

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
        phone = self.host.server.phone
        self.host.processes[self.pid] = self
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
                tasks.append(asyncio.create_task(self._stream_video(by_kind["video"])))
            if "audio" in by_kind:
                await by_kind["audio"].write(bytes(4))  # audio disabled: codec id 0
            if "control" in by_kind:
                tasks.append(asyncio.create_task(self._control(by_kind["control"])))
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
        self.host.processes.pop(self.pid, None)
        getattr(self.host.server.phone, "processes", {}).pop(self.pid, None)
        getattr(self.host.server.phone, "process_stoppers", {}).pop(self.pid, None)
        for stream in self._accepted:
            if not stream.closed:
                stream.connection.close_stream(stream)

    # ----- video

    def inject(self, data: bytes, *, key_frame: bool = False, cut_after: int | None = None) -> None:
        """Send ``data`` as the next video packet (frame header and all), instead of waiting for the
        screen to change; with ``cut_after``, only that many bytes of it, header included, and then
        the process ends (its sockets close) — a stream truncated inside a packet."""
        self._injected.append((data, key_frame, cut_after))

    async def _send_injected(self, stream: AdbdStream, pts: int) -> None:
        data, key_frame, cut_after = self._injected.pop(0)
        packet = encode_packet(data, pts, key_frame=key_frame) if self.options.send_frame_meta else data
        if cut_after is None:
            await stream.write(packet)
            return
        await stream.write(packet[:cut_after])
        await asyncio.sleep(0.05)  # the bytes leave before the hang-up
        self.stop()

    async def _stream_video(self, stream: AdbdStream) -> None:
        from phone_agent.sim.screen_encoder import ScreenEncoder  # PyAV loads only when used

        server = self.host.server
        fps = self.options.max_fps or DEFAULT_FPS
        encoder = await server.run_blocking(ScreenEncoder, self.video_width, self.video_height, fps)
        if self.options.send_codec_meta:
            await stream.write(encode_codec_meta(CODEC_H264, self.video_width, self.video_height))
        start = time.monotonic()
        interval = 1.0 / fps
        loop = asyncio.get_running_loop()
        changed = asyncio.Event()  # the phone changed its screen (any thread): look now

        def on_change() -> None:
            with contextlib.suppress(RuntimeError):  # the loop has closed: nobody to wake
                loop.call_soon_threadsafe(changed.set)

        phone = server.phone
        listeners = getattr(phone, "change_listeners", None)
        if listeners is not None:
            listeners.append(on_change)
        last_key: object = None
        last_sent = 0.0
        self._due = start - interval
        try:
            while not stream.closed:
                now = time.monotonic()
                if self._injected:
                    await self._send_injected(stream, int((now - start) * 1_000_000))
                    continue
                key = self.host.screen_key()
                if key != last_key or now - last_sent >= REPEAT_INTERVAL:
                    last_key, last_sent = key, now
                    pts = int((now - start) * 1_000_000)
                    packets = await server.run_blocking(self._encode, encoder, pts)
                    encoded = time.monotonic()
                    self.encode_seconds += encoded - now
                    data = b"".join(
                        encode_packet(p.data, pts, config=p.config, key_frame=p.key_frame)
                        if self.options.send_frame_meta
                        else p.data
                        for p in packets
                    )
                    if data:
                        await stream.write(data)
                        self.frames_sent += 1
                        self.write_seconds += time.monotonic() - encoded
                    await asyncio.sleep(self._pause(now, interval))
                else:
                    changed.clear()
                    await self._wait_for_change(changed, interval)
        except AdbdStreamClosedError:
            pass
        finally:
            if listeners is not None and on_change in listeners:
                listeners.remove(on_change)
            encoder.close()

    async def _wait_for_change(self, changed: asyncio.Event, interval: float) -> None:
        """Until the phone says its screen changed, or ``interval`` (the look after a pause catches
        the status-bar clock and the once-a-second repeat)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(changed.wait(), interval)

    def _pause(self, started: float, interval: float) -> float:
        """How long to wait after a frame begun at ``started``: paced by due times, not by a pause
        after each frame, so a wake-up that came late (a loaded machine) shortens the next pause
        instead of lowering the rate; at most max_fps on average (after a stall: one frame at once)."""
        self._due = max(self._due + interval, started)
        return max(0.0, self._due - time.monotonic())

    def _encode(self, encoder: Any, pts: int) -> list[Any]:
        # The node tree under the phone's lock (cached per version), the pixels outside it: a touch
        # arriving on the control socket must not wait for a frame being drawn. The renderer keeps
        # the windows below the first one that changed (a clock tick redraws the system bars only).
        if self._renderer is None:
            from phone_agent.sim.android.render import LayeredRenderer

            self._renderer = LayeredRenderer()
        return encoder.encode(self._renderer.render(self.host.server.phone.windows()), pts)

    # ----- control

    async def _control(self, stream: AdbdStream) -> None:
        decoder = ctl.ControlMessageDecoder()
        while True:
            data = await stream.read()
            if not data:
                return
            try:
                messages = decoder.receive_data(data)
            except ctl.ControlProtocolError as error:
                log.warning("scrcpy control: %s", error)  # the real server stops reading too
                return
            for message in messages:
                self.control_messages += 1
                reply = await self._apply_soon(message)
                if reply:
                    await stream.write(reply)

    async def _apply_soon(self, message: ctl.ControlMessage) -> bytes:
        """Apply at once when the phone is free (a touch is a state change of microseconds, the
        point of scrcpy's input); in a worker thread when a command holds the phone."""
        lock = self.host.server.phone._lock  # the lock every Android command holds while it runs
        if lock.acquire(blocking=False):
            try:
                return self._apply(message)
            finally:
                lock.release()
        return await self.host.server.run_blocking(self._apply_locked, message)

    def _apply_locked(self, message: ctl.ControlMessage) -> bytes:
        with self.host.server.phone._lock:
            return self._apply(message)

    def _apply(self, message: ctl.ControlMessage) -> bytes:
        """Apply one message to the phone (the caller holds the phone's lock)."""
        from phone_agent.sim.android import keys
        from phone_agent.sim.android.commands.input import press_key

        phone = self.host.server.phone
        kind = message.type
        if kind == ctl.INJECT_TOUCH_EVENT:
            point = self._physical(message)
            if point is None:
                return b""
            if message.action == ctl.MOTION_DOWN:
                self._touch = (*point, time.monotonic())
                self._touch_last = point
            elif message.action == ctl.MOTION_MOVE:
                self._touch_last = point
            elif message.action == ctl.MOTION_UP and self._touch is not None:
                x0, y0, t0 = self._touch
                self._touch = None
                phone.swipe(x0, y0, point[0], point[1], int((time.monotonic() - t0) * 1000))
        elif kind == ctl.INJECT_KEYCODE:
            if message.action == ctl.KEY_DOWN and message.repeat == 0:
                press_key(phone, message.keycode)
        elif kind == ctl.INJECT_TEXT:
            typed = "".join(ch for ch in message.text if keys.typeable(ch))  # others are skipped
            if typed:
                phone.type_text(typed)
        elif kind == ctl.INJECT_SCROLL_EVENT:
            point = self._physical(message)
            if point is not None and message.vscroll:
                x, y = point
                phone.swipe(x, y, x, y + message.vscroll * 200, 100)
        elif kind == ctl.BACK_OR_SCREEN_ON:
            if message.action == ctl.KEY_DOWN:
                press_key(phone, keys.BACK)
        elif kind == ctl.SET_CLIPBOARD:
            phone.clipboard = message.text
            phone._changed()
            if message.paste:
                press_key(phone, keys.PASTE)
            if message.sequence:
                return ctl.encode_ack_clipboard(message.sequence)
        elif kind == ctl.GET_CLIPBOARD:
            return ctl.encode_clipboard(phone.clipboard)
        return b""

    def _physical(self, message: ctl.ControlMessage) -> tuple[float, float] | None:
        """Video coordinates to the screen's; None for a size that is not the stream's (the real
        server ignores such an event: the screen may have rotated since it was generated)."""
        if (message.screen_width, message.screen_height) != (self.video_width, self.video_height):
            log.warning("Ignore touch event, it was generated for a different device size")
            return None
        width, height = self.host.screen_size()
        return message.x * width / self.video_width, message.y * height / self.video_height


class ScrcpyHost:
    """The scrcpy side of one simulated phone: starts server processes, routes abstract sockets."""

    def __init__(self, server: PhoneServerForScrcpy, *, enabled: bool = True) -> None:
        self.server = server
        self.enabled = enabled
        self.processes: dict[int, ScrcpyServerProcess] = {}

    def screen_size(self) -> tuple[int, int]:
        from phone_agent.sim.android.props import SCREEN_HEIGHT, SCREEN_WIDTH

        return SCREEN_WIDTH, SCREEN_HEIGHT

    def screen_key(self) -> object:
        """Changes whenever the picture may: the phone's version and its status-bar clock."""
        phone = self.server.phone
        return (phone.version, phone.clock_text())

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

        if command.class_name != SERVER_CLASS:
            name = command.class_name or "(none)"
            await out(ShellId.STDERR, f"Error: could not find class '{name}'\n".encode())
            return await finish(1)
        jar = command.env.get("CLASSPATH", "")
        try:
            digest = hashlib.sha256(self.server.fs.read_file(jar)).hexdigest() if jar else ""
        except OSError:
            digest = ""
        if not digest:
            await out(ShellId.STDERR, f"Error: could not find class '{SERVER_CLASS}'\n".encode())
            return await finish(1)
        server_version = VERSION if digest == SERVER_SHA256 else "unknown"
        try:
            options = parse_server_arguments(command.args, server_version)
        except ValueError as error:
            where = "com.genymobile.scrcpy.Options.parse(Options.java:273)"
            await out(ShellId.STDERR, _java_error(str(error), "java.lang.IllegalArgumentException", where))
            return await finish(1)
        model = self.server.phone.props
        await out(
            ShellId.STDOUT,
            (
                f"[server] INFO: Device: [{model.get('ro.product.manufacturer', '')}] "
                f"{model.get('ro.product.brand', '')} {model.get('ro.product.model', '')} "
                f"(Android {model.get('ro.build.version.release', '')})\n"
            ).encode(),
        )
        process = ScrcpyServerProcess(self, options)
        run = asyncio.create_task(process.run())
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


async def _wait_for_hangup(stream: AdbdStream) -> None:
    """Returns when the host closes the shell stream (stdin is read and dropped)."""
    while await stream.read():
        pass
