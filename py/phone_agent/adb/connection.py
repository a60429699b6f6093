"""One ADB connection, either end, as a sans-I/O state machine: bytes in, packets and events out.

This is the only place that knows the ADB connection protocol: the CNXN/AUTH/STLS handshake of each
side, the negotiated version (checksums sent and verified below 0x01000001; CNXN and AUTH always
carry one) and max payload, the banners and their features, stream ids (with wraparound), flow
control (one WRTE in flight, or delayed ack's byte budget) and acknowledgement. Like ``websockets``'
``Protocol``, ``AdbConnection`` takes a ``side``: ``Side.HOST`` is what ``adb`` and the page run
(``client.AdbClient`` drives it), ``Side.DEVICE`` is adbd (the simulated phone's
``sim/connection.py`` drives it). Drivers feed ``receive_data`` / ``receive_eof``, write each chunk
of ``data_to_send`` (every header and every payload is its own chunk, as WebUSB needs) and act on
``events_received``; the core never touches a socket, a USB endpoint or a clock.

Which packet does what in which state is the table ``TRANSITIONS`` below, h11-style: a packet the
table does not list for the current state is answered with a ``PacketIgnored`` event (stale bytes
from an earlier session must not touch streams), never dropped in silence. Authentication is a
pluggable strategy, as Tango's ``AdbAuthenticator``: ``HostAuthenticator`` answers tokens (signing
with stored keys, then offering a public key), ``DeviceAuthenticator`` checks signatures and offered
keys.

Streams: OPEN(local, window) → OKAY(remote, local) or CLSE(0, local). Without delayed ack one WRTE is
in flight per stream until the peer's OKAY. With ``delayed_ack`` listed by both sides, OPEN's arg1 is
the opener's receive window, the OKAY answering OPEN carries the other's window as an int32, and
every OKAY then carries an int32 of bytes consumed, added to the sender's budget (which may go
negative by one packet), as AOSP's sockets.cpp does. Every received WRTE is answered with OKAY once
the application has taken it (``acknowledge``), which is how a slow reader pushes back; a peer that
sends far beyond that loses the stream. CLSE(any, local) closes a stream whether or not it was open
yet — arg1 names it.
"""

from __future__ import annotations

import os
import struct
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Protocol

from phone_agent.adb.keys import TOKEN_SIZE, AdbKeyError, AdbPublicKey
from phone_agent.adb.packet import (
    MAX_PAYLOAD,
    VERSION,
    VERSION_MIN,
    VERSION_SKIP_CHECKSUM,
    AdbPacket,
    AdbPacketParser,
    AdbProtocolError,
    AuthType,
    Command,
    command_name,
)

# AOSP's INITIAL_DELAYED_ACK_BYTES: the receive window each side announces (OPEN's arg1, the int32
# of the OKAY answering OPEN).
DELAYED_ACK_WINDOW = 32 * 1024 * 1024
# Without delayed ack: WRTEs a peer may send on one stream without our OKAY before we close it.
MAX_UNACKED_WRITES = 16
# The smallest max payload a connection can work with.
MIN_MAX_PAYLOAD = 256
_INT32 = struct.Struct("<i")
_UINT32 = struct.Struct("<I")

TLS_UNSUPPORTED = "wireless-debugging TLS is not supported, use USB or `adb tcpip`"


class AdbConnectionError(Exception):
    """The connection cannot go on (its message says why and, where possible, what to do)."""


class AdbTlsUnsupportedError(AdbConnectionError):
    """The device asked for TLS (Android 11+ wireless debugging)."""


class Side(Enum):
    """Which end of the connection this is."""

    HOST = "host"
    DEVICE = "device"


class ConnectionState(Enum):
    """Where a connection is in the handshake (the same names on both sides)."""

    IDLE = "idle"  # host: nothing sent yet; device: waiting for the host's CNXN (adbd's "offline")
    CONNECTING = "connecting"  # host: CNXN sent, waiting for AUTH or CNXN
    AUTHENTICATING = "authenticating"  # host: a signature sent; device: a token sent
    WAITING_FOR_USER = "waiting_for_user"  # a public key sent (host) or received (device): the
    # phone shows "Allow USB debugging?"
    ONLINE = "online"
    CLOSED = "closed"


