"""The ADB bridge: ``ws://HOST:PORT/adb?target=DEVICE_HOST:DEVICE_PORT`` relays bytes to a TCP adbd.

The page speaks ADB itself; this only moves bytes between its WebSocket and a TCP socket, so the page
can reach what a browser cannot open: a network adbd (an emulator on 5555, a phone after
``adb tcpip 5555``, the simulated phone) or the host's adb server on 5037. Targets are loopback only
unless ``--allow-device-host`` names more. Binary frames, no compression (it halves throughput).

It carries ADB and nothing else: the target is connected only once the page's first bytes are what
the page's own ADB sends first, checked whole — a CNXN packet whose banner is ``host::`` and printable
text, or one of the adb-server requests ``AdbServerClient`` makes (``%04x`` + ``host:version``,
``host:devices-l``, ``host:track-devices``, ``host:transport:SERIAL``,
``host-serial:SERIAL:features``; printable, so no
CR/LF to start a line of another protocol) — only that request goes out, and the rest flows only once
the target has answered as ADB: OKAY or FAIL from an adb server; from an adbd an AUTH, an STLS or a
CNXN from a device (``device::…``; a target that echoes the page's CNXN is not one). So a script in
the page cannot use the bridge to talk to other services on this machine (HTTP, Redis, an echo
server) or read their banners.

A refused link is answered after the handshake with a close code and a reason the page shows:
4400 bad target, 4403 target not allowed, 4408 no ADB request in time, 4415 not ADB (either end),
4502 target unreachable; 1000 when either side ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import re
from dataclasses import dataclass, field

from starlette.websockets import WebSocket, WebSocketDisconnect

from ..adb.packet import HEADER_SIZE, MAX_CONNECT_PAYLOAD, Command

log = logging.getLogger("phone_agent.adb_bridge")

CONNECT_TIMEOUT_S = 5.0
FIRST_BYTES_TIMEOUT_S = 10.0
READ_CHUNK = 1 << 20
CLOSE_BAD_TARGET = 4400
CLOSE_NOT_ALLOWED = 4403
CLOSE_FIRST_BYTES_TIMEOUT = 4408
CLOSE_NOT_ADB = 4415
CLOSE_UNREACHABLE = 4502
ANSWER_TIMEOUT_S = 10.0  # for the target's first answer (an adbd answers CNXN at once, AUTH or not)
MAX_SERVER_REQUEST = 1024
# A device's CNXN names what it is (AOSP's connection states); "host" is the page's own, so an echo.
DEVICE_KINDS = frozenset({b"device", b"recovery", b"rescue", b"sideload", b"bootloader"})
# What smart_socket.AdbServerClient asks first on a connection; a serial is printable, no spaces.
_SERVER_REQUEST = re.compile(
    rb"host:version|host:devices-l|host:track-devices|host:transport:[!-~]{1,255}"
    rb"|host-serial:[!-~]{1,255}:features"
)
NEED_MORE = -1
NOT_ADB = 0
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "[::1]"})


class BadTarget(ValueError):
    pass


@dataclass(frozen=True)
class BridgePolicy:
    """Which device hosts the bridge may connect to besides loopback."""

    allowed_hosts: frozenset[str] = field(default_factory=frozenset)

    def allows(self, host: str) -> bool:
        if host.lower() in LOOPBACK_NAMES or host.lower() in self.allowed_hosts:
            return True
        try:
            return ipaddress.ip_address(host.strip("[]")).is_loopback
        except ValueError:
            return False


def parse_bridge_target(text: str | None) -> tuple[str, int]:
    """``HOST:PORT`` (IPv6 in brackets) → (host, port); BadTarget with the reason otherwise."""
    if not text:
        raise BadTarget("missing ?target=HOST:PORT")
    host, sep, port_text = text.rpartition(":")
    if not sep or not host or not (port_text.isascii() and port_text.isdigit() and len(port_text) <= 5):
        raise BadTarget(f"target must be HOST:PORT, not {text!r}")
    port = int(port_text)
    if not 0 < port < 65536:
        raise BadTarget(f"port out of range: {port}")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host, port


def _is_printable(text: bytes) -> bool:
    """Printable ASCII only: no CR/LF or other control bytes that could end a line for another
    protocol, no NUL inside."""
    return all(0x20 <= c < 0x7F for c in text)


def allowed_server_request(service: bytes) -> bool:
    """Whether ``service`` is one of the adb-server requests the page sends (smart_socket.py):
    ``host:version``, ``host:devices-l``, ``host:track-devices``, ``host:transport:SERIAL``,
    ``host-serial:SERIAL:features``."""
    return _is_printable(service) and _SERVER_REQUEST.fullmatch(service) is not None


def allowed_host_banner(payload: bytes) -> bool:
    """Whether a CNXN payload is a host's banner as the page sends it: ``host::…``, printable,
    at most one NUL at its end."""
    banner = payload[:-1] if payload.endswith(b"\x00") else payload
    return banner.startswith(b"host::") and _is_printable(banner)


def first_request_size(data: bytes) -> int:
    """How many of a link's first bytes make its first request, when they start one ADB allows:
    ``NEED_MORE`` while undecided, ``NOT_ADB`` when they are not ADB as the page speaks it.

    To an adbd, ADB starts with a CNXN packet (header with its magic, then a ``host::`` banner of
    printable text); to an adb server, with a smart-socket request: four hex digits of length, then
    one of the ``host:`` services the page asks for. Anything else (other services, CR/LF, control
    bytes) is refused before the target is even connected.
    """
    if len(data) < 4:
        return NEED_MORE
    if all(c in b"0123456789abcdefABCDEF" for c in data[:4]):
        size = 4 + int(data[:4], 16)
        service = data[4:size]
        if size - 4 > MAX_SERVER_REQUEST or not _is_printable(service):
            return NOT_ADB
        if not (b"host"[: len(service)] == service[:4]):
            return NOT_ADB
        if len(data) < size:
            return NEED_MORE
        return size if allowed_server_request(service) else NOT_ADB
    if data[:4] != b"CNXN":
        return NOT_ADB
    if len(data) < HEADER_SIZE:
        return NEED_MORE
    length = int.from_bytes(data[12:16], "little")
    magic = int.from_bytes(data[20:24], "little")
    if magic != Command.CNXN ^ 0xFFFFFFFF or length > MAX_CONNECT_PAYLOAD:
        return NOT_ADB
    size = HEADER_SIZE + length
    banner = data[HEADER_SIZE:size]
    # Refuse as soon as the banner goes wrong, not only once it is complete.
    if not (b"host::"[: len(banner)] == banner[:6]) or not _is_printable(banner.rstrip(b"\x00")):
        return NOT_ADB
    if len(data) < size:
        return NEED_MORE
    return size if allowed_host_banner(banner) else NOT_ADB


def answers_as_adb(answer: bytes, request: bytes) -> bool | None:
    """Whether a target's first answer to ``request`` is ADB's (None while more bytes are needed):
    an adb server answers OKAY or FAIL; an adbd a CNXN from a device (a banner of text that is not
    the host's: an echo of the page's CNXN is no device), an AUTH or an STLS header."""
    if len(answer) < 4:
        return None
    if request[:4] != b"CNXN":
        return answer[:4] in (b"OKAY", b"FAIL")
    if answer[:4] not in (b"CNXN", b"AUTH", b"STLS"):
        return False
    if len(answer) < HEADER_SIZE:
        return None
    command = int.from_bytes(answer[0:4], "little")
    if int.from_bytes(answer[20:24], "little") != command ^ 0xFFFFFFFF:
        return False
    if command != Command.CNXN:
        return True
    length = int.from_bytes(answer[12:16], "little")
    if length > MAX_CONNECT_PAYLOAD:
        return False
    if len(answer) < HEADER_SIZE + length:
        return None
    banner = answer[HEADER_SIZE : HEADER_SIZE + length]
    return allowed_device_banner(banner)


def allowed_device_banner(payload: bytes) -> bool:
    """``device::…`` (or recovery, rescue, sideload, bootloader): a device's banner, text without
    control bytes (UTF-8 allowed: a model name may carry it), at most one NUL at its end."""
    banner = payload[:-1] if payload.endswith(b"\x00") else payload
    kind, sep, _rest = banner.partition(b":")
    if not sep or kind not in DEVICE_KINDS:
        return False
    return all(c >= 0x20 and c != 0x7F for c in banner)


async def _first_request(websocket: WebSocket) -> tuple[bytes, bytes] | None:
    """The page's first request and any bytes after it; (b"", data) when they are not ADB; None when
    the page left first."""
    data = b""
    while (size := first_request_size(data)) == NEED_MORE or 0 < len(data) < size:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return None
        data += message.get("bytes") or b""
    if size == NOT_ADB:
        return b"", data
    return data[:size], data[size:]


async def _first_answer(reader: asyncio.StreamReader, request: bytes) -> tuple[bytes, bool]:
    """The target's first bytes and whether they are ADB's (False too when it closed first)."""
    answer = b""
    while (verdict := answers_as_adb(answer, request)) is None:
        data = await reader.read(READ_CHUNK)
        if not data:
            return answer, False
        answer += data
    return answer, verdict


async def _refuse(websocket: WebSocket, code: int, reason: str) -> None:
    await websocket.close(code=code, reason=reason[:120])


async def serve_bridge(websocket: WebSocket, policy: BridgePolicy) -> None:
    """One page's link to one device: accept, check both ends speak ADB, pump both ways until either
    side ends. Each step that refuses has closed the WebSocket with its code and reason."""
    await websocket.accept()
    target = await _allowed_target(websocket, policy)
    if target is None:
        return
    first = await _page_request(websocket, *target)
    if first is None:
        return
    request, rest = first
    opened = await _open_target(websocket, *target, request)
    if opened is None:
        return
    reader, writer, answer = opened
    log.info("ADB bridge open to %s:%d", *target)
    await _pump(websocket, reader, writer, (rest, answer), target)


async def _allowed_target(websocket: WebSocket, policy: BridgePolicy) -> tuple[str, int] | None:
    """The ``target`` the page asks for, when it is one and the policy allows its host."""
    try:
        host, port = parse_bridge_target(websocket.query_params.get("target"))
    except BadTarget as exc:
        await _refuse(websocket, CLOSE_BAD_TARGET, str(exc))
        return None
    if not policy.allows(host):
        reason = f"{host} is not loopback; start phone-agent with --allow-device-host {host}"
        await _refuse(websocket, CLOSE_NOT_ALLOWED, reason)
        return None
    return host, port


async def _page_request(websocket: WebSocket, host: str, port: int) -> tuple[bytes, bytes] | None:
    """The page's first request, when it is ADB's, and what the page sent after it."""
    try:
        first = await asyncio.wait_for(_first_request(websocket), FIRST_BYTES_TIMEOUT_S)
    except TimeoutError:
        reason = f"no ADB request within {FIRST_BYTES_TIMEOUT_S:g}s"
        await _refuse(websocket, CLOSE_FIRST_BYTES_TIMEOUT, reason)
        return None
    if first is None:
        return None
    if not first[0]:
        log.warning("ADB bridge to %s:%d refused: the page's first bytes are not ADB", host, port)
        reason = "the bridge carries ADB only (a CNXN or an adb-server request)"
        await _refuse(websocket, CLOSE_NOT_ADB, reason)
        return None
    return first


async def _open_target(
    websocket: WebSocket, host: str, port: int, request: bytes
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, bytes] | None:
    """Connect the target and send it the page's first request; its reader, writer and first answer
    when that answer is ADB's."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError) as exc:
        reason = (
            f"cannot reach {host}:{port}: {exc.strerror or type(exc).__name__}"
            if isinstance(exc, OSError)
            else f"cannot reach {host}:{port}: no answer in {CONNECT_TIMEOUT_S:g}s"
        )
        await _refuse(websocket, CLOSE_UNREACHABLE, reason)
        return None
    # Only the first request goes out until the target has answered as ADB: whatever the page sends
    # after it waits, so nothing reaches a service that is not an adbd or an adb server.
    try:
        writer.write(request)
        await writer.drain()
        answer, is_adb = await asyncio.wait_for(_first_answer(reader, request), ANSWER_TIMEOUT_S)
    except (OSError, TimeoutError):
        answer, is_adb = b"", False
    if not is_adb:
        writer.close()
        log.warning("ADB bridge to %s:%d refused: the target does not answer as ADB", host, port)
        await _refuse(websocket, CLOSE_NOT_ADB, f"{host}:{port} does not answer as an adbd or an adb server")
        return None
    return reader, writer, answer


