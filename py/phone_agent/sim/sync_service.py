"""``sync:``: adb's file transfer service over the simulated phone's file system.

Requests are ``{4-byte id, u32 LE length}`` followed by a path (≤ 1024 bytes). STAT answers v1's
``{STAT, mode, size, mtime}``; STA2/LST2 answer stat_v2's 72-byte struct; LIST/LIS2 answer one
DENT/DNT2 per entry and a DONE; SEND takes ``"path,mode"`` then DATA chunks (≤ 64 KiB) and
DONE(mtime), answering OKAY or FAIL; RECV answers DATA chunks and DONE. QUIT ends the session.
Messages do not line up with WRTE boundaries: ``SyncReader`` buffers.
"""

from __future__ import annotations

import errno
import posixpath
import stat
import struct

from phone_agent.adb.sync_protocol import DATA_MAX, DENT_V1, DENT_V2, PATH_MAX, REQUEST, STAT_V1, STAT_V2
from phone_agent.sim.connection import AdbdStream
from phone_agent.sim.vfs import FileStat, VirtualFileSystem

# The wire formats are shared with the host side (adb/sync_protocol.py).
SYNC_DATA_MAX = DATA_MAX
SYNC_PATH_MAX = PATH_MAX


class SyncReader:
    """Exact-size reads over a stream whose WRTEs split messages anywhere."""

    def __init__(self, stream: AdbdStream) -> None:
        self.stream = stream
        self._buffer = bytearray()

    async def read_exact(self, size: int) -> bytes | None:
        """``size`` bytes, or None if the stream ends first."""
        while len(self._buffer) < size:
            chunk = await self.stream.read()
            if not chunk:
                return None
            self._buffer += chunk
        with memoryview(self._buffer) as view:
            data = bytes(view[:size])
        del self._buffer[:size]
        return data


