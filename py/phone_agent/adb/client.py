"""The asyncio driver of ``AdbHostProtocol``: one connection over any byte transport, many streams.

A transport is anything with ``async send(chunk)``, ``async receive() -> bytes`` (``b""`` at the end),
``async close()`` and ``capabilities`` (what more it offers, ``TransportCapabilities``) — WebUSB in the
page (each chunk one bulk transfer: headers are 24-byte chunks of their own), the server's WebSocket
bridge, or TCP in CPython (``server/adb_tcp.py``). ``AdbClient`` reads in one task, feeds the core, and
hands data to ``AdbStream`` objects; every wait has a bound and ends in an ``AdbError`` that says what
happened. Pure asyncio: runs in CPython and Pyodide.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

from phone_agent.adb.connection import AdbConnectionError, ConnectionState
from phone_agent.adb.events import AuthPromptShown, Connected, StreamClosed, StreamData, StreamOpened
from phone_agent.adb.host import DEFAULT_KEY_NAME, HOST_FEATURES, AdbHostProtocol
from phone_agent.adb.keys import AdbPrivateKey
from phone_agent.adb.packet import MAX_PAYLOAD, VERSION
from phone_agent.adb.transport import AdbTransport, ServiceStream, StreamCapabilities

CONNECT_TIMEOUT = 10.0  # the phone must answer CNXN (or ask for auth) within this
AUTH_TIMEOUT = 60.0  # the user has this long to accept "Allow USB debugging?"
OPEN_TIMEOUT = 10.0
READ_TIMEOUT = 30.0
WRITE_TIMEOUT = 30.0
# Received bytes a stream buffers before it stops acknowledging (backpressure on the phone).
STREAM_HIGH_WATER = 8 * 1024 * 1024
# Written bytes queued in the core before ``write`` waits for the phone to take them.
WRITE_HIGH_WATER = 2 * 1024 * 1024

AUTH_REJECTED = (
    "The phone did not accept this computer's key in time. Unlock the phone, accept "
    '"Allow USB debugging?" (tick "Always allow"), then connect again.'
)


class AdbError(Exception):
    """An ADB operation failed (connection lost, refused, timed out…); the message says what."""


class AdbTimeoutError(AdbError, TimeoutError):
    """The phone did not answer in time."""


class AdbOutputTooLarge(AdbError):
    """The phone sent more than the cap for one answer (a shell command's output, a screenshot, the
    hierarchy server's body, a pull); the stream was closed, the rest never read."""

    def __init__(self, what: str, cap: int) -> None:
        limit = describe_bytes(cap)
        super().__init__(f"{what} was more than {limit}, the cap for one answer (the rest was not read)")
        self.what = what
        self.cap = cap


def describe_bytes(size: int) -> str:
    """``16 MiB (16777216 bytes)``: a cap as a person and a program read it."""
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit} ({size} bytes)"
    return f"{size} bytes"


class AdbConnectionLost(AdbError):
    """The connection to the phone is gone (unplugged, closed, broken): nothing more can be done on it."""


class AdbAuthError(AdbError):
    """The phone did not accept our key."""


class ServiceOpener(Protocol):
    """Opens services on one phone: ``AdbClient`` directly, or through an adb server."""

    @property
    def features(self) -> frozenset[str]: ...

    async def open_stream(self, service: str, timeout: float = OPEN_TIMEOUT) -> ServiceStream: ...


def _retrieve(task: asyncio.Task[None]) -> None:
    """A background flush's failure is already the client's (``_fail``): only mark it seen."""
    if not task.cancelled():
        task.exception()


