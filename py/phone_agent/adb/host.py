"""The host side of an ADB connection as a sans-I/O state machine: bytes in, packets and events out.

``AdbHostProtocol`` never touches a socket, a USB endpoint or a clock, so the same object runs in
CPython (tests, TCP) and in Pyodide (WebUSB, the server's bridge). Feed it ``receive_data`` /
``receive_eof``; send what ``data_to_send`` returns (each header and each payload is its own chunk,
as WebUSB needs); act on ``events_received``. Drivers (``client.AdbClient``) are thin loops around it.

The handshake follows adb: CNXN with ``host::features=…`` (only what is implemented here and in the
services), AUTH(TOKEN) answered with a signature per stored key, then the first key's public key once
(the phone shows "Allow USB debugging?": ``AuthPromptShown``), CNXN from the device → online, with the
smaller of both versions and max payloads. Checksums are sent and verified below 0x01000001; CNXN and
AUTH always carry one. Bytes before the device's CNXN may be stale (an earlier session): the parser
resyncs on a valid header and stream packets are ignored until online. STLS (wireless debugging's TLS)
ends the connection with a clear error.

Streams: OPEN(local, window) → OKAY(remote, local) or CLSE(0, local). Without delayed ack one WRTE is
in flight per stream until the device's OKAY. With ``delayed_ack`` listed by both sides, OPEN's arg1
is our receive window, the OKAY answering OPEN carries the device's window as an int32, and every OKAY
then carries an int32 of bytes consumed, added to the sender's budget (which may go negative by one
packet), as AOSP's sockets.cpp does. Every received WRTE is answered with OKAY once the application
has taken it (``acknowledge``), which is how a slow reader pushes back. CLSE(any, local) closes a
stream whether or not it was open yet — arg1 names it.
"""

from __future__ import annotations

import struct
from collections import deque
from dataclasses import dataclass, field
from enum import Enum

from phone_agent.adb.keys import AdbPrivateKey
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

# What this host implements (shell protocol, stat/list v2, mkdir on push, delayed ack). A feature is
# used only when the device lists it too.
HOST_FEATURES = ("shell_v2", "stat_v2", "ls_v2", "fixed_push_mkdir", "delayed_ack")
DEFAULT_KEY_NAME = "phone-agent@browser"
# AOSP's INITIAL_DELAYED_ACK_BYTES: the receive window we announce in OPEN's arg1.
DELAYED_ACK_WINDOW = 32 * 1024 * 1024
_INT32 = struct.Struct("<i")

TLS_UNSUPPORTED = "wireless-debugging TLS is not supported, use USB or `adb tcpip`"


class AdbConnectionError(Exception):
    """The connection cannot go on (its message says why and, where possible, what to do)."""


class AdbTlsUnsupportedError(AdbConnectionError):
    """The device asked for TLS (Android 11+ wireless debugging)."""


class ConnectionState(Enum):
    """Where the host is in the handshake."""

    IDLE = "idle"  # nothing sent yet
    CONNECTING = "connecting"  # CNXN sent, waiting for AUTH or CNXN
    AUTHENTICATING = "authenticating"  # a signature sent
    WAITING_FOR_USER = "waiting_for_user"  # public key sent: the phone shows "Allow USB debugging?"
    ONLINE = "online"
    CLOSED = "closed"


# The packets each state acts on; others are dropped (stale bytes from an earlier session must not
# touch streams). h11-style: the whole policy in one table.
ACCEPTED: dict[ConnectionState, frozenset[int]] = {
    ConnectionState.IDLE: frozenset(),
    ConnectionState.CONNECTING: frozenset({Command.CNXN, Command.AUTH, Command.STLS}),
    ConnectionState.AUTHENTICATING: frozenset({Command.CNXN, Command.AUTH, Command.STLS}),
    ConnectionState.WAITING_FOR_USER: frozenset({Command.CNXN, Command.AUTH, Command.STLS}),
    ConnectionState.ONLINE: frozenset({Command.CNXN, Command.OKAY, Command.WRTE, Command.CLSE}),
    ConnectionState.CLOSED: frozenset(),
}