async def _pump(
    websocket: WebSocket,
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    held: tuple[bytes, bytes],
    target: tuple[str, int],
) -> None:
    """Move bytes both ways until either side ends; ``held`` is what the page sent after its first
    request and the target's first answer, both held back until now."""
    rest, answer = held
    # asyncio reads at most 256 KiB per recv: let one read take up to a 1 MiB WRTE that is already
    # there, so a bulk transfer crosses the WebSocket in a quarter of the messages.
    if isinstance(getattr(writer.transport, "max_size", None), int):
        writer.transport.max_size = max(writer.transport.max_size, READ_CHUNK)  # type: ignore[attr-defined]

    async def page_to_device() -> None:
        writer.write(rest)
        await writer.drain()
        while True:
            message = await websocket.receive()
            if message["type"] == "websocket.disconnect":
                return
            data = message.get("bytes")
            if data is None:
                continue  # text frames carry nothing for adbd
            writer.write(data)
            await writer.drain()

    async def device_to_page() -> None:
        await websocket.send_bytes(answer)
        while data := await reader.read(READ_CHUNK):
            await websocket.send_bytes(data)

    pumps = [asyncio.ensure_future(page_to_device()), asyncio.ensure_future(device_to_page())]
    try:
        done, _pending = await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            if task.exception() is not None and not isinstance(
                task.exception(), (WebSocketDisconnect, ConnectionError, RuntimeError)
            ):
                log.warning("ADB bridge to %s:%d failed: %r", *target, task.exception())
    finally:
        for task in pumps:
            task.cancel()
        for task in pumps:
            with contextlib.suppress(BaseException):
                await task
        writer.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(writer.wait_closed(), 1.0)
        with contextlib.suppress(Exception):
            await websocket.close(code=1000, reason="device link closed")
        log.info("ADB bridge to %s:%d closed", *target)