def _stat_v2(request: bytes, info: FileStat | None, error: int = 0) -> bytes:
    if info is None:
        return STAT_V2.pack(request, error, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    return STAT_V2.pack(
        request,
        0,
        1,
        info.ino,
        info.mode,
        info.nlink,
        info.uid,
        info.gid,
        info.size,
        info.mtime,
        info.mtime,
        info.mtime,
    )


def _errno_of(exc: OSError) -> int:
    if isinstance(exc, FileNotFoundError):
        return errno.ENOENT
    if isinstance(exc, NotADirectoryError):
        return errno.ENOTDIR
    if isinstance(exc, IsADirectoryError):
        return errno.EISDIR
    return exc.errno or errno.EIO


# What the shell user (adbd's) may not touch: apps' private and the system's own data; writes go only to
# shared storage and /data/local/tmp; the system partitions are read-only.
READ_PROTECTED = ("/data/data", "/data/system", "/data/misc", "/data/user", "/data/user_de")
WRITABLE = ("/sdcard", "/storage", "/data/local/tmp")
READ_ONLY_FS = ("/system", "/vendor", "/product", "/apex")


def _inside(path: str, roots: tuple[str, ...]) -> bool:
    return any(path == root or path.startswith(root + "/") for root in roots)


def read_denied(fs: VirtualFileSystem, path: str) -> bool:
    return _inside(fs.normalize(path), READ_PROTECTED)


def write_refusal(fs: VirtualFileSystem, path: str) -> str | None:
    """Why the shell user may not create ``path`` (errno text), or None when it may."""
    normalized = fs.normalize(path)
    if _inside(normalized, WRITABLE):
        return None
    if _inside(normalized, READ_ONLY_FS) or normalized.count("/") == 1:
        return "Read-only file system"
    return "Permission denied"


def _fail(message: str) -> bytes:
    data = message.encode()
    return REQUEST.pack(b"FAIL", len(data)) + data


async def serve_sync(fs: VirtualFileSystem, stream: AdbdStream) -> None:
    """Answer sync requests until QUIT, an error, or the stream's end."""
    reader = SyncReader(stream)
    while True:
        header = await reader.read_exact(REQUEST.size)
        if header is None:
            return
        request, length = REQUEST.unpack(header)
        if length > SYNC_PATH_MAX:
            await stream.write(_fail("path too long"))
            return
        raw = await reader.read_exact(length)
        if raw is None:
            return
        path = raw.decode("utf-8", "surrogateescape")
        if request == b"QUIT":
            return
        if request == b"STAT":
            try:
                info = fs.stat(path)
                await stream.write(STAT_V1.pack(b"STAT", info.mode, info.size & 0xFFFFFFFF, info.mtime))
            except OSError:
                await stream.write(STAT_V1.pack(b"STAT", 0, 0, 0))
        elif request in (b"STA2", b"LST2"):
            if read_denied(fs, path) and fs.normalize(path).count("/") > 2:
                await stream.write(_stat_v2(request, None, errno.EACCES))
                continue
            try:
                await stream.write(_stat_v2(request, fs.stat(path)))
            except OSError as exc:
                await stream.write(_stat_v2(request, None, _errno_of(exc)))
        elif request in (b"LIST", b"LIS2"):
            await stream.write(_list(fs, path, v2=request == b"LIS2"))
        elif request == b"SEND":
            if not await _receive_file(fs, reader, stream, path):
                return
        elif request == b"RECV":
            if not await _send_file(fs, stream, path):
                return
        else:
            await stream.write(_fail(f"unknown command {struct.unpack('<I', request)[0]:08x}"))
            return


def _list(fs: VirtualFileSystem, path: str, *, v2: bool) -> bytes:
    out = bytearray()
    try:
        info = fs.stat(path)
        entries = [(".", info), ("..", fs.stat(posixpath.join(fs.normalize(path), ".."))), *fs.list_dir(path)]
    except OSError:
        entries = []
    for name, entry in entries:
        encoded = name.encode()
        if v2:
            out += DENT_V2.pack(
                b"DNT2", 0, 1, entry.ino, entry.mode, entry.nlink, entry.uid, entry.gid, entry.size,
                entry.mtime, entry.mtime, entry.mtime, len(encoded),
            )  # fmt: skip
        else:
            out += DENT_V1.pack(b"DENT", entry.mode, entry.size & 0xFFFFFFFF, entry.mtime, len(encoded))
        out += encoded
    out += DENT_V2.pack(b"DONE", *[0] * 12) if v2 else DENT_V1.pack(b"DONE", 0, 0, 0, 0)
    return bytes(out)


async def _receive_file(fs: VirtualFileSystem, reader: SyncReader, stream: AdbdStream, spec: str) -> bool:
    path, comma, mode_text = spec.rpartition(",")
    if not comma:
        await stream.write(_fail("missing , in ID_SEND_V1"))
        return False
    try:
        mode = int(mode_text, 0)
    except ValueError:
        try:
            mode = int(mode_text, 8)  # strtoul(…, 0) reads a leading 0 as octal
        except ValueError:
            await stream.write(_fail("bad mode"))
            return False
    chunks: list[bytes] = []
    while True:
        header = await reader.read_exact(REQUEST.size)
        if header is None:
            return False
        request, length = REQUEST.unpack(header)
        if request == b"DATA":
            if length > SYNC_DATA_MAX:
                await stream.write(_fail(f"data chunk of {length} bytes exceeds {SYNC_DATA_MAX}"))
                return False
            data = await reader.read_exact(length)
            if data is None:
                return False
            chunks.append(data)
        elif request == b"DONE":
            break
        else:
            await stream.write(_fail(f"invalid data message {request!r}"))
            return False
    # adbd copies the user's permission bits to group and other.
    permissions = mode & 0o777
    permissions |= (permissions >> 3) & 0o070
    permissions |= (permissions >> 3) & 0o007
    refusal = write_refusal(fs, path)
    if refusal is not None:
        await stream.write(_fail(f"couldn't create file: {refusal}"))
        return False
    parent = posixpath.dirname(fs.normalize(path))
    try:
        if not fs.is_dir(parent):
            fs.mkdir(parent, parents=True)  # fixed_push_mkdir: the device creates missing parents
    except OSError as exc:
        await stream.write(_fail(f"secure_mkdirs() failed: {_describe(exc)}"))
        return False
    try:
        if stat.S_ISDIR(mode) or fs.is_dir(path):
            raise IsADirectoryError(path)
        fs.write_file(path, b"".join(chunks), mode=permissions, mtime=length)
    except OSError as exc:
        await stream.write(_fail(f"couldn't create file: {_describe(exc)}"))
        return False
    await stream.write(REQUEST.pack(b"OKAY", 0))
    return True


async def _send_file(fs: VirtualFileSystem, stream: AdbdStream, path: str) -> bool:
    if read_denied(fs, path):
        await stream.write(_fail("open failed: Permission denied"))
        return False
    try:
        data = fs.read_file(path)
    except OSError as exc:
        await stream.write(_fail(f"open failed: {_describe(exc)}"))
        return False
    # Pack as many 64 KiB DATA messages into each WRTE as the negotiated payload allows.
    limit = max(stream.connection.max_payload, SYNC_DATA_MAX + REQUEST.size)
    view = memoryview(data)
    batch = bytearray()
    for offset in range(0, len(view), SYNC_DATA_MAX):
        chunk = view[offset : offset + SYNC_DATA_MAX]
        if len(batch) + REQUEST.size + len(chunk) > limit:
            await stream.write(batch)
            batch = bytearray()
        batch += REQUEST.pack(b"DATA", len(chunk))
        batch += chunk
    batch += REQUEST.pack(b"DONE", 0)
    await stream.write(batch)
    return True


def _describe(exc: OSError) -> str:
    return {
        errno.ENOENT: "No such file or directory",
        errno.EISDIR: "Is a directory",
        errno.ENOTDIR: "Not a directory",
    }.get(_errno_of(exc), str(exc))
