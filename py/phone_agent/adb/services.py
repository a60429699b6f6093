"""ADB services on top of an open stream: shell (v2 protocol or raw), ``exec:`` and ``sync:``.

They take a ``ServiceOpener`` — an ``AdbClient`` (USB, TCP, the bridge) or an ``AdbServerDevice``
(a phone held by an adb server) — so the Device API does not care how the phone is reached. Shell and
sync messages do not line up with WRTE boundaries; ``StreamReader`` buffers. Every call is bounded
by a timeout. Pure asyncio.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import stat as stat_module
import time
from collections.abc import Awaitable, Callable

from phone_agent.adb import sync_protocol as sp
from phone_agent.adb.client import AdbError, AdbOutputTooLarge, AdbTimeoutError, ServiceOpener, ServiceStream
from phone_agent.adb.shell_protocol import (
    ShellId,
    ShellPacketDecoder,
    ShellProtocolError,
    encode_shell_packet,
)
from phone_agent.device.shell_result import ShellResult

SHELL_TIMEOUT = 30.0
# The most one shell command's output may be (stdout and stderr together): a real phone's largest
# answers (a whole logcat, dumpsys of everything) are a few MiB; a phone that sends more is stopped.
SHELL_OUTPUT_MAX = 32 * 1024 * 1024
MAX_LISTED = 200_000  # entries of one directory listing
MAX_NAME_BYTES = 4096  # a listed name (Linux: 255 a name, 4096 a path)


class StreamReader:
    """Exact-size reads over a stream whose chunks split messages anywhere (few copies: large
    reads that sit inside one chunk are a single slice)."""

    def __init__(self, stream: ServiceStream, timeout: float) -> None:
        self.stream = stream
        self.timeout = timeout
        self._chunk = b""
        self._offset = 0

    async def read_exact(self, size: int) -> bytes:
        data = await self.read_exact_view(size)
        return data if isinstance(data, bytes) else bytes(data)

    async def read_exact_view(self, size: int) -> bytes | memoryview:
        """Like ``read_exact``, but a zero-copy view when the bytes sit inside one chunk."""
        available = len(self._chunk) - self._offset
        if available >= size:
            start = self._offset
            self._offset += size
            if start == 0 and size == len(self._chunk):
                return self._chunk
            return memoryview(self._chunk)[start : start + size]
        parts: list[bytes | memoryview] = [memoryview(self._chunk)[self._offset :]] if available else []
        missing = size - available
        while missing > 0:
            chunk = await self.stream.read(self.timeout)
            if not isinstance(chunk, bytes):
                chunk = bytes(chunk)  # views into it must not change under us
            if not chunk:
                self._chunk, self._offset = b"", 0
                raise AdbError(
                    "the phone closed the stream in the middle of a message "
                    f"({size - missing} of {size} bytes)"
                )
            if len(chunk) <= missing:
                parts.append(chunk)
                missing -= len(chunk)
                self._chunk, self._offset = b"", 0
            else:
                parts.append(memoryview(chunk)[:missing])
                self._chunk, self._offset = chunk, missing
                missing = 0
        return parts[0] if len(parts) == 1 else b"".join(parts)


async def _bounded(coro, timeout: float, what: str):
    try:
        async with asyncio.timeout(timeout):
            return await coro
    except TimeoutError:
        raise AdbTimeoutError(f"{what} did not finish within {timeout:g} s") from None


async def shell(
    opener: ServiceOpener,
    command: str,
    *,
    stdin: bytes | None = None,
    timeout: float = SHELL_TIMEOUT,
    max_bytes: int = SHELL_OUTPUT_MAX,
) -> ShellResult:
    """Run ``command`` with the shell protocol (stdout, stderr, exit code) when the phone has
    ``shell_v2``, else through ``shell:`` (merged output, exit code -1). More than ``max_bytes`` of
    output is AdbOutputTooLarge (the stream closed, the rest never read)."""
    what = "its output"
    if "shell_v2" not in opener.features:
        stream = await opener.open_stream(f"shell:{command}", timeout=min(timeout, 10.0))
        try:
            if stdin:
                await stream.write(stdin)
            out = await _bounded(_read_all(stream, max_bytes, what), timeout, f"shell {command!r}")
        finally:
            await stream.close()
        return ShellResult(out, b"", -1)
    stream = await opener.open_stream(f"shell,v2,raw:{command}", timeout=min(timeout, 10.0))
    try:
        return await _bounded(_shell_v2(stream, stdin, max_bytes, what), timeout, f"shell {command!r}")
    finally:
        await stream.close()


async def _shell_v2(
    stream: ServiceStream, stdin: bytes | None, max_bytes: int = SHELL_OUTPUT_MAX, what: str = "shell"
) -> ShellResult:
    if stdin:
        for offset in range(0, len(stdin), 64 * 1024):
            await stream.write(encode_shell_packet(ShellId.STDIN, stdin[offset : offset + 64 * 1024]))
    try:
        await stream.write(encode_shell_packet(ShellId.CLOSE_STDIN))
    except AdbError:
        # A short command may have ended and its stream been closed (through the adb server, the
        # whole pipe closes) before this reaches the phone. The output is still buffered; a link that
        # is really broken fails the reads below.
        pass
    decoder = ShellPacketDecoder()
    stdout, stderr = bytearray(), bytearray()
    exit_code: int | None = None
    while exit_code is None:
        chunk = await stream.read(None)
        if not chunk:
            break
        try:
            packets = decoder.receive_data(chunk)
        except ShellProtocolError as exc:
            raise AdbError(str(exc)) from None
        # A packet still being received counts too: one that says it is 4 GiB must not be waited for.
        if len(stdout) + len(stderr) + decoder.buffered + sum(len(p.data) for p in packets) > max_bytes:
            raise AdbOutputTooLarge(what, max_bytes)
        for packet in packets:
            if packet.id == ShellId.STDOUT:
                stdout += packet.data
            elif packet.id == ShellId.STDERR:
                stderr += packet.data
            elif packet.id == ShellId.EXIT:
                exit_code = packet.data[0] if packet.data else 0
    if exit_code is None:
        raise AdbError(
            "the phone closed the shell before sending an exit code "
            f"({len(stdout)} bytes of output, {decoder.buffered} bytes of an unfinished packet)"
        )
    return ShellResult(bytes(stdout), bytes(stderr), exit_code)


async def _read_all(stream: ServiceStream, max_bytes: int = SHELL_OUTPUT_MAX, what: str = "shell") -> bytes:
    parts = []
    total = 0
    while chunk := await stream.read(None):
        total += len(chunk)
        if total > max_bytes:
            raise AdbOutputTooLarge(what, max_bytes)
        parts.append(chunk)
    return b"".join(parts)


async def exec_out(
    opener: ServiceOpener, command: str, *, timeout: float = SHELL_TIMEOUT, max_bytes: int = SHELL_OUTPUT_MAX
) -> bytes:
    """Binary-safe output of ``exec:command`` (stdout and stderr merged, as adb exec-out); more than
    ``max_bytes`` is AdbOutputTooLarge."""
    parts: list[bytes] = []
    await exec_into(opener, command, parts.append, timeout=timeout, max_bytes=max_bytes)
    return b"".join(parts)


async def exec_into(
    opener: ServiceOpener,
    command: str,
    write: Callable[[bytes], object],
    *,
    timeout: float = SHELL_TIMEOUT,
    max_bytes: int = 1 << 62,
) -> int:
    """Stream the output of ``exec:command`` into ``write`` as it arrives; returns its size. More than
    ``max_bytes`` is AdbOutputTooLarge (the stream closed at once)."""
    stream = await opener.open_stream(f"exec:{command}", timeout=min(timeout, 10.0))
    total = 0
    what = "its output"

    def count(chunk: bytes) -> None:
        nonlocal total
        if total + len(chunk) > max_bytes:
            raise AdbOutputTooLarge(what, max_bytes)
        write(chunk)
        total += len(chunk)

    async def pump() -> int:
        drain = stream.capabilities.drain
        if drain is not None:  # the chunks go to ``write`` as they arrive (AdbStream)
            await drain(count)
            return total
        while chunk := await stream.read(None):
            count(chunk)
        return total

    try:
        return await _bounded(pump(), timeout, f"exec {command!r}")
    finally:
        await stream.close()


class SyncClient:
    """A ``sync:`` session: stat, list, push, pull. Use ``async with await SyncClient.open(opener)``."""

    def __init__(self, stream: ServiceStream, features: frozenset[str], timeout: float) -> None:
        self.stream = stream
        self.features = features
        self.timeout = timeout
        self.reader = StreamReader(stream, timeout)
        self.failed = False

    @classmethod
    async def open(cls, opener: ServiceOpener, timeout: float = SHELL_TIMEOUT) -> SyncClient:
        stream = await opener.open_stream("sync:", timeout=min(timeout, 10.0))
        return cls(stream, opener.features, timeout)

    async def __aenter__(self) -> SyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        if not self.failed:
            with contextlib.suppress(AdbError):
                await self.stream.write(sp.encode_quit())
        await self.stream.close()

    async def _fail_message(self, length: int) -> str:
        # adbd ends the sync session after a FAIL: later requests need a new SyncClient.
        self.failed = True
        if length > MAX_NAME_BYTES * 16:
            return f"(a failure message of {length} bytes, not read)"
        return (await self.reader.read_exact(length)).decode("utf-8", "replace")

    def _check_usable(self) -> None:
        if self.failed:
            raise sp.SyncError("this sync session ended after an error; open a new one")

    async def stat(self, path: str) -> sp.SyncStat:
        """STA2 with stat_v2 (errno in ``error``), else STAT (mode 0 when missing)."""
        self._check_usable()
        if "stat_v2" in self.features:
            await self.stream.write(sp.encode_request(b"STA2", path))
            return sp.decode_stat_v2(await self.reader.read_exact(sp.STAT_V2.size))
        await self.stream.write(sp.encode_request(b"STAT", path))
        return sp.decode_stat_v1(await self.reader.read_exact(sp.STAT_V1.size))

    async def list(self, path: str, limit: int = MAX_LISTED) -> list[sp.SyncEntry]:
        """The entries of a directory (``.`` and ``..`` included, as the phone sends them); SyncError
        past ``limit`` entries (a listing without end)."""
        self._check_usable()
        v2 = "ls_v2" in self.features
        await self.stream.write(sp.encode_request(b"LIS2" if v2 else b"LIST", path))
        header = sp.DENT_V2 if v2 else sp.DENT_V1
        entries = []
        while True:
            raw = await self.reader.read_exact(header.size)
            kind = raw[:4]
            if kind == b"DONE":
                return entries
            if kind == b"FAIL":
                raise sp.SyncError(await self._fail_message(int.from_bytes(raw[4:8], "little")))
            if kind not in (b"DENT", b"DNT2"):
                raise sp.SyncError(f"unexpected {kind!r} in a directory listing")
            info, namelen = sp.decode_dent_v2(raw) if v2 else sp.decode_dent_v1(raw)
            if namelen > MAX_NAME_BYTES:
                self.failed = True
                raise sp.SyncError(f"list {path}: an entry named in {namelen} bytes (a name has at most 255)")
            name = (await self.reader.read_exact(namelen)).decode("utf-8", "surrogateescape")
            entries.append(sp.SyncEntry(name, info))
            if len(entries) > limit:
                self.failed = True
                raise sp.SyncError(f"list {path}: the phone listed more than {limit} entries, the cap")

    async def push(
        self,
        data: bytes,
        path: str,
        mode: int = 0o644,
        mtime: int | None = None,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        """Write ``data`` to ``path`` on the phone (SEND v1); SyncError with the phone's reason.
        ``progress(sent, total)`` is told after each MiB leaves."""
        self._check_usable()
        view = memoryview(data)
        await self.stream.write(sp.encode_send(path, mode))
        batch = bytearray()
        for offset in range(0, len(view), sp.DATA_MAX):
            chunk = view[offset : offset + sp.DATA_MAX]
            batch += sp.encode_data(chunk)
            batch += chunk
            if len(batch) >= 1024 * 1024:
                await self.stream.write(bytes(batch))
                batch = bytearray()
                if progress is not None:
                    progress(min(offset + sp.DATA_MAX, len(view)), len(view))
        batch += sp.encode_done(int(time.time()) if mtime is None else mtime)
        await self.stream.write(bytes(batch))
        await self._push_answer(path)

    async def push_stream(
        self,
        read: Callable[[], Awaitable[bytes | None]],
        total: int,
        path: str,
        mode: int = 0o644,
        progress: Callable[[int, int], None] | None = None,
    ) -> int:
        """Write the chunks ``read()`` answers (None at the end) to ``path`` as they arrive, holding one
        chunk at a time; ``total`` is for ``progress(sent, total)``. Answers the bytes sent."""
        self._check_usable()
        await self.stream.write(sp.encode_send(path, mode))
        sent = 0
        while (chunk := await read()) is not None:
            view = memoryview(chunk)
            batch = bytearray()
            for offset in range(0, len(view), sp.DATA_MAX):
                piece = view[offset : offset + sp.DATA_MAX]
                batch += sp.encode_data(piece)
                batch += piece
            await self.stream.write(bytes(batch))
            sent += len(view)
            if progress is not None:
                progress(sent, max(total, sent))
        await self.stream.write(sp.encode_done(int(time.time())))
        await self._push_answer(path)
        return sent

    async def _push_answer(self, path: str) -> None:
        answer = await self.reader.read_exact(sp.REQUEST.size)
        kind, length = sp.REQUEST.unpack(answer)
        if kind == b"FAIL":
            raise sp.SyncError(f"push {path}: {await self._fail_message(length)}")
        if kind != b"OKAY":
            raise sp.SyncError(f"push {path}: unexpected answer {kind!r}")

    async def pull(self, path: str, limit: int = SHELL_OUTPUT_MAX) -> bytes:
        """The contents of ``path`` (RECV); SyncError with the phone's reason, AdbOutputTooLarge past
        ``limit``."""
        parts: list[bytes | memoryview] = []
        await self.pull_into(path, parts.append, limit)
        return b"".join(parts)

    async def pull_into(
        self, path: str, write: Callable[[bytes | memoryview], object], limit: int = 1 << 62
    ) -> int:
        """Stream ``path`` into ``write`` (a file's write, a list's append …) as it arrives, without
        holding it all; returns its size. ``write`` gets views that stay valid (immutable chunks). More
        than ``limit`` bytes is AdbOutputTooLarge, raised before the chunk that passes it is handed on
        (whatever the phone's stat said)."""
        self._check_usable()
        await self.stream.write(sp.encode_request(b"RECV", path))
        total = 0
        while True:
            kind, length = sp.REQUEST.unpack(await self.reader.read_exact(sp.REQUEST.size))
            if kind == b"DATA":
                if length > sp.DATA_MAX:
                    raise sp.SyncError(f"pull {path}: DATA chunk of {length} bytes")
                if total + length > limit:
                    self.failed = True  # the rest is never read: this session cannot go on
                    raise AdbOutputTooLarge(f"the file {path}", limit)
                written = write(await self.reader.read_exact_view(length))
                if inspect.isawaitable(written):  # a writer that sets the pace (a network transfer)
                    await written
                total += length
            elif kind == b"DONE":
                return total
            elif kind == b"FAIL":
                raise sp.SyncError(f"pull {path}: {await self._fail_message(length)}")
            else:
                raise sp.SyncError(f"pull {path}: unexpected {kind!r}")


def is_dir_mode(mode: int) -> bool:
    return stat_module.S_ISDIR(mode)