# ----- authentication strategies ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AuthAnswer:
    """What a host sends for a token: ``AuthType.SIGNATURE`` or ``AuthType.RSAPUBLICKEY`` and its payload."""

    type: AuthType
    payload: bytes


class HostAuthenticator(Protocol):
    """The host's side of AUTH: answers each TOKEN the device sends."""

    key_name: str

    def answer(self, token: bytes) -> AuthAnswer | None:
        """The next thing to try (a signature, then the public key once), or None when nothing is left."""
        ...


class DeviceAuthenticator(Protocol):
    """The device's side of AUTH: which hosts may connect."""

    @property
    def required(self) -> bool:
        """False: a host is online as soon as it connects (adbd with auth off)."""
        ...

    def verify(self, token: bytes, signature: bytes) -> AdbPublicKey | None:
        """The trusted key that made ``signature`` over ``token``, or None."""
        ...

    def offer(self, key: AdbPublicKey) -> bool:
        """The host offered ``key``: True to accept it now, False to wait for the user (``authorize``)."""
        ...


# ----- events -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AuthPromptShown:
    """Our public key was sent: the user must accept "Allow USB debugging?" on the phone."""

    key_name: str


@dataclass(frozen=True, slots=True)
class Connected:
    """The handshake is done. ``features`` are those both sides list; ``properties`` the peer's banner's."""

    version: int
    max_payload: int
    banner: str
    peer_features: frozenset[str]
    features: frozenset[str]
    properties: dict[str, str] = field(hash=False, compare=False)


@dataclass(frozen=True, slots=True)
class StreamRequested:
    """(Device) the host asks for ``service``: answer with ``accept(remote_id)`` or ``refuse(remote_id)``."""

    remote_id: int
    service: str


@dataclass(frozen=True, slots=True)
class StreamOpened:
    local_id: int


@dataclass(frozen=True, slots=True)
class StreamData:
    """Bytes for a stream; answer them with ``acknowledge(local_id, len(data))`` once taken."""

    local_id: int
    data: bytes


@dataclass(frozen=True, slots=True)
class StreamClosed:
    """The peer closed the stream (or the connection went); ``refused`` when it never opened."""

    local_id: int
    refused: bool


@dataclass(frozen=True, slots=True)
class ConnectionReset:
    """(Device) the host started over (a new CNXN, an unknown AUTH type): every stream is gone."""

    reason: str


@dataclass(frozen=True, slots=True)
class PacketIgnored:
    """A packet that had no effect here, and why (wrong state, unknown stream, bad payload…)."""

    command: int
    arg0: int
    arg1: int
    reason: str


Event = (
    AuthPromptShown
    | Connected
    | StreamRequested
    | StreamOpened
    | StreamData
    | StreamClosed
    | ConnectionReset
    | PacketIgnored
)


# ----- banners ------------------------------------------------------------------------------------


def parse_banner(banner: str) -> tuple[dict[str, str], frozenset[str]]:
    """``device::ro.product.name=x;…;features=a,b`` → (properties, features)."""
    _, _, rest = banner.partition("::")
    properties: dict[str, str] = {}
    features: frozenset[str] = frozenset()
    for item in rest.split(";"):
        key, sep, value = item.partition("=")
        if not sep:
            continue
        if key == "features":
            features = frozenset(f for f in value.split(",") if f)
        else:
            properties[key] = value
    return properties, features


def make_banner(
    side: Side, features: tuple[str, ...] | list[str], properties: dict[str, str] | None = None
) -> str:
    """``host::features=a,b`` or ``device::k=v;…;features=a,b`` (properties in the given order)."""
    props = "".join(f"{key}={value};" for key, value in (properties or {}).items())
    return f"{side.value}::{props}features={','.join(features)}"


# ----- streams --------------------------------------------------------------------------------------


