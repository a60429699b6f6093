"""One ADB connection, either end, as a sans-I/O state machine: bytes in, packets and events out.

With its parts, this is the only place that knows the ADB connection protocol: the CNXN/AUTH/STLS
handshake of each side, the negotiated version (checksums sent and verified below 0x01000001; CNXN
and AUTH always carry one) and max payload, the banners and their features, and (in ``streams.py``)
stream ids, flow control and acknowledgement. Like ``websockets``'
``Protocol``, ``AdbConnection`` takes a ``side``: ``Side.HOST`` is what ``adb`` and the page run
(``client.AdbClient`` drives it), ``Side.DEVICE`` is adbd (the simulated phone's
``sim/connection.py`` drives it). Drivers feed ``receive_data`` / ``receive_eof``, write each chunk
of ``data_to_send`` (every header and every payload is its own chunk, as WebUSB needs) and act on
``events_received``; the core never touches a socket, a USB endpoint or a clock.

Which packet does what in which state is the table ``TRANSITIONS`` at the end, h11-style, whose
entries are the connection's own methods: a packet the table does not list for the current state is
answered with a ``PacketIgnored`` event (stale bytes from an earlier session must not touch streams),
never dropped in silence. The connection ties three
parts together, kept apart as Tango keeps its packet, dispatcher and authenticator: what it reports
is ``events.py``; authentication is a pluggable strategy (``auth.py``: a host's ``HostAuthenticator``
answers tokens, a device's ``DeviceAuthenticator`` checks signatures and offered keys); streams and
their flow control, once online, are ``streams.Streams``. This module keeps the handshake of both
sides, the negotiated settings, the banners and the table.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from enum import Enum
from typing import NoReturn

from phone_agent.adb.auth import DeviceAuthenticator, HostAuthenticator
from phone_agent.adb.events import AuthPromptShown, Connected, ConnectionReset, Event, PacketIgnored
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
from phone_agent.adb.streams import Streams

# The smallest max payload a connection can work with.
MIN_MAX_PAYLOAD = 256

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


# ----- the state machine ----------------------------------------------------------------------------

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
        self._events: list[Event] = []  # shared with the streams: emptied in place, never replaced
        self._streams = Streams(
            device=side is Side.DEVICE, send=self._send, emit=self._events.append, fail=self._fail
        )

    # ----- properties -----------------------------------------------------------------------------

    @property
    def delayed_ack(self) -> bool:
        return "delayed_ack" in self.features

    @property
    def checksums(self) -> bool:
        """Whether stream packets carry (and must have) a checksum: version below 0x01000001."""
        return self.version < VERSION_SKIP_CHECKSUM

    def stream_ids(self) -> list[int]:
        return self._streams.ids()

    def stream_services(self) -> list[str]:
        return self._streams.services()

    def pending_output(self, local_id: int) -> int:
        """Bytes written to ``local_id`` and not yet sent as WRTEs (0 for a gone stream)."""
        return self._streams.pending_output(local_id)

    def awaiting_ack(self, local_id: int) -> bool:
        """Without delayed ack: our last WRTE on ``local_id`` has not been answered yet."""
        return self._streams.awaiting_ack(local_id)

    @property
    def bytes_expected(self) -> int:
        """Bytes that complete the header or payload being received: a USB read asks for exactly this."""
        return self._parser.bytes_expected

    def is_open(self, local_id: int) -> bool:
        return self._streams.is_open(local_id)

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
                handler(self, packet)
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
        self._streams.close_all()
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
        events = self._events.copy()
        self._events.clear()
        return events

    def open(self, service: str) -> int:
        """(Host) queue OPEN for ``service``; its local id (``StreamOpened`` or ``StreamClosed`` follows)."""
        self._require_online()
        if "\x00" in service or not service:
            raise ValueError(f"bad service name {service!r}")
        return self._streams.open(service)

    def accept(self, remote_id: int) -> int | None:
        """(Device) serve the stream ``StreamRequested`` announced; its local id (None if it went)."""
        if self.state is not ConnectionState.ONLINE:
            self._streams.forget_request(remote_id)
            return None
        return self._streams.accept(remote_id)

    def refuse(self, remote_id: int) -> None:
        """(Device) there is no such service: CLSE(0, remote)."""
        self._streams.refuse(remote_id)

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
        if not self._streams.write(local_id, data):
            raise AdbConnectionError(f"stream {local_id} is closed")

    def acknowledge(self, local_id: int, size: int) -> None:
        """The application took ``size`` bytes of this stream's data: send the OKAYs they earn."""
        self._streams.acknowledge(local_id, size)

    def close(self, local_id: int, *, discard: bool = False) -> None:
        """Close a stream from our side once what was written has been sent (no event follows).

        ``discard`` drops what has not been sent yet and closes at once.
        """
        self._streams.close(local_id, discard=discard)

    def abort(self, reason: str) -> None:
        """Give up on the connection (a timeout in the driver, say); nothing more is sent."""
        if self.state is not ConnectionState.CLOSED:
            self._streams.close_all()
            self.state = ConnectionState.CLOSED
            self.close_reason = reason

    # ----- internals --------------------------------------------------------------------------------

    def _banner(self) -> bytes:
        # adbd's CNXN banner has no NUL (adb's host and device both accept either).
        return self.banner.encode()

    def _send(self, packet: AdbPacket) -> None:
        handshake = packet.command in (Command.CNXN, Command.AUTH)
        self._out.append((packet.header(with_checksum=handshake or self.checksums), packet.payload))

    def _require_online(self) -> None:
        if self.state is not ConnectionState.ONLINE:
            raise AdbConnectionError(
                self.close_reason or f"the connection is not online (state {self.state.value})"
            )

    def _fail(self, reason: str, error: type[AdbConnectionError] = AdbConnectionError) -> NoReturn:
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
        # The handshake settled what the streams use; none is open yet.
        self._streams.delayed_ack = self.delayed_ack
        self._streams.max_payload = self.max_payload
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
        self._streams.reset()
        self._events.append(ConnectionReset(reason))

    # ----- streams: the table's stream packets go to ``Streams``

    def _on_open(self, packet: AdbPacket) -> None:
        self._streams.on_open(packet)

    def _on_okay(self, packet: AdbPacket) -> None:
        self._streams.on_okay(packet)

    def _on_write(self, packet: AdbPacket) -> None:
        self._streams.on_write(packet)

    def _on_close(self, packet: AdbPacket) -> None:
        self._streams.on_close(packet)


