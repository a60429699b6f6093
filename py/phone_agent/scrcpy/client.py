"""A scrcpy 2.5 client over any ADB ``ServiceOpener`` (the page's AdbClient, or CPython's in tests).

``ScrcpyClient.start`` puts the server on the phone (skipped when the phone already has that exact
file: ``sha256sum``, else the sync size), runs it through ``app_process`` with a forward tunnel,
opens the video and control sockets as ``localabstract:`` streams (retrying while the server comes
up, as scrcpy's own client does) and reads the device name and codec meta. Then ``read_packets``
gives video packets (config prepended to the next frame) and ``send`` writes control messages. A
failure to start raises ``ScrcpyStartError`` saying why (the server's stderr when it has one).
Pure asyncio: runs in CPython and in Pyodide.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
from collections.abc import Awaitable, Callable

from phone_agent.adb.client import AdbError, ServiceOpener, ServiceStream
from phone_agent.adb.services import SyncClient, shell
from phone_agent.adb.shell_protocol import ShellId, ShellPacketDecoder, ShellProtocolError
from phone_agent.scrcpy import control as ctl
from phone_agent.scrcpy.protocol import (
    DEVICE_PATH,
    SERVER_SHA256,
    CodecMeta,
    ConfigMerger,
    DeviceMeta,
    ScrcpyProtocolError,
    ScrcpyServerOptions,
    StreamDisabled,
    VideoPacket,
    VideoStreamParser,
    server_command,
)

CONNECT_ATTEMPTS = 50  # scrcpy's client tries 100 times, 100 ms apart; the server is up in ~1 s
CONNECT_INTERVAL = 0.1
VIDEO_READ_TIMEOUT = 3600.0  # a still screen may send nothing for long on a real phone
OUTPUT_KEPT = 64 * 1024  # of the server's own output (its errors come first)
JarSource = bytes | Callable[[], Awaitable[bytes]]


class ScrcpyStartError(Exception):
    """scrcpy could not start; the message says why, for the person watching the live view."""


class ScrcpyClosed(Exception):
    """The phone closed the video stream (the server ended)."""


class ScrcpyClient:
    def __init__(
        self, opener: ServiceOpener, jar: JarSource, options: ScrcpyServerOptions | None = None
    ) -> None:
        self.opener = opener
        self.options = options or ScrcpyServerOptions()
        self._jar = jar
        self.device_name = ""
        self.codec: CodecMeta | None = None
        self.pushed = False
        self.server_output = bytearray()
        self.server_exit: int | None = None
        self._server: ServiceStream | None = None
        self._server_task: asyncio.Task[None] | None = None
        self._video: ServiceStream | None = None
        self._control: ServiceStream | None = None
        self._parser = VideoStreamParser(dummy_byte=self.options.tunnel_forward)
        self._merger = ConfigMerger()
        self._pending: list[VideoPacket] = []
        self._device_messages = ctl.DeviceMessageDecoder()
        self._control_reader: asyncio.Task[None] | None = None
        self.clipboard_acks: dict[int, asyncio.Future[None]] = {}
        self.clipboard_waiters: list[asyncio.Future[str]] = []
        self.closed = False
        self.last_video_at = 0.0  # the event loop's time of the latest video bytes

    @property
    def video_size(self) -> tuple[int, int]:
        return (self.codec.width, self.codec.height) if self.codec else (0, 0)

    # ----- starting

    async def start(self, timeout: float = 20.0) -> CodecMeta:
        try:
            async with asyncio.timeout(timeout):
                await self._ensure_server()
                await self._launch()
                await self._connect()
                return await self._read_meta()
        except TimeoutError:
            await self.close()
            raise ScrcpyStartError(f"scrcpy did not start within {timeout:g} s{self._said()}") from None
        except ScrcpyStartError:
            await self.close()
            raise
        except (AdbError, ScrcpyProtocolError, OSError) as exc:
            await self.close()
            raise ScrcpyStartError(f"scrcpy failed to start: {exc}{self._said()}") from None

    def _said(self) -> str:
        text = bytes(self.server_output).decode("utf-8", "replace").strip()
        return f" (the server said: {text.splitlines()[0][:300]})" if text else ""

    async def _ensure_server(self) -> None:
        """Push the jar unless the phone already has exactly this file."""
        path = DEVICE_PATH
        result = await shell(self.opener, f"sha256sum {path}", timeout=10.0)
        if result.exit_code == 0 and result.stdout.split()[:1] == [SERVER_SHA256.encode()]:
            return
        jar = self._jar if isinstance(self._jar, bytes) else await self._jar()
        if hashlib.sha256(jar).hexdigest() != SERVER_SHA256:
            raise ScrcpyStartError("the page's scrcpy-server is not the 2.5 release (run scripts/setup)")
        async with await SyncClient.open(self.opener, timeout=30.0) as sync:
            if result.exit_code == 127:  # no sha256sum on this phone: the size says enough
                stat = await sync.stat(path)
                if stat.size == len(jar) and stat.mode:
                    return
            await sync.push(jar, path, 0o644)
        self.pushed = True

    async def _launch(self) -> None:
        command = server_command(self.options)
        v2 = "shell_v2" in self.opener.features
        self._server = await self.opener.open_stream(f"shell,v2,raw:{command}" if v2 else f"shell:{command}")
        self._server_task = asyncio.ensure_future(self._collect_server_output(self._server, v2))

    def _keep(self, data: bytes) -> None:
        """What the server printed, its first OUTPUT_KEPT bytes (a phone may print without end)."""
        room = OUTPUT_KEPT - len(self.server_output)
        if room > 0:
            self.server_output += data[:room]

    async def _collect_server_output(self, stream: ServiceStream, v2: bool) -> None:
        decoder = ShellPacketDecoder()
        with contextlib.suppress(AdbError, ShellProtocolError):
            while chunk := await stream.read(VIDEO_READ_TIMEOUT):
                if not v2:
                    self._keep(chunk)
                    continue
                for packet in decoder.receive_data(chunk):
                    if packet.id in (ShellId.STDOUT, ShellId.STDERR):
                        self._keep(packet.data)
                    elif packet.id == ShellId.EXIT:
                        self.server_exit = packet.data[0] if packet.data else 0
        if self.server_exit is None:
            self.server_exit = -1

    def _server_failed(self) -> str | None:
        if self._server_task is None or not self._server_task.done():
            return None
        text = bytes(self.server_output).decode("utf-8", "replace").strip()
        errors = [
            line for line in text.splitlines() if "ERROR" in line or "rror" in line or "not found" in line
        ]
        detail = (errors or text.splitlines() or ["no output"])[0][:300]
        return f"the scrcpy server exited ({self.server_exit}): {detail}"

    async def _open_socket(self) -> ServiceStream:
        name = f"localabstract:{self.options.socket_name}"
        for _ in range(CONNECT_ATTEMPTS):
            failed = self._server_failed()
            if failed:
                raise ScrcpyStartError(failed)
            try:
                return await self.opener.open_stream(name, timeout=5.0)
            except AdbError:
                await asyncio.sleep(CONNECT_INTERVAL)
        raise ScrcpyStartError(
            self._server_failed() or f"nothing listened on {name} after {CONNECT_ATTEMPTS} attempts"
        )

    async def _connect(self) -> None:
        if self.options.video:
            self._video = await self._open_socket()
            if self.options.tunnel_forward:  # the dummy byte: the server really accepted
                first = await self._video.read(10.0)
                if not first:
                    raise ScrcpyStartError(
                        self._server_failed() or "the scrcpy server closed the video socket"
                    )
                self._pending += self._feed(first)
        if self.options.control:
            self._control = await self._open_socket()
            self._control_reader = asyncio.ensure_future(self._read_device_messages(self._control))

    async def _read_meta(self) -> CodecMeta:
        while self.codec is None:
            if self._video is None:
                raise ScrcpyStartError("video is off")
            chunk = await self._video.read(10.0)
            if not chunk:
                raise ScrcpyStartError(self._server_failed() or "the scrcpy server closed the video socket")
            self._pending += self._feed(chunk)
        return self.codec

    def _feed(self, chunk: bytes) -> list[VideoPacket]:
        packets = []
        for event in self._parser.receive_data(chunk):
            if isinstance(event, DeviceMeta):
                self.device_name = event.name
            elif isinstance(event, CodecMeta):
                self.codec = event
            elif isinstance(event, StreamDisabled):
                raise ScrcpyStartError(
                    "the phone could not encode its screen" if event.error else "the phone disabled the video"
                )
            elif isinstance(event, VideoPacket):
                merged = self._merger.push(event)
                if merged is not None:
                    packets.append(merged)
        return packets

    # ----- running

    async def read_packets(self) -> list[VideoPacket]:
        """The next packets to decode (at least one); ScrcpyClosed when the stream ends."""
        while not self._pending:
            if self._video is None or self.closed:
                raise ScrcpyClosed("scrcpy is not running")
            chunk = await self._video.read(VIDEO_READ_TIMEOUT)
            if not chunk:
                raise ScrcpyClosed(self._server_failed() or self._why_closed())
            self.last_video_at = asyncio.get_running_loop().time()  # the screen moved (or repeated)
            self._pending += self._feed(chunk)
        packets, self._pending = self._pending, []
        return packets

    def _why_closed(self) -> str:
        inside = self._parser.cut_short()
        if inside is not None:  # truncated: a header (or part of one) came, and not all it announced
            return f"the phone closed the video stream in the middle of {inside}"
        return "the phone closed the video stream"

    async def send(self, message: bytes) -> None:
        if self._control is None or self.closed:
            raise ScrcpyClosed("the scrcpy control socket is not open")
        await self._control.write(message)

    async def set_clipboard(self, text: str, *, paste: bool, timeout: float = 5.0) -> None:
        """Set the clipboard (and paste), waiting for the device's acknowledgement."""
        sequence = max(self.clipboard_acks, default=0) + 1
        ack: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.clipboard_acks[sequence] = ack
        try:
            await self.send(ctl.set_clipboard(text, paste=paste, sequence=sequence))
            await asyncio.wait_for(ack, timeout)
        finally:
            self.clipboard_acks.pop(sequence, None)

    async def get_clipboard(self, timeout: float = 5.0) -> str:
        """The phone's clipboard text (GET_CLIPBOARD, answered by a clipboard device message)."""
        waiter: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        self.clipboard_waiters.append(waiter)
        try:
            await self.send(ctl.get_clipboard(0))
            return await asyncio.wait_for(waiter, timeout)
        finally:
            if waiter in self.clipboard_waiters:
                self.clipboard_waiters.remove(waiter)

    async def _read_device_messages(self, stream: ServiceStream) -> None:
        with contextlib.suppress(AdbError, ctl.ControlProtocolError):
            while chunk := await stream.read(VIDEO_READ_TIMEOUT):
                for message in self._device_messages.receive_data(chunk):
                    if message.type == ctl.DEVICE_CLIPBOARD:
                        waiters, self.clipboard_waiters = self.clipboard_waiters, []
                        for waiter in waiters:
                            if not waiter.done():
                                waiter.set_result(message.text)
                    ack = self.clipboard_acks.get(message.sequence)
                    if message.type == ctl.DEVICE_ACK_CLIPBOARD and ack is not None and not ack.done():
                        ack.set_result(None)
        for ack in [*self.clipboard_acks.values(), *self.clipboard_waiters]:
            if not ack.done():
                ack.set_exception(ScrcpyClosed("the phone closed the scrcpy control socket"))

    async def close(self) -> None:
        """Close the sockets and the server's shell (which ends the server)."""
        self.closed = True
        for task in (self._control_reader, self._server_task):
            if task is not None and not task.done():
                task.cancel()
        for stream in (self._video, self._control, self._server):
            if stream is not None:
                with contextlib.suppress(Exception):
                    await stream.close()
        self._video = self._control = self._server = None