class OutgoingBytes:
    """A stream's unsent bytes as a queue of immutable pieces: ``take(n)`` slices a WRTE's payload
    without copying when one piece holds it (a 32 MiB write leaves as 1 MiB views of itself)."""

    __slots__ = ("_pieces", "_size")

    def __init__(self) -> None:
        self._pieces: deque[bytes | memoryview] = deque()
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def append(self, data: bytes | bytearray | memoryview) -> None:
        if not data:
            return
        # The caller may reuse a mutable buffer once write() returns: keep a copy of those only.
        piece = memoryview(data) if isinstance(data, bytes) else memoryview(bytes(data))
        self._pieces.append(piece)
        self._size += len(piece)

    def take(self, limit: int) -> bytes | memoryview:
        """Up to ``limit`` bytes from the front."""
        first = self._pieces[0]
        if len(first) > limit:
            self._pieces[0] = first[limit:]
            chunk: bytes | memoryview = first[:limit]
        elif len(first) == limit or len(self._pieces) == 1:
            chunk = self._pieces.popleft()
        else:  # small pieces: join up to a full payload (one copy of small writes only)
            parts: list[bytes | memoryview] = []
            room = limit
            while self._pieces and room:
                piece = self._pieces[0]
                if len(piece) > room:
                    parts.append(piece[:room])
                    self._pieces[0] = piece[room:]
                    room = 0
                else:
                    parts.append(self._pieces.popleft())
                    room -= len(piece)
            chunk = b"".join(parts)
        self._size -= len(chunk)
        return chunk

    def clear(self) -> None:
        self._pieces.clear()
        self._size = 0


class StreamState(Enum):
    OPENING = "opening"
    OPEN = "open"


@dataclass
class _Stream:
    local_id: int
    service: str
    state: StreamState = StreamState.OPENING
    remote_id: int = 0
    # Written and not yet sent: immutable pieces, sliced without copying into WRTE payloads.
    outgoing: OutgoingBytes = field(default_factory=lambda: OutgoingBytes())
    # Without delayed ack: may we send the next WRTE (our last one was answered)?
    ready: bool = True
    # With delayed ack: the send budget (bytes the peer will still take), may go negative.
    budget: int = 0
    # Sizes of received WRTEs the application has not acknowledged yet, oldest first.
    unacked: deque[int] = field(default_factory=deque)
    unacked_bytes: int = 0
    partial_ack: int = 0
    close_when_flushed: bool = False


# ----- the state machine ----------------------------------------------------------------------------

_HANDSHAKING = (ConnectionState.CONNECTING, ConnectionState.AUTHENTICATING, ConnectionState.WAITING_FOR_USER)
_STREAM_COMMANDS = (Command.OKAY, Command.WRTE, Command.CLSE)


def _table() -> dict[tuple[Side, ConnectionState, int], str]:
    table: dict[tuple[Side, ConnectionState, int], str] = {}
    host, device = Side.HOST, Side.DEVICE
    for state in _HANDSHAKING:
        table[host, state, Command.CNXN] = "_on_connect"
        table[host, state, Command.AUTH] = "_on_auth_token"
        table[host, state, Command.STLS] = "_on_tls"
    table[host, ConnectionState.ONLINE, Command.CNXN] = "_on_restart"
    # adbd takes a CNXN in any state as the start of a new session, and AUTH whenever it may come.
    for state in (ConnectionState.IDLE, ConnectionState.AUTHENTICATING, ConnectionState.WAITING_FOR_USER):
        table[device, state, Command.CNXN] = "_on_connect"
    table[device, ConnectionState.ONLINE, Command.CNXN] = "_on_connect"
    for state in (ConnectionState.AUTHENTICATING, ConnectionState.WAITING_FOR_USER, ConnectionState.ONLINE):
        table[device, state, Command.AUTH] = "_on_auth_answer"
    table[device, ConnectionState.ONLINE, Command.OPEN] = "_on_open"
    for side in Side:
        table[side, ConnectionState.ONLINE, Command.OKAY] = "_on_okay"
        table[side, ConnectionState.ONLINE, Command.WRTE] = "_on_write"
        table[side, ConnectionState.ONLINE, Command.CLSE] = "_on_close"
    return table


# (side, state, command) → the handler. Anything else is answered with ``PacketIgnored``.
TRANSITIONS: dict[tuple[Side, ConnectionState, int], str] = _table()