class AdbStream:
    """One open service on an ``AdbClient``."""

    def __init__(self, client: AdbClient, local_id: int, service: str) -> None:
        self.client = client
        self.local_id = local_id
        self.service = service
        self.closed = False
        self.refused = False
        self.opened = asyncio.get_running_loop().create_future()
        self._chunks: deque[bytes] = deque()
        self._buffered = 0
        self._unacked = 0  # bytes received and not yet acknowledged (over the high-water mark)
        self._readable = asyncio.Event()
        self._sink: Callable[[bytes], object] | None = None
        self._sink_error: BaseException | None = None
        self._last_arrival = 0.0

    @property
    def capabilities(self) -> StreamCapabilities:
        # Made when asked, not kept: a kept one (holding ``self.drain``) made every stream a reference
        # cycle, freed only by Python's full collections, and with it whatever it still buffered.
        return StreamCapabilities(drain=self.drain)

    # ----- called by the client

    def _on_data(self, data: bytes) -> None:
        if self._sink is not None:
            self._last_arrival = time.monotonic()
            self._give(data)
            self.client._protocol.acknowledge(self.local_id, len(data))
            return
        self._chunks.append(data)
        self._buffered += len(data)
        if self._buffered <= STREAM_HIGH_WATER:
            self.client._protocol.acknowledge(self.local_id, len(data))
        else:
            self._unacked += len(data)
        self._readable.set()

    def _on_close(self, refused: bool) -> None:
        self.closed = True
        self.refused = refused
        if not self.opened.done():
            self.opened.set_result(False)
        self._readable.set()

    def _give(self, data: bytes) -> None:
        if self._sink_error is not None:
            return
        try:
            assert self._sink is not None
            self._sink(data)
        except BaseException as exc:  # raised to whoever waits in consumed()
            self._sink_error = exc
            self._readable.set()

    # ----- used by services

    def consume(self, sink: Callable[[bytes], object]) -> None:
        """From now on hand every chunk to ``sink`` as it arrives (what is buffered first) and
        acknowledge it at once: no task wakes up per chunk. ``await consumed()`` waits for the end."""
        self._sink = sink
        unacked, self._unacked = self._unacked, 0
        while self._chunks:
            self._give(self._chunks.popleft())
        self._buffered = 0
        if unacked:
            self.client._protocol.acknowledge(self.local_id, unacked)
            self.client._flush_soon()

    async def drain(self, sink: Callable[[bytes], object]) -> None:
        """``consume(sink)`` then ``consumed()``: every chunk to ``sink`` until the phone ends the stream."""
        self.consume(sink)
        await self.consumed(None)

    async def consumed(self, timeout: float | None = None) -> None:
        """After ``consume``: until the phone closes the stream; ``timeout`` bounds each silence (like
        ``read``'s). Raises what the sink raised, or ``AdbConnectionLost`` when the connection went."""
        wait = READ_TIMEOUT if timeout is None else timeout
        self._last_arrival = time.monotonic()
        while not self.closed and self._sink_error is None:
            # One timer per silence, not per chunk: it ends at the last arrival plus ``wait``.
            left = self._last_arrival + wait - time.monotonic()
            if left <= 0:
                raise AdbTimeoutError(f"{self.service}: the phone sent nothing for {wait:g} s")
            self._readable.clear()
            try:
                async with asyncio.timeout(left):
                    await self._readable.wait()
            except TimeoutError:
                pass
        if self._sink_error is not None:
            raise self._sink_error
        if self.client._failure is not None and not self.refused:
            raise AdbConnectionLost(f"{self.service}: {self.client._failure}")

    async def read(self, timeout: float | None = None) -> bytes:
        """The next chunk the phone wrote; ``b""`` once the stream is closed."""
        if not self._chunks and not self.closed:
            self._readable.clear()
            wait = READ_TIMEOUT if timeout is None else timeout
            try:
                async with asyncio.timeout(wait):
                    await self._readable.wait()
            except TimeoutError:
                raise AdbTimeoutError(f"{self.service}: the phone sent nothing for {wait:g} s") from None
        if not self._chunks:
            if self.client._failure is not None and not self.refused:
                raise AdbConnectionLost(f"{self.service}: {self.client._failure}")
            return b""
        data = self._chunks.popleft()
        self._buffered -= len(data)
        if self._unacked and self._buffered <= STREAM_HIGH_WATER:
            unacked, self._unacked = self._unacked, 0
            self.client._protocol.acknowledge(self.local_id, unacked)
            await self.client._flush()
        return data

    async def write(self, data: bytes | bytearray | memoryview) -> None:
        """Queue ``data``; waits (bounded) while more than 2 MiB is waiting for the phone's OKAYs."""
        if self.closed:
            if self.client._failure is not None:
                raise AdbConnectionLost(f"{self.service}: {self.client._failure}")
            raise AdbError(f"{self.service}: the phone closed the stream")
        client = self.client
        try:
            client._protocol.write(self.local_id, data)
        except AdbConnectionError as exc:
            raise AdbError(f"{self.service}: {exc}") from None
        await client._flush()
        if client._protocol.pending_output(self.local_id) > WRITE_HIGH_WATER:
            try:
                async with asyncio.timeout(WRITE_TIMEOUT):
                    await self._drained()
            except TimeoutError:
                raise AdbTimeoutError(
                    f"{self.service}: the phone took no data for {WRITE_TIMEOUT:g} s"
                ) from None

    async def _drained(self) -> None:
        while self.client._protocol.pending_output(self.local_id) > WRITE_HIGH_WATER and not self.closed:
            self.client._progress.clear()
            await self.client._progress.wait()
        if self.closed and self.client._failure is not None:
            raise AdbConnectionLost(f"{self.service}: {self.client._failure}")

    async def close(self) -> None:
        """Close our end (after what was written has left)."""
        if not self.closed:
            self.closed = True
            self.client._protocol.close(self.local_id)
            self.client._streams.pop(self.local_id, None)
            with contextlib.suppress(AdbError):
                await self.client._flush()

    async def read_all(self, timeout: float | None = None, limit: int = 512 * 1024 * 1024) -> bytes:
        """Everything until the phone closes the stream (``timeout`` bounds each read)."""
        out = bytearray()
        while chunk := await self.read(timeout):
            out += chunk
            if len(out) > limit:
                raise AdbError(f"{self.service}: more than {limit} bytes")
        return bytes(out)


