"""A hostile phone, on request: what a broken or malicious phone may send, to test that the page (and
every other host) bounds what it takes and survives.

Off unless asked, by name: ``SimulatedPhoneServer(hostile={...})``, ``phone-agent sim --hostile MODE``
(repeatable), or the control endpoint's ``POST /hostile {"modes": [...]}`` (``[]`` turns it off). Modes:

``flood-output``
    ``logcat`` and ``dumpsys`` (any of their command lines) print without end: log-like lines, as fast
    as the host takes them, until it closes the stream.
``huge-png``
    ``screencap -p`` answers a PNG that never ends: a true signature and header, then data without end;
    ``screencap`` (raw) a header for a 1080x2400 screen, then pixels without end.
``png-bomb``
    ``screencap -p`` answers a small, whole PNG that says it is 100 000 pixels square (decoded, it
    would take 40 GB); ``screencap`` (raw) a header that says so, then the first rows.
``huge-hierarchy``
    The hierarchy server's ``dumpWindowHierarchy`` answers a chunked HTTP body that never ends.
``deep-tree``
    The UI tree (the hierarchy server's and ``uiautomator dump``'s) is 100 000 levels deep.
``wide-tree``
    The UI tree holds 50 000 labelled, clickable nodes side by side.

Each writer goes at the pace of the host's flow control (a host that stops reading stops it) and gives
up when the host closes its end; each stops anyway after ``ENDLESS`` bytes so that nothing in the sim
runs forever.
"""

from __future__ import annotations

import shlex
import struct
import zlib
from collections.abc import Iterable

from phone_agent.adb.shell_protocol import ShellId, encode_shell_packet
from phone_agent.sim.connection import AdbdStream, AdbdStreamClosedError, ServiceHandler

HOSTILE_MODES = ("flood-output", "huge-png", "png-bomb", "huge-hierarchy", "deep-tree", "wide-tree")
DEEP_TREE_LEVELS = 100_000
WIDE_TREE_NODES = 50_000
FLOODED_COMMANDS = ("logcat", "dumpsys")
ENDLESS = 8 << 30  # "without end": a host that never closes is let go after this much
CHUNK = 1 << 20


def hostile_modes(modes: Iterable[str]) -> frozenset[str]:
    """``modes`` checked against the known ones (ValueError naming an unknown one)."""
    chosen = frozenset(modes)
    unknown = sorted(chosen - set(HOSTILE_MODES))
    if unknown:
        raise ValueError(f"unknown hostile mode {unknown[0]!r}: the modes are {', '.join(HOSTILE_MODES)}")
    return chosen


def hostile_tree(modes: frozenset[str]) -> str | None:
    """The UI dump a phone in ``deep-tree`` or ``wide-tree`` mode sends instead of its screen's (None
    for a good phone): terse nodes (the attributes a reader needs; a hostile phone owes no others), so
    that the answer stays under the hierarchy server's byte cap and reaches the reader."""
    head = "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
    level = '<node class="android.widget.FrameLayout" package="com.example.evil" bounds="[0,0][1080,2400]">'
    if "deep-tree" in modes:
        return head + level * DEEP_TREE_LEVELS + "</node>" * DEEP_TREE_LEVELS + "</hierarchy>"
    if "wide-tree" in modes:
        rows = "".join(
            f'<node text="Row {i}" clickable="true" bounds="[0,{i % 2300}][1080,{i % 2300 + 1}]" />'
            for i in range(WIDE_TREE_NODES)
        )
        return head + level + rows + "</node></hierarchy>"
    return None


def hostile_handler(
    modes: frozenset[str], kind: str, options: list[str], command: str
) -> ServiceHandler | None:
    """The handler of a hostile answer to this OPEN, or None to serve it as a good phone would."""
    if not modes or kind not in ("shell", "exec"):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if not words:
        return None
    v2 = kind == "shell" and "v2" in options
    if "flood-output" in modes and words[0] in FLOODED_COMMANDS:
        return lambda stream: _endless(stream, _log_lines(), v2)
    png = "-p" in words[1:]
    if "huge-png" in modes and words[0] == "screencap":
        return lambda stream: _endless(stream, _png_without_end() if png else _raw_without_end(), v2)
    if "png-bomb" in modes and words[0] == "screencap":
        return lambda stream: _once(stream, _png_bomb() if png else _raw_bomb(), v2)
    return None


async def _once(stream: AdbdStream, data: bytes, v2: bool) -> None:
    try:
        if v2:
            await stream.write(encode_shell_packet(ShellId.STDOUT, data))
            await stream.write(encode_shell_packet(ShellId.EXIT, b"\0"))
        else:
            await stream.write(data)
    except AdbdStreamClosedError:
        return
    if not stream.closed:
        stream.connection.close_stream(stream)


async def _endless(stream: AdbdStream, chunks: Iterable[bytes], v2: bool) -> None:
    sent = 0
    try:
        for chunk in chunks:
            await stream.write(encode_shell_packet(ShellId.STDOUT, chunk) if v2 else chunk)
            sent += len(chunk)
            if sent >= ENDLESS:
                break
    except AdbdStreamClosedError:
        return  # the host had enough
    if not stream.closed:
        stream.connection.close_stream(stream)


def _log_lines() -> Iterable[bytes]:
    line = b"12-04 12:00:00.000  1000  1000 I Flood   : " + b"x" * 80 + b"\n"
    block = line * (CHUNK // len(line))
    while True:
        yield block


def _png_chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def _png_without_end() -> Iterable[bytes]:
    header = struct.pack(">IIBBBBB", 100_000, 100_000, 8, 6, 0, 0, 0)  # 100 000 px square, RGBA
    yield b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header)
    filler = _png_chunk(b"IDAT", b"\0" * (CHUNK - 12))
    while True:
        yield filler


def _raw_without_end() -> Iterable[bytes]:
    yield struct.pack("<4I", 1080, 2400, 1, 0)  # RGBA_8888, sRGB: ~10 MB of pixels to come
    filler = b"\xff" * CHUNK
    while True:
        yield filler


def _raw_bomb() -> bytes:
    return struct.pack("<4I", 100_000, 100_000, 1, 0) + b"\0" * (1 << 20)


def _png_bomb() -> bytes:
    side = 100_000
    header = struct.pack(">IIBBBBB", side, side, 8, 6, 0, 0, 0)
    rows = zlib.compress(b"\0" * (1 << 20), 9)  # the first rows of a transparent square; the rest never come
    chunks = _png_chunk(b"IHDR", header) + _png_chunk(b"IDAT", rows) + _png_chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + chunks


async def endless_http_body(stream: AdbdStream) -> None:
    """An HTTP 200 whose chunked body never ends (the hierarchy server's ``huge-hierarchy``)."""
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    piece = b'{"jsonrpc": "2.0", "id": 1, "result": "<hierarchy>' + b"<node/>" * (CHUNK // 7)
    chunk = f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
    try:
        await stream.write(head)
        sent = 0
        while sent < ENDLESS:
            await stream.write(chunk)
            sent += len(chunk)
    except AdbdStreamClosedError:
        return