# ----- the state machine ----------------------------------------------------------------------------

# What the table's entries are: a method of ``AdbConnection`` taking the packet.
Handler = Callable[[AdbConnection, AdbPacket], None]

_HANDSHAKING = (ConnectionState.CONNECTING, ConnectionState.AUTHENTICATING, ConnectionState.WAITING_FOR_USER)


def _table() -> dict[tuple[Side, ConnectionState, int], Handler]:
    table: dict[tuple[Side, ConnectionState, int], Handler] = {}
    host, device, online = Side.HOST, Side.DEVICE, ConnectionState.ONLINE
    for state in _HANDSHAKING:
        table[host, state, Command.CNXN] = AdbConnection._on_connect
        table[host, state, Command.AUTH] = AdbConnection._on_auth_token
        table[host, state, Command.STLS] = AdbConnection._on_tls
    table[host, online, Command.CNXN] = AdbConnection._on_restart
    # adbd takes a CNXN in any state as the start of a new session, and AUTH whenever it may come.
    for state in (ConnectionState.IDLE, ConnectionState.AUTHENTICATING, ConnectionState.WAITING_FOR_USER):
        table[device, state, Command.CNXN] = AdbConnection._on_connect
    table[device, online, Command.CNXN] = AdbConnection._on_connect
    for state in (ConnectionState.AUTHENTICATING, ConnectionState.WAITING_FOR_USER, online):
        table[device, state, Command.AUTH] = AdbConnection._on_auth_answer
    table[device, online, Command.OPEN] = AdbConnection._on_open
    for side in Side:
        table[side, online, Command.OKAY] = AdbConnection._on_okay
        table[side, online, Command.WRTE] = AdbConnection._on_write
        table[side, online, Command.CLSE] = AdbConnection._on_close
    return table


# (side, state, command) → the method that handles the packet. Anything else is answered with
# ``PacketIgnored``.
TRANSITIONS: dict[tuple[Side, ConnectionState, int], Handler] = _table()