class AdbConnection:
    """One ADB connection from ``side``'s point of view.

    A host calls ``connect()`` first; a device waits for the host's CNXN. ``features`` are what this
    end implements (a feature is used only when the peer lists it too); ``properties`` go into a
    device's banner.
    """

    def __init__(
        self,
        side: Side,
        *,
        features: tuple[str, ...] | list[str] = (),
        properties: dict[str, str] | None = None,
        host_auth: HostAuthenticator | None = None,
        device_auth: DeviceAuthenticator | None = None,
        version: int = VERSION,
        max_payload: int = MAX_PAYLOAD,
        token_source: Callable[[int], bytes] = os.urandom,
    ) -> None:
        if not VERSION_MIN <= version <= VERSION:
            raise ValueError(f"unsupported ADB version 0x{version:08x}")
        self.side = side
        self.local_features = tuple(features)
        self.banner = make_banner(side, self.local_features, properties)
        self.host_auth = host_auth
        self.device_auth = device_auth
        self.state = ConnectionState.IDLE
        # Until the peer's CNXN: a host assumes what it asks for, a device the oldest version.
        self.version = version if side is Side.HOST else VERSION_MIN
        self.max_payload = max_payload
        self.features: frozenset[str] = frozenset()
        self.peer_features: frozenset[str] = frozenset()
        self.peer_banner = ""
        self.public_key: AdbPublicKey | None = None  # device: the key the host was accepted with
        self.close_reason = ""
        self.bytes_received = 0
        self._requested_version = version
        self._requested_max_payload = max_payload
        self._token_source = token_source
        self._token: bytes | None = None
        # A host resyncs on stale bytes from an earlier session until the device's CNXN.
        self._parser = AdbPacketParser(max_payload=max_payload, resync=side is Side.HOST)
        self._out: list[tuple[bytes, bytes]] = []  # (header, payload) of each packet to send
        self._events: list[Event] = []
        self._streams: dict[int, _Stream] = {}
        self._requests: dict[int, tuple[str, int]] = {}  # device: remote id → (service, window)
        self._next_id = 1

    # ----- properties -----------------------------------------------------------------------------

    @property
    def delayed_ack(self) -> bool:
        return "delayed_ack" in self.features

    @property
    def checksums(self) -> bool:
        """Whether stream packets carry (and must have) a checksum: version below 0x01000001."""
        return self.version < VERSION_SKIP_CHECKSUM

    def stream_ids(self) -> list[int]:
        return list(self._streams)

    def stream_services(self) -> list[str]:
        return [stream.service for stream in self._streams.values()]

    def pending_output(self, local_id: int) -> int:
        """Bytes written to ``local_id`` and not yet sent as WRTEs (0 for a gone stream)."""
        stream = self._streams.get(local_id)
        return len(stream.outgoing) if stream else 0

    def awaiting_ack(self, local_id: int) -> bool:
        """Without delayed ack: our last WRTE on ``local_id`` has not been answered yet."""
        stream = self._streams.get(local_id)
        return stream is not None and not self.delayed_ack and not stream.ready

    @property
    def bytes_expected(self) -> int:
        """Bytes that complete the header or payload being received: a USB read asks for exactly this."""
        return self._parser.bytes_expected

    def is_open(self, local_id: int) -> bool:
        stream = self._streams.get(local_id)
        return stream is not None and stream.state is StreamState.OPEN

    # ----- the sans-I/O interface -------------------------------------------------------------------

    def connect(self) -> None:
        """(Host) queue the CNXN that starts the handshake."""
        if self.side is not Side.HOST or self.state is not ConnectionState.IDLE:
            raise AdbConnectionError(f"connect() in state {self.state.value}")
        self._send(
            AdbPacket(Command.CNXN, self._requested_version, self._requested_max_payload, self._banner())
        )
        self.state = ConnectionState.CONNECTING

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        """Feed bytes from the peer. Raises ``AdbConnectionError`` when the connection cannot go on."""
        if self.state is ConnectionState.CLOSED:
            return
        self.bytes_received += len(data)
        try:
            self._parser.receive_data(data)
        except AdbProtocolError as exc:
            self._fail(
                f"the phone sent bytes that are not ADB: {exc}" if self.side is Side.HOST else str(exc)
            )
        for packet in self._parser.packets_received():
            handler = TRANSITIONS.get((self.side, self.state, packet.command))
            if handler is None:
                self._ignore(packet, f"{command_name(packet.command)} in state {self.state.value}")
            else:
                getattr(self, handler)(packet)
            if self.state is ConnectionState.CLOSED:
                break

    def receive_eof(self) -> None:
        """The transport ended. Open streams are reported closed; the connection is over.

        Raises ``AdbConnectionError`` when the peer stopped in the middle of a message.
        """
        if self.state is ConnectionState.CLOSED:
            return
        was = self.state
        truncated = ""
        try:
            self._parser.receive_eof()
        except AdbProtocolError as exc:
            truncated = str(exc)
        self._close_all()
        self.state = ConnectionState.CLOSED
        if self.side is Side.DEVICE:
            self.close_reason = truncated or "peer closed"
        elif was is not ConnectionState.ONLINE:
            self.close_reason = f"the phone closed the connection during the handshake ({was.value})"
        else:
            self.close_reason = "the phone closed the connection"
        if truncated and self.side is Side.DEVICE:
            raise AdbConnectionError(truncated)

    def data_to_send(self, *, joined: bool = False) -> list[bytes]:
        """Chunks to write to the transport in order: each header and each payload separately (as USB
        needs), or with ``joined`` each packet as one chunk (half the messages on a WebSocket)."""
        out, self._out = self._out, []
        if joined:
            return [header + payload if payload else header for header, payload in out]
        return [chunk for header, payload in out for chunk in ((header, payload) if payload else (header,))]

    def events_received(self) -> list[Event]:
        events, self._events = self._events, []
        return events

    def open(self, service: str) -> int:
        """(Host) queue OPEN for ``service``; its local id (``StreamOpened`` or ``StreamClosed`` follows)."""
        self._require_online()
        if "\x00" in service or not service:
            raise ValueError(f"bad service name {service!r}")
        local_id = self._new_id()
        window = DELAYED_ACK_WINDOW if self.delayed_ack else 0
        self._streams[local_id] = _Stream(local_id, service)
        self._send(AdbPacket(Command.OPEN, local_id, window, service.encode() + b"\x00"))
        return local_id

    def accept(self, remote_id: int) -> int | None:
        """(Device) serve the stream ``StreamRequested`` announced; its local id (None if it went)."""
        request = self._requests.pop(remote_id, None)
        if request is None or self.state is not ConnectionState.ONLINE:
            return None
        service, window = request
        local_id = self._new_id()
        stream = _Stream(local_id, service, StreamState.OPEN, remote_id, budget=window)
        self._streams[local_id] = stream
        credit = _UINT32.pack(DELAYED_ACK_WINDOW) if self.delayed_ack else b""
        self._send(AdbPacket(Command.OKAY, local_id, remote_id, credit))
        return local_id

    def refuse(self, remote_id: int) -> None:
        """(Device) there is no such service: CLSE(0, remote)."""
        self._requests.pop(remote_id, None)
        self._send(AdbPacket(Command.CLSE, 0, remote_id))

    def authorize(self) -> None:
        """(Device) the user accepted the host's key: go online."""
        if self.side is Side.DEVICE and self.state in (
            ConnectionState.WAITING_FOR_USER,
            ConnectionState.AUTHENTICATING,
        ):
            self._go_online()

    def write(self, local_id: int, data: bytes | bytearray | memoryview) -> None:
        """Queue ``data`` on a stream; it leaves as WRTEs as flow control allows."""
        self._require_online()
        stream = self._streams.get(local_id)
        if stream is None or stream.close_when_flushed:
            raise AdbConnectionError(f"stream {local_id} is closed")
        stream.outgoing.append(data)
        self._pump(stream)

    def acknowledge(self, local_id: int, size: int) -> None:
        """The application took ``size`` bytes of this stream's data: send the OKAYs they earn."""
        stream = self._streams.get(local_id)
        if stream is None or stream.state is not StreamState.OPEN or size <= 0:
            return
        stream.unacked_bytes = max(0, stream.unacked_bytes - size)
        if self.delayed_ack:
            self._send(AdbPacket(Command.OKAY, local_id, stream.remote_id, _INT32.pack(size)))
            return
        stream.partial_ack += size
        while stream.unacked and stream.partial_ack >= stream.unacked[0]:
            stream.partial_ack -= stream.unacked.popleft()
            self._send(AdbPacket(Command.OKAY, local_id, stream.remote_id))
        if not stream.unacked:
            stream.partial_ack = 0

    def close(self, local_id: int, *, discard: bool = False) -> None:
        """Close a stream from our side once what was written has been sent (no event follows).

        ``discard`` drops what has not been sent yet and closes at once.
        """
        stream = self._streams.get(local_id)
        if stream is None:
            return
        if discard:
            stream.outgoing.clear()
        stream.close_when_flushed = True
        if stream.state is StreamState.OPEN and not stream.outgoing:
            self._send_close(stream)

    def abort(self, reason: str) -> None:
        """Give up on the connection (a timeout in the driver, say); nothing more is sent."""
        if self.state is not ConnectionState.CLOSED:
            self._close_all()
            self.state = ConnectionState.CLOSED
            self.close_reason = reason

    # ----- internals --------------------------------------------------------------------------------

    def _banner(self) -> bytes:
        # adbd's CNXN banner has no NUL (adb's host and device both accept either).
        return self.banner.encode()

    def _new_id(self) -> int:
        local_id = self._next_id
        self._next_id = self._next_id % 0x7FFFFFFF + 1
        return local_id

    def _send(self, packet: AdbPacket) -> None:
        handshake = packet.command in (Command.CNXN, Command.AUTH)
        self._out.append((packet.header(with_checksum=handshake or self.checksums), packet.payload))

    def _require_online(self) -> None:
        if self.state is not ConnectionState.ONLINE:
            raise AdbConnectionError(
                self.close_reason or f"the connection is not online (state {self.state.value})"
            )

    def _fail(self, reason: str, error: type[AdbConnectionError] = AdbConnectionError) -> None:
        self.abort(reason)
        raise error(reason)

    def _ignore(self, packet: AdbPacket, reason: str) -> None:
        self._events.append(PacketIgnored(packet.command, packet.arg0, packet.arg1, reason))

    # ----- handshake: host

    def _on_connect(self, packet: AdbPacket) -> None:
        if self.side is Side.DEVICE and self.state is not ConnectionState.IDLE:
            self._reset("the host connected again")  # a new CNXN starts the transport over, as adbd does
        self.version = max(VERSION_MIN, min(self._requested_version, packet.arg0))
        if self.side is Side.HOST:
            self.max_payload = min(self._requested_max_payload, packet.arg1)
            if self.max_payload < MIN_MAX_PAYLOAD:
                self._fail(f"the phone's max payload of {packet.arg1} bytes is unusable")
            self._parser.resync = False
        else:
            self.max_payload = max(MIN_MAX_PAYLOAD, min(packet.arg1, self._requested_max_payload))
        self._parser.verify_checksum = self.checksums
        self._parser.max_payload = self.max_payload
        self.peer_banner = packet.payload.split(b"\x00", 1)[0].decode("utf-8", "replace")
        properties, self.peer_features = parse_banner(self.peer_banner)
        self.features = frozenset(self.local_features) & self.peer_features
        if self.side is Side.HOST:
            self._online(properties)
        elif self.device_auth is None or not self.device_auth.required:
            self._go_online()
        else:
            self.state = ConnectionState.AUTHENTICATING
            self._send_token()

    def _on_restart(self, packet: AdbPacket) -> None:
        # adbd restarted the transport: every stream is gone.
        self._fail("the phone restarted the ADB connection; connect again")

    def _on_tls(self, packet: AdbPacket) -> None:
        self._fail(TLS_UNSUPPORTED, AdbTlsUnsupportedError)

    def _on_auth_token(self, packet: AdbPacket) -> None:
        if packet.arg0 != AuthType.TOKEN:
            self._ignore(packet, f"AUTH type {packet.arg0} from a device")
            return
        answer = self.host_auth.answer(packet.payload) if self.host_auth is not None else None
        if answer is None:
            if self.state is ConnectionState.WAITING_FOR_USER:
                # Another token after our public key: the user has not accepted (yet); keep waiting.
                self._ignore(packet, "still waiting for the user to accept our key")
                return
            self._fail("no ADB key to authenticate with")
            return
        self._send(AdbPacket(Command.AUTH, answer.type, 0, answer.payload))
        if answer.type == AuthType.RSAPUBLICKEY:
            self.state = ConnectionState.WAITING_FOR_USER
            assert self.host_auth is not None
            self._events.append(AuthPromptShown(self.host_auth.key_name))
        else:
            self.state = ConnectionState.AUTHENTICATING

    def _online(self, properties: dict[str, str]) -> None:
        self.state = ConnectionState.ONLINE
        self._events.append(
            Connected(
                self.version,
                self.max_payload,
                self.peer_banner,
                self.peer_features,
                self.features,
                properties,
            )
        )

    # ----- handshake: device

    def _send_token(self) -> None:
        self._token = self._token_source(TOKEN_SIZE)
        self._send(AdbPacket(Command.AUTH, AuthType.TOKEN, 0, self._token))

    def _on_auth_answer(self, packet: AdbPacket) -> None:
        auth = self.device_auth
        if packet.arg0 not in (AuthType.SIGNATURE, AuthType.RSAPUBLICKEY):
            # adbd takes an unknown AUTH type as the end of the session: offline until a new CNXN.
            self._reset(f"AUTH type {packet.arg0}")
            self.state = ConnectionState.IDLE
            self._token = None
            return
        if self.state is ConnectionState.ONLINE or auth is None:
            self._ignore(packet, "already authorized")
        elif packet.arg0 == AuthType.SIGNATURE:
            if self._token is None:
                self._ignore(packet, "a signature without a token")
                return
            token, self._token = self._token, None
            key = auth.verify(token, packet.payload)
            if key is not None:
                self.public_key = key
                self._go_online()
            else:
                self._send_token()  # a wrong signature gets a new token
        else:
            try:
                key = AdbPublicKey.decode(packet.payload)
            except AdbKeyError as exc:
                self._ignore(packet, f"unusable public key: {exc}")
                return
            self.public_key = key
            if auth.offer(key):
                self._go_online()
            else:
                self.state = ConnectionState.WAITING_FOR_USER

    def _go_online(self) -> None:
        self._token = None
        # Like adbd's send_connect: our highest version (the host takes the minimum itself) and the
        # negotiated max payload.
        self._send(AdbPacket(Command.CNXN, VERSION, self.max_payload, self._banner()))
        properties, _ = parse_banner(self.peer_banner)
        self._online(properties)

    def _reset(self, reason: str) -> None:
        self._close_all()
        self._requests.clear()
        self._events.append(ConnectionReset(reason))

    # ----- streams

    def _on_open(self, packet: AdbPacket) -> None:
        remote_id = packet.arg0
        if remote_id == 0:
            self._ignore(packet, "OPEN with local id 0")
            return
        if self.delayed_ack != bool(packet.arg1):
            # arg1 is the host's delayed-ack window: non-zero exactly when both sides list
            # delayed_ack; adbd refuses the OPEN otherwise.
            self._send(AdbPacket(Command.CLSE, 0, remote_id))
            return
        service = packet.payload.split(b"\x00", 1)[0].decode("utf-8", "replace")
        self._requests[remote_id] = (service, packet.arg1 if self.delayed_ack else 0)
        self._events.append(StreamRequested(remote_id, service))

    def _stream_for(self, packet: AdbPacket) -> _Stream | None:
        stream = self._streams.get(packet.arg1)
        if stream is None:
            return None
        if stream.state is StreamState.OPEN and packet.arg0 not in (0, stream.remote_id):
            return None
        return stream

    def _on_okay(self, packet: AdbPacket) -> None:
        device = self.side is Side.DEVICE
        if device and (packet.arg0 == 0 or packet.arg1 == 0):
            self._ignore(packet, "OKAY with a zero id")
            return
        stream = self._stream_for(packet)
        if stream is None:
            # An OKAY for a stream we do not have: tell the peer to close its end.
            self._send(AdbPacket(Command.CLSE, packet.arg1 if device else 0, packet.arg0))
            return
        credit = 0
        if len(packet.payload) != (_INT32.size if self.delayed_ack else 0):
            if not device and self.delayed_ack:
                self._fail(
                    f"OKAY without its delayed-ack int32 ({len(packet.payload)} bytes) on {stream.service}"
                )
            if device:
                # adbd ignores an OKAY whose payload does not match its delayed-ack mode.
                self._ignore(packet, f"OKAY with a {len(packet.payload)}-byte payload")
                return
        elif self.delayed_ack:
            (credit,) = _INT32.unpack(packet.payload)
        if stream.state is StreamState.OPENING:
            if packet.arg0 == 0:
                self._ignore(packet, "OKAY(0, id) for a stream being opened")
                return
            stream.remote_id = packet.arg0
            stream.state = StreamState.OPEN
            stream.budget = credit
            self._events.append(StreamOpened(stream.local_id))
            if stream.close_when_flushed and not stream.outgoing:
                self._send_close(stream)
                return
        elif self.delayed_ack:
            stream.budget += credit
        else:
            stream.ready = True
        self._pump(stream)

    def _on_write(self, packet: AdbPacket) -> None:
        stream = self._stream_for(packet)
        if stream is None:
            if self.side is Side.DEVICE and packet.arg0 != 0:
                # adbd drops such a WRTE silently; we also tell the host its stream has no peer here,
                # so a confused host learns it at once instead of waiting for an OKAY (harmless to a
                # correct host: it ignores a CLSE for a socket it has already closed).
                self._send(AdbPacket(Command.CLSE, 0, packet.arg0))
            else:
                self._ignore(packet, "WRTE for no open stream")
            return
        if stream.state is not StreamState.OPEN or not packet.payload:
            self._ignore(packet, "WRTE before OKAY" if packet.payload else "empty WRTE")
            return
        size = len(packet.payload)
        stream.unacked.append(size)
        stream.unacked_bytes += size
        if (
            stream.unacked_bytes > DELAYED_ACK_WINDOW
            if self.delayed_ack
            else len(stream.unacked) > MAX_UNACKED_WRITES
        ):
            self._ignore(packet, f"{stream.service} ignores flow control: stream closed")
            self._events.append(StreamClosed(stream.local_id, refused=False))
            self._send_close(stream)
            return
        if self.delayed_ack:
            stream.unacked.clear()  # only the byte count matters
        self._events.append(StreamData(stream.local_id, packet.payload))

    def _on_close(self, packet: AdbPacket) -> None:
        stream = self._streams.get(packet.arg1)  # CLSE(0, id) closes too: match on arg1 only
        if stream is None or (stream.state is StreamState.OPEN and packet.arg0 not in (0, stream.remote_id)):
            self._ignore(packet, "CLSE for no such stream")
            return
        if self.side is Side.DEVICE:
            # adbd answers a CLSE with its own (hosts such as adb-shell wait for it).
            self._send_close(stream)
        else:
            del self._streams[stream.local_id]
        self._events.append(StreamClosed(stream.local_id, refused=stream.state is StreamState.OPENING))

    def _pump(self, stream: _Stream) -> None:
        if stream.state is not StreamState.OPEN:
            return
        limit = self.max_payload
        outgoing = stream.outgoing
        delayed = self.delayed_ack
        while outgoing:
            if delayed:
                if stream.budget <= 0:
                    break
            elif not stream.ready:
                break
            chunk = outgoing.take(limit)
            self._send(AdbPacket(Command.WRTE, stream.local_id, stream.remote_id, chunk))
            if delayed:
                stream.budget -= len(chunk)
            else:
                stream.ready = False
        if not outgoing and stream.close_when_flushed:
            self._send_close(stream)

    def _send_close(self, stream: _Stream) -> None:
        if self._streams.pop(stream.local_id, None) is not None:
            self._send(AdbPacket(Command.CLSE, stream.local_id, stream.remote_id))

    def _close_all(self) -> None:
        for stream in list(self._streams.values()):
            self._events.append(StreamClosed(stream.local_id, refused=stream.state is StreamState.OPENING))
        self._streams.clear()
