"""The ``sync:`` file-transfer protocol: message layouts and codecs, for either side.

Requests are ``{4-byte id, u32 LE length}`` + a path (≤ 1024 bytes). STAT answers
``{STAT, mode, size, mtime}``; STA2/LST2 answer stat_v2's 72-byte struct; LIST/LIS2 answer DENT/DNT2
entries then DONE; SEND takes ``"path,<decimal mode>"`` then DATA chunks (≤ 64 KiB) and DONE(mtime),
answered OKAY or FAIL(message); RECV answers DATA chunks then DONE, or FAIL. QUIT ends the session.
Messages do not line up with WRTE boundaries: readers must buffer. Pure: no I/O here.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

DATA_MAX = 64 * 1024
PATH_MAX = 1024

REQUEST = struct.Struct("<4sI")
STAT_V1 = struct.Struct("<4sIII")  # id, mode, size, mtime
STAT_V2 = struct.Struct("<4sIQQIIIIQqqq")  # id, error, dev, ino, mode, nlink, uid, gid, size, a/m/ctime
DENT_V1 = struct.Struct("<4sIIII")  # id, mode, size, mtime, namelen
DENT_V2 = struct.Struct("<4sIQQIIIIQqqqI")  # STAT_V2 fields + namelen

REQUESTS = frozenset({b"STAT", b"STA2", b"LST2", b"LIST", b"LIS2", b"SEND", b"RECV", b"QUIT"})


class SyncError(Exception):
    """The device answered FAIL, or sent something that is not a sync message."""


@dataclass(frozen=True, slots=True)
class SyncStat:
    """What STAT / STA2 / DENT / DNT2 tell about a path; ``error`` is an errno (v2 only; 0 = fine)."""

    mode: int
    size: int
    mtime: int
    error: int = 0
    ino: int = 0
    nlink: int = 0
    uid: int = 0
    gid: int = 0

    @property
    def exists(self) -> bool:
        return self.error == 0 and self.mode != 0

    @property
    def is_dir(self) -> bool:
        return (self.mode & 0o170000) == 0o040000

    @property
    def is_file(self) -> bool:
        return (self.mode & 0o170000) == 0o100000


@dataclass(frozen=True, slots=True)
class SyncEntry:
    name: str
    stat: SyncStat


def encode_request(request: bytes, path: str | bytes = b"") -> bytes:
    """``{id, len}`` + path; raises SyncError for a path over 1024 bytes."""
    if request not in REQUESTS:
        raise SyncError(f"unknown sync request {request!r}")
    raw = path.encode() if isinstance(path, str) else path
    if len(raw) > PATH_MAX:
        raise SyncError(f"path of {len(raw)} bytes is over sync's limit of {PATH_MAX}")
    return REQUEST.pack(request, len(raw)) + raw


def encode_send(path: str, mode: int = 0o644) -> bytes:
    """SEND v1: ``"path,<decimal mode>"`` (regular-file bits added)."""
    return encode_request(b"SEND", f"{path},{0o100000 | (mode & 0o7777)}")


def encode_data(chunk: bytes | memoryview) -> bytes:
    """The DATA header for one chunk (send the chunk after it)."""
    if len(chunk) > DATA_MAX:
        raise SyncError(f"a DATA chunk is at most {DATA_MAX} bytes")
    return REQUEST.pack(b"DATA", len(chunk))


def encode_done(mtime: int) -> bytes:
    return REQUEST.pack(b"DONE", mtime & 0xFFFFFFFF)


def encode_quit() -> bytes:
    return REQUEST.pack(b"QUIT", 0)


def decode_stat_v1(data: bytes) -> SyncStat:
    request, mode, size, mtime = STAT_V1.unpack(data)
    if request != b"STAT":
        raise SyncError(f"expected STAT, got {request!r}")
    return SyncStat(mode, size, mtime)


def decode_stat_v2(data: bytes, expected: bytes = b"STA2") -> SyncStat:
    request, error, _dev, ino, mode, nlink, uid, gid, size, _atime, mtime, _ctime = STAT_V2.unpack(data)
    if request != expected:
        raise SyncError(f"expected {expected.decode()}, got {request!r}")
    return SyncStat(mode, size, mtime, error, ino, nlink, uid, gid)


def decode_dent_v1(data: bytes) -> tuple[SyncStat, int]:
    """A DENT header: the entry's stat and its name length (DONE gives a zero stat)."""
    _request, mode, size, mtime, namelen = DENT_V1.unpack(data)
    return SyncStat(mode, size, mtime), namelen


def decode_dent_v2(data: bytes) -> tuple[SyncStat, int]:
    _r, error, _dev, ino, mode, nlink, uid, gid, size, _atime, mtime, _ctime, namelen = DENT_V2.unpack(data)
    return SyncStat(mode, size, mtime, error, ino, nlink, uid, gid), namelen