# ----- events -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AuthPromptShown:
    """Our public key was sent: the user must accept "Allow USB debugging?" on the phone."""

    key_name: str


@dataclass(frozen=True, slots=True)
class Connected:
    """The device accepted us. ``features`` are those both sides list."""

    version: int
    max_payload: int
    banner: str
    device_features: frozenset[str]
    features: frozenset[str]
    properties: dict[str, str] = field(hash=False, compare=False)


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
    """The device closed the stream; ``refused`` when it never opened (no such service)."""

    local_id: int
    refused: bool


Event = AuthPromptShown | Connected | StreamOpened | StreamData | StreamClosed


# ----- streams --------------------------------------------------------------------------------------


class StreamState(Enum):
    OPENING = "opening"
    OPEN = "open"


@dataclass
class _Stream:
    local_id: int
    service: str
    state: StreamState = StreamState.OPENING
    remote_id: int = 0
    outgoing: bytearray = field(default_factory=bytearray)
    # Without delayed ack: may we send the next WRTE (our last one was answered)?
    ready: bool = True
    # With delayed ack: the send budget (bytes the device will still take), may go negative.
    budget: int = 0
    # Bytes of received WRTEs the application has not acknowledged yet, oldest first.
    unacked: deque[int] = field(default_factory=deque)
    partial_ack: int = 0
    close_when_flushed: bool = False


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


