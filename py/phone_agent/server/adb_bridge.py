"""The ADB bridge: ``ws://HOST:PORT/adb?target=DEVICE_HOST:DEVICE_PORT`` relays bytes to a TCP adbd.

The page speaks ADB itself; this only moves bytes between its WebSocket and a TCP socket, so the page
can reach what a browser cannot open: a network adbd (an emulator on 5555, a phone after
``adb tcpip 5555``, the simulated phone) or the host's adb server on 5037. Targets are loopback only
unless ``--allow-device-host`` names more. Binary frames, no compression (it halves throughput).

It carries ADB and nothing else: the target is connected only once the page's first bytes are an ADB
CNXN header or an adb-server request (``%04x`` + ``host…``), so a script in the page cannot use the
bridge to talk to other services on this machine (HTTP, databases) or read their banners.

A refused link is answered after the handshake with a close code and a reason the page shows:
4400 bad target, 4403 target not allowed, 4415 not ADB, 4408 no first bytes in time, 4502 target
unreachable; 1000 when either side ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
from dataclasses import dataclass, field

from starlette.websockets import WebSocket, WebSocketDisconnect

log = logging.getLogger("phone_agent.adb_bridge")

CONNECT_TIMEOUT_S = 5.0
FIRST_BYTES_TIMEOUT_S = 10.0
READ_CHUNK = 1 << 20
CLOSE_BAD_TARGET = 4400
CLOSE_NOT_ALLOWED = 4403
CLOSE_FIRST_BYTES_TIMEOUT = 4408
CLOSE_NOT_ADB = 4415
CLOSE_UNREACHABLE = 4502
ADB_HEADER_SIZE = 24
CNXN = 0x4E584E43
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


def parse_target(text: str | None) -> tuple[str, int]:
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


def speaks_adb(first: bytes) -> bool | None:
    """Whether a link's first bytes are ADB: True, False, or None when more bytes are needed.

    ADB to an adbd starts with a CNXN header (command and its magic); to an adb server, with a
    smart-socket request: four hex digits of length, then a ``host…`` service.
    """
    if len(first) >= 4 and all(c in b"0123456789abcdefABCDEF" for c in first[:4]):
        if len(first) < 8:
            return None
        return first[4:8] == b"host"
    if len(first) < ADB_HEADER_SIZE:
        return None
    command = int.from_bytes(first[0:4], "little")
    magic = int.from_bytes(first[20:24], "little")
    return command == CNXN and magic == command ^ 0xFFFFFFFF


async def _first_bytes(websocket: WebSocket) -> bytes | None:
    """The page's bytes up to the point ``speaks_adb`` decides; None when the page left first."""
    first = b""
    while speaks_adb(first) is None:
        message = await websocket.receive()
        if message["type"] == "websocket.disconnect":
            return None
        first += message.get("bytes") or b""
    return first


async def serve_bridge(websocket: WebSocket, policy: BridgePolicy) -> None:
    """One page's link to one device: accept, connect, pump both ways until either side ends."""
    await websocket.accept()
    try:
        host, port = parse_target(websocket.query_params.get("target"))
    except BadTarget as exc:
        await websocket.close(code=CLOSE_BAD_TARGET, reason=str(exc)[:120])
        return
    if not policy.allows(host):
        await websocket.close(
            code=CLOSE_NOT_ALLOWED,
            reason=f"{host} is not loopback; start phone-agent with --allow-device-host {host}"[:120],
        )
        return
    try:
        first = await asyncio.wait_for(_first_bytes(websocket), FIRST_BYTES_TIMEOUT_S)
    except TimeoutError:
        await websocket.close(
            code=CLOSE_FIRST_BYTES_TIMEOUT, reason=f"no ADB bytes within {FIRST_BYTES_TIMEOUT_S:g}s"
        )
        return
    if first is None:
        return
    if not speaks_adb(first):
        log.warning("ADB bridge to %s:%d refused: the page's first bytes are not ADB", host, port)
        await websocket.close(
            code=CLOSE_NOT_ADB, reason="the bridge carries ADB only (a CNXN or an adb-server request)"
        )
        return
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), CONNECT_TIMEOUT_S)
    except (OSError, TimeoutError) as exc:
        reason = (
            f"cannot reach {host}:{port}: {exc.strerror or type(exc).__name__}"
            if isinstance(exc, OSError)
            else f"cannot reach {host}:{port}: no answer in {CONNECT_TIMEOUT_S:g}s"
        )
        await websocket.close(code=CLOSE_UNREACHABLE, reason=reason[:120])
        return
    log.info("ADB bridge open to %s:%d", host, port)

    async def page_to_device() -> None:
        writer.write(first)
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
        while data := await reader.read(READ_CHUNK):
            await websocket.send_bytes(data)

    pumps = [asyncio.ensure_future(page_to_device()), asyncio.ensure_future(device_to_page())]
    try:
        done, _pending = await asyncio.wait(pumps, return_when=asyncio.FIRST_COMPLETED)
        for task in done:
            if task.exception() is not None and not isinstance(
                task.exception(), (WebSocketDisconnect, ConnectionError, RuntimeError)
            ):
                log.warning("ADB bridge to %s:%d failed: %r", host, port, task.exception())
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
        log.info("ADB bridge to %s:%d closed", host, port)