class AdbClient:
    """An ADB connection to one phone over ``transport``.

    ``await connect()`` does the handshake; while the phone shows "Allow USB debugging?" the state is
    ``ConnectionState.WAITING_FOR_USER`` and ``on_state`` is called with it (the page shows "Accept
    the prompt on your phone"). Then ``open_stream(service)`` gives ``AdbStream``s.
    """

    def __init__(
        self,
        transport: AdbTransport,
        keys: list[AdbPrivateKey] | tuple[AdbPrivateKey, ...] | AdbPrivateKey,
        *,
        key_name: str = DEFAULT_KEY_NAME,
        features: tuple[str, ...] | list[str] = HOST_FEATURES,
        version: int = VERSION,
        max_payload: int = MAX_PAYLOAD,
        on_state: Callable[[ConnectionState], None] | None = None,
    ) -> None:
        if isinstance(keys, AdbPrivateKey):
            keys = [keys]
        self.transport = transport
        self.on_state = on_state
        self._protocol = AdbHostProtocol(
            keys, key_name=key_name, features=features, version=version, max_payload=max_payload
        )
        self._streams: dict[int, AdbStream] = {}
        self._send_lock = asyncio.Lock()
        self._joins_packets = transport.capabilities.joins_packets
        self._send_nowait = transport.capabilities.send_nowait
        self._reader: asyncio.Task[None] | None = None
        self._connected: asyncio.Future[Connected] | None = None
        self._failure: str | None = None
        self._progress = asyncio.Event()
        self._state_seen = ConnectionState.IDLE
        self.connection: Connected | None = None

    # ----- state

    @property
    def state(self) -> ConnectionState:
        return self._protocol.state

    @property
    def features(self) -> frozenset[str]:
        return self._protocol.features

    @property
    def banner(self) -> str:
        return self._protocol.device_banner

    @property
    def version(self) -> int:
        return self._protocol.version

    @property
    def max_payload(self) -> int:
        return self._protocol.max_payload

    @property
    def failure(self) -> str | None:
        """Why the connection ended (unplugged, the bridge closed, garbage from the phone…), or None
        while it lives. The first reason wins: later ones are consequences of it."""
        return self._failure

    # ----- lifecycle

    async def connect(
        self, timeout: float = CONNECT_TIMEOUT, auth_timeout: float = AUTH_TIMEOUT
    ) -> Connected:
        """Handshake: ``timeout`` for the phone to answer, ``auth_timeout`` for the user to accept."""
        loop = asyncio.get_running_loop()
        self._connected = loop.create_future()
        self._protocol.connect()
        self._notify_state()
        deliver = self.transport.capabilities.deliver
        if deliver is not None:
            deliver(self._received, self._ended)
        else:
            self._reader = loop.create_task(self._read_loop())
        try:
            await self._flush()
            await self._wait_connected(timeout, auth_timeout)
            self.connection = self._connected.result()
            return self.connection
        except BaseException as exc:
            await self.close(str(exc) or exc.__class__.__name__)
            raise

    async def _wait_connected(self, timeout: float, auth_timeout: float) -> None:
        """``timeout`` runs until the phone answers; once it shows the prompt, ``auth_timeout``."""
        assert self._connected is not None
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        auth_deadline: float | None = None
        while not self._connected.done():
            if self.state is ConnectionState.WAITING_FOR_USER:
                if auth_deadline is None:
                    auth_deadline = loop.time() + auth_timeout
                if loop.time() >= auth_deadline:
                    raise AdbAuthError(AUTH_REJECTED)
                limit = auth_deadline
            elif loop.time() >= deadline:
                received = self._protocol.bytes_received
                if self.state is ConnectionState.CONNECTING and received:
                    raise AdbError(
                        f"the other end sent {received} bytes that are not an ADB answer in "
                        f"{timeout:g} s: it is not an adbd (wrong port or device?)"
                    )
                raise AdbTimeoutError(
                    f"the phone did not answer the ADB handshake within {timeout:g} s "
                    f"(state {self.state.value}): is it an ADB device, awake and connected?"
                )
            else:
                limit = deadline
            self._progress.clear()
            progress = loop.create_task(self._progress.wait())
            try:
                await asyncio.wait(
                    {self._connected, progress},
                    timeout=max(0.0, limit - loop.time()),
                    return_when=asyncio.FIRST_COMPLETED,
                )
            finally:
                progress.cancel()

    async def close(self, reason: str = "closed by the host") -> None:
        """Drop the connection: every stream ends, the transport is closed."""
        self._fail(reason)
        with contextlib.suppress(Exception):
            async with asyncio.timeout(5.0):
                await self.transport.close()
        reader, self._reader = self._reader, None
        if reader is not None and reader is not asyncio.current_task():
            reader.cancel()
            await asyncio.wait({reader}, timeout=5.0)

    async def __aenter__(self) -> AdbClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # ----- streams

    async def open_stream(self, service: str, timeout: float = OPEN_TIMEOUT) -> AdbStream:
        """Open ``service``; AdbError when the phone refuses it, AdbTimeoutError when it says nothing."""
        if self._failure is not None:
            raise AdbConnectionLost(f"not connected: {self._failure}")
        try:
            local_id = self._protocol.open(service)
        except AdbConnectionError as exc:
            raise AdbConnectionLost(str(exc)) from None
        stream = AdbStream(self, local_id, service)
        self._streams[local_id] = stream
        await self._flush()
        try:
            async with asyncio.timeout(timeout):
                # Awaited directly (a shield would cost one more trip through the event loop); a
                # timeout cancels the future, which the client then leaves alone.
                opened = await stream.opened
        except TimeoutError:
            await stream.close()
            raise AdbTimeoutError(f"the phone did not answer OPEN {service!r} within {timeout:g} s") from None
        if not opened:
            self._streams.pop(local_id, None)
            if self._failure is not None:
                raise AdbConnectionLost(f"{service}: {self._failure}")
            raise AdbError(f"the phone refused the service {service!r}")
        return stream

    # ----- internals

    async def _flush(self) -> None:
        async with self._send_lock:
            chunks = self._protocol.data_to_send(joined=self._joins_packets)
            if not chunks:
                return
            try:
                if self._send_nowait is not None:  # never waits: no timer to arm per chunk
                    for chunk in chunks:
                        self._send_nowait(chunk)
                    return
                for chunk in chunks:
                    async with asyncio.timeout(WRITE_TIMEOUT):
                        await self.transport.send(chunk)
            except Exception as exc:  # a dead transport: every wait must end now
                reason = (
                    f"sending to the phone timed out after {WRITE_TIMEOUT:g} s"
                    if isinstance(exc, TimeoutError)
                    else f"sending to the phone failed: {exc}"
                )
                self._fail(reason)
                raise AdbConnectionLost(reason) from exc

    def _received(self, data: bytes) -> None:
        """What a pushing transport delivered, handled at once: parsed, dispatched, answered."""
        if self._failure is not None:
            return
        try:
            self._protocol.receive_data(data)
        except AdbConnectionError as exc:
            self._fail(str(exc))
            return
        self._dispatch()
        self._flush_soon()

    def _ended(self, reason: str | None) -> None:
        """A pushing transport ended: cleanly (``None``) or with a reason."""
        if self._failure is not None:
            return
        if reason is None:
            self._protocol.receive_eof()
            reason = self._protocol.close_reason or "the phone closed the connection"
        self._fail(reason)

    def _flush_soon(self) -> None:
        """Send what the core has to send: at once when the transport never waits and nothing else is
        sending, else in a task."""
        if self._send_nowait is not None and not self._send_lock.locked():
            try:
                for chunk in self._protocol.data_to_send(joined=self._joins_packets):
                    self._send_nowait(chunk)
            except Exception as exc:
                self._fail(f"sending to the phone failed: {exc}")
            return
        task = asyncio.ensure_future(self._flush())
        task.add_done_callback(_retrieve)

    async def _read_loop(self) -> None:
        protocol = self._protocol
        receive_at_most = self.transport.capabilities.receive_at_most
        try:
            while True:
                if receive_at_most is not None:
                    data = await receive_at_most(protocol.bytes_expected)
                else:
                    data = await self.transport.receive()
                if not data:
                    protocol.receive_eof()
                    self._fail(protocol.close_reason or "the phone closed the connection")
                    return
                try:
                    protocol.receive_data(data)
                except AdbConnectionError as exc:
                    self._fail(str(exc))
                    return
                self._dispatch()
                await self._flush()
        except asyncio.CancelledError:
            raise
        except AdbError:
            return
        except ConnectionError as exc:  # transports may raise instead of answering b""
            self._fail(str(exc) or "the connection to the phone was lost")
        except Exception as exc:
            self._fail(f"the connection to the phone failed: {exc!r}")

    def _fail(self, reason: str) -> None:
        if self._failure is None:
            self._failure = reason
        self._protocol.abort(reason)
        self._dispatch()
        if self._connected is not None and not self._connected.done():
            self._connected.set_exception(AdbError(reason))
            self._connected.exception()  # retrieved: no "never retrieved" warning if nobody waits
        for stream in list(self._streams.values()):
            stream._on_close(refused=False)
        self._streams.clear()
        self._progress.set()

    def _notify_state(self) -> None:
        state = self._protocol.state
        if state is not self._state_seen:
            self._state_seen = state
            if self.on_state is not None:
                with contextlib.suppress(Exception):
                    self.on_state(state)

    def _dispatch(self) -> None:
        for event in self._protocol.events_received():
            if isinstance(event, StreamData):
                stream = self._streams.get(event.local_id)
                if stream is not None:
                    stream._on_data(event.data)
                else:
                    self._protocol.acknowledge(event.local_id, len(event.data))
            elif isinstance(event, StreamOpened):
                stream = self._streams.get(event.local_id)
                if stream is not None and not stream.opened.done():
                    stream.opened.set_result(True)
            elif isinstance(event, StreamClosed):
                stream = self._streams.pop(event.local_id, None)
                if stream is not None:
                    stream._on_close(event.refused)
            elif isinstance(event, Connected):
                if self._connected is not None and not self._connected.done():
                    self._connected.set_result(event)
            elif isinstance(event, AuthPromptShown):
                pass  # seen through the state change below
        self._notify_state()
        self._progress.set()