class AdbHostProtocol:
    """One host-side ADB connection. Call ``connect()`` first, then feed it what the device sends."""

    def __init__(
        self,
        keys: list[AdbPrivateKey] | tuple[AdbPrivateKey, ...] = (),
        *,
        key_name: str = DEFAULT_KEY_NAME,
        features: tuple[str, ...] | list[str] = HOST_FEATURES,
        version: int = VERSION,
        max_payload: int = MAX_PAYLOAD,
    ) -> None:
        if not VERSION_MIN <= version <= VERSION:
            raise ValueError(f"unsupported ADB version 0x{version:08x}")
        self.keys = list(keys)
        self.key_name = key_name
        self.host_features = tuple(features)
        self.state = ConnectionState.IDLE
        self.version = version
        self.max_payload = max_payload
        self.features: frozenset[str] = frozenset()
        self.device_banner = ""
        self.close_reason = ""
        self.bytes_received = 0
        self._requested_version = version
        self._requested_max_payload = max_payload
        self._parser = AdbPacketParser(max_payload=max_payload, resync=True)
        self._out: list[bytes] = []
        self._events: list[Event] = []
        self._streams: dict[int, _Stream] = {}
        self._next_id = 1
        self._key_index = 0
        self._public_key_sent = False

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

    def pending_output(self, local_id: int) -> int:
        """Bytes written to ``local_id`` and not yet sent as WRTEs (0 for a gone stream)."""
        stream = self._streams.get(local_id)
        return len(stream.outgoing) if stream else 0

    def is_open(self, local_id: int) -> bool:
        stream = self._streams.get(local_id)
        return stream is not None and stream.state is StreamState.OPEN

    # ----- the sans-I/O interface -------------------------------------------------------------------

    def connect(self) -> None:
        """Queue the CNXN that starts the handshake."""
        if self.state is not ConnectionState.IDLE:
            raise AdbConnectionError(f"connect() in state {self.state.value}")
        banner = f"host::features={','.join(self.host_features)}".encode()
        self._send(AdbPacket(Command.CNXN, self._requested_version, self._requested_max_payload, banner))
        self.state = ConnectionState.CONNECTING

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        """Feed bytes from the device. Raises ``AdbConnectionError`` when the connection cannot go on."""
        if self.state is ConnectionState.CLOSED:
            return
        self.bytes_received += len(data)
        try:
            self._parser.receive_data(data)
        except AdbProtocolError as exc:
            self._fail(f"the phone sent bytes that are not ADB: {exc}")
        for packet in self._parser.packets_received():
            self._handle(packet)
            if self.state is ConnectionState.CLOSED:
                break

    def receive_eof(self) -> None:
        """The transport ended. Open streams are reported closed; the connection is over."""
        if self.state is ConnectionState.CLOSED:
            return
        was = self.state
        self._close_all()
        self.state = ConnectionState.CLOSED
        if was is not ConnectionState.ONLINE:
            self.close_reason = f"the phone closed the connection during the handshake ({was.value})"
        else:
            self.close_reason = "the phone closed the connection"

    def data_to_send(self) -> list[bytes]:
        """Chunks to write to the transport in order: each header and each payload separately."""
        out, self._out = self._out, []
        return out

    def events_received(self) -> list[Event]:
        events, self._events = self._events, []
        return events

    def open(self, service: str) -> int:
        """Queue OPEN for ``service``; its local id (``StreamOpened`` or ``StreamClosed`` follows)."""
        self._require_online()
        if "\x00" in service or not service:
            raise ValueError(f"bad service name {service!r}")
        local_id = self._next_id
        self._next_id = self._next_id % 0x7FFFFFFF + 1
        window = DELAYED_ACK_WINDOW if self.delayed_ack else 0
        self._streams[local_id] = _Stream(local_id, service)
        self._send(AdbPacket(Command.OPEN, local_id, window, service.encode() + b"\x00"))
        return local_id

    def write(self, local_id: int, data: bytes | bytearray | memoryview) -> None:
        """Queue ``data`` on a stream; it leaves as WRTEs as flow control allows."""
        self._require_online()
        stream = self._streams.get(local_id)
        if stream is None or stream.close_when_flushed:
            raise AdbConnectionError(f"stream {local_id} is closed")
        stream.outgoing += data
        self._pump(stream)

    def acknowledge(self, local_id: int, size: int) -> None:
        """The application took ``size`` bytes of this stream's data: send the OKAYs they earn."""
        stream = self._streams.get(local_id)
        if stream is None or stream.state is not StreamState.OPEN or size <= 0:
            return
        if self.delayed_ack:
            self._send(AdbPacket(Command.OKAY, local_id, stream.remote_id, _INT32.pack(size)))
            return
        stream.partial_ack += size
        while stream.unacked and stream.partial_ack >= stream.unacked[0]:
            stream.partial_ack -= stream.unacked.popleft()
            self._send(AdbPacket(Command.OKAY, local_id, stream.remote_id))
        if not stream.unacked:
            stream.partial_ack = 0

    def close(self, local_id: int) -> None:
        """Close a stream from our side once what was written has been sent (no event follows)."""
        stream = self._streams.get(local_id)
        if stream is None:
            return
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

    def _send(self, packet: AdbPacket) -> None:
        handshake = packet.command in (Command.CNXN, Command.AUTH)
        self._out.append(packet.header(with_checksum=handshake or self.checksums))
        if packet.payload:
            self._out.append(bytes(packet.payload))

    def _require_online(self) -> None:
        if self.state is not ConnectionState.ONLINE:
            raise AdbConnectionError(
                self.close_reason or f"the connection is not online (state {self.state.value})"
            )

    def _fail(self, reason: str, error: type[AdbConnectionError] = AdbConnectionError) -> None:
        self.abort(reason)
        raise error(reason)

    def _handle(self, packet: AdbPacket) -> None:
        if packet.command not in ACCEPTED[self.state]:
            return
        if packet.command == Command.CNXN:
            self._on_connect(packet)
        elif packet.command == Command.AUTH:
            self._on_auth(packet)
        elif packet.command == Command.STLS:
            self._fail(TLS_UNSUPPORTED, AdbTlsUnsupportedError)
        elif packet.command == Command.OKAY:
            self._on_okay(packet)
        elif packet.command == Command.WRTE:
            self._on_write(packet)
        elif packet.command == Command.CLSE:
            self._on_close(packet)

    def _on_connect(self, packet: AdbPacket) -> None:
        if self.state is ConnectionState.ONLINE:
            # adbd restarted the transport: every stream is gone.
            self._fail("the phone restarted the ADB connection; connect again")
        self.version = max(VERSION_MIN, min(self._requested_version, packet.arg0))
        self.max_payload = min(self._requested_max_payload, packet.arg1)
        if self.max_payload < 256:
            self._fail(f"the phone's max payload of {packet.arg1} bytes is unusable")
        self._parser.verify_checksum = self.checksums
        self._parser.max_payload = self.max_payload
        self._parser.resync = False
        self.device_banner = packet.payload.split(b"\x00", 1)[0].decode("utf-8", "replace")
        properties, device_features = parse_banner(self.device_banner)
        self.features = frozenset(self.host_features) & device_features
        self.state = ConnectionState.ONLINE
        self._events.append(
            Connected(
                self.version, self.max_payload, self.device_banner, device_features, self.features, properties
            )
        )

    def _on_auth(self, packet: AdbPacket) -> None:
        if packet.arg0 != AuthType.TOKEN:
            return
        if self._key_index < len(self.keys):
            key = self.keys[self._key_index]
            self._key_index += 1
            self._send(AdbPacket(Command.AUTH, AuthType.SIGNATURE, 0, key.sign(packet.payload)))
            self.state = ConnectionState.AUTHENTICATING
        elif not self._public_key_sent:
            if not self.keys:
                self._fail("no ADB key to authenticate with")
            self._public_key_sent = True
            public = self.keys[0].public_key(self.key_name)
            self._send(AdbPacket(Command.AUTH, AuthType.RSAPUBLICKEY, 0, public.encode()))
            self.state = ConnectionState.WAITING_FOR_USER
            self._events.append(AuthPromptShown(self.key_name))
        # Another token after our public key: the user has not accepted (yet); keep waiting.

    def _stream_for(self, packet: AdbPacket) -> _Stream | None:
        stream = self._streams.get(packet.arg1)
        if stream is None:
            return None
        if stream.state is StreamState.OPEN and packet.arg0 not in (0, stream.remote_id):
            return None
        return stream

    def _on_okay(self, packet: AdbPacket) -> None:
        stream = self._stream_for(packet)
        if stream is None:
            # An OKAY for a stream we do not have: tell the device to close its end.
            self._send(AdbPacket(Command.CLSE, 0, packet.arg0))
            return
        credit = 0
        if self.delayed_ack:
            if len(packet.payload) != _INT32.size:
                self._fail(
                    f"OKAY without its delayed-ack int32 ({len(packet.payload)} bytes) on {stream.service}"
                )
            (credit,) = _INT32.unpack(packet.payload)
        if stream.state is StreamState.OPENING:
            if packet.arg0 == 0:
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
        if stream is None or stream.state is not StreamState.OPEN or not packet.payload:
            return
        if not self.delayed_ack:
            stream.unacked.append(len(packet.payload))
        self._events.append(StreamData(stream.local_id, packet.payload))

    def _on_close(self, packet: AdbPacket) -> None:
        stream = self._streams.get(packet.arg1)  # CLSE(0, id) closes too: match on arg1 only
        if stream is None:
            return
        if stream.state is StreamState.OPEN and packet.arg0 not in (0, stream.remote_id):
            return
        del self._streams[stream.local_id]
        self._events.append(StreamClosed(stream.local_id, refused=stream.state is StreamState.OPENING))

    def _pump(self, stream: _Stream) -> None:
        if stream.state is not StreamState.OPEN:
            return
        limit = self.max_payload
        outgoing = stream.outgoing
        while outgoing:
            if self.delayed_ack:
                if stream.budget <= 0:
                    break
            elif not stream.ready:
                break
            chunk = bytes(outgoing[:limit])
            del outgoing[:limit]
            self._send(AdbPacket(Command.WRTE, stream.local_id, stream.remote_id, chunk))
            if self.delayed_ack:
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


def describe_packet(packet: AdbPacket) -> str:
    """A one-line summary for logs."""
    return f"{command_name(packet.command)}({packet.arg0}, {packet.arg1}, {len(packet.payload)} bytes)"
