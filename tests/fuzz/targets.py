"""The fuzz targets: every parser that takes bytes or text from outside, each as a Hypothesis
strategy and a check that holds for every input.

A check raises (``AssertionError`` or the unexpected exception) when a property breaks: the parser
raised something other than its module's documented errors, hung (the async ones are bounded by a
timeout), or an encoder's output did not parse back to what was encoded. The tests in this folder
run each at a modest example count; ``bench/fuzz_soak.py`` runs the same targets by the hundred
thousand.
"""

from __future__ import annotations

import asyncio
import json
import os
import struct
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

from phone_agent.adb import events as adb_events
from phone_agent.adb import services
from phone_agent.adb import sync_protocol as sp
from phone_agent.adb.client import AdbError
from phone_agent.adb.connection import AdbConnectionError
from phone_agent.adb.host import AdbHostProtocol
from phone_agent.adb.packet import AdbPacket, AdbPacketParser, AdbProtocolError, Command
from phone_agent.adb.shell_protocol import (
    ShellPacket,
    ShellPacketDecoder,
    ShellProtocolError,
    encode_shell_packet,
)
from phone_agent.adb.smart_socket import AdbServerClient, encode_request, parse_devices
from phone_agent.adb.transport import PLAIN_STREAM, PLAIN_TRANSPORT
from phone_agent.adb.ui_dump import parse_ui_dump
from phone_agent.agent.model import ModelEvent
from phone_agent.agent.sse import ChatChunkAssembler, SseEvent, SseParser
from phone_agent.errors import DeviceError, ToolError
from phone_agent.farm.frames import FarmEnvelope, farm_envelope, open_farm_envelope
from phone_agent.flows.locator_syntax import RELATION_KEYS, Clause, format_clauses, parse_clauses
from phone_agent.relay import frames as relay_frames
from phone_agent.relay import settings as relay_settings
from phone_agent.tools.catalog import TOOLS
from phone_agent.tools.locators import LOCATOR_KEYS, ROLES, LocatorError, ScreenSnapshot, parse_target
from phone_agent.tools.spec import validate_arguments

# The profiles: "fuzz-ci" keeps the whole folder well under half a minute; "fuzz-soak" is the bench's.
_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
settings.register_profile(
    "fuzz-ci", max_examples=60, deadline=None, suppress_health_check=_QUIET, print_blob=True
)
settings.register_profile(
    "fuzz-soak", max_examples=100_000, deadline=None, database=None, suppress_health_check=_QUIET
)
FUZZ = settings.get_profile(os.environ.get("PHONE_AGENT_FUZZ_PROFILE", "fuzz-ci"))

HANG_S = 5.0  # an async parser that has not finished by then is hanging

# ----- shared strategies ---------------------------------------------------------------------------

COMMANDS = [int(c) for c in Command] + [0, 0xFFFFFFFF, 0x41414141]
small_ints = st.one_of(
    st.integers(0, 4), st.sampled_from([0x7FFFFFFF, 0xFFFFFFFF]), st.integers(0, 2**32 - 1)
)


def chunked(data: bytes, cuts: list[int]) -> list[bytes]:
    """``data`` split at the given offsets (any order, repeats allowed)."""
    points = sorted({c % (len(data) + 1) for c in cuts})
    pieces, start = [], 0
    for point in points:
        pieces.append(data[start:point])
        start = point
    pieces.append(data[start:])
    return [p for p in pieces if p] or [b""]


cuts = st.lists(st.integers(0, 1 << 16), max_size=8)
packets = st.builds(
    AdbPacket,
    st.sampled_from(COMMANDS),
    small_ints,
    small_ints,
    st.binary(max_size=300),
)


def header(
    command: int, arg0: int, arg1: int, length: int, check: int = 0, magic: int | None = None
) -> bytes:
    return struct.pack(
        "<6I", command, arg0, arg1, length, check, command ^ 0xFFFFFFFF if magic is None else magic
    )


# Bytes that are mostly ADB-shaped: valid packets, headers with odd lengths or magics, and noise.
adb_pieces = st.one_of(
    packets.map(lambda p: p.encode()),
    packets.map(lambda p: p.encode(with_checksum=False)),
    st.builds(header, st.sampled_from(COMMANDS), small_ints, small_ints, small_ints, small_ints),
    st.builds(header, st.sampled_from(COMMANDS), small_ints, small_ints, small_ints, small_ints, small_ints),
    st.binary(max_size=64),
)
adb_bytes = st.lists(adb_pieces, max_size=8).map(b"".join)


# ----- ADB packets ---------------------------------------------------------------------------------


def check_packet_parser(data: bytes, split: list[int], resync: bool) -> None:
    """Any bytes: packets or AdbProtocolError, nothing else."""
    parser = AdbPacketParser(max_payload=4096, resync=resync)
    try:
        for piece in chunked(data, split):
            parser.receive_data(piece)
            for packet in parser.packets_received():
                assert isinstance(packet, AdbPacket)
        parser.receive_eof()
    except AdbProtocolError:
        pass


def check_packet_round_trip(items: list[AdbPacket], split: list[int], with_checksum: bool) -> None:
    """Encoded packets parse back to themselves, however the bytes are cut."""
    parser = AdbPacketParser(max_payload=1 << 20)
    parser.verify_checksum = with_checksum
    got: list[AdbPacket] = []
    for piece in chunked(b"".join(p.encode(with_checksum=with_checksum) for p in items), split):
        parser.receive_data(piece)
        got += parser.packets_received()
    parser.receive_eof()
    assert [(int(p.command), p.arg0, p.arg1, bytes(p.payload)) for p in got] == [
        (int(p.command), p.arg0, p.arg1, bytes(p.payload)) for p in items
    ]


DEVICE_BANNER = b"device::ro.product.model=Fuzz;features=shell_v2,cmd,stat_v2,ls_v2,delayed_ack"
host_steps = st.lists(
    st.one_of(
        adb_pieces.map(lambda b: ("bytes", b)),
        st.tuples(st.just("open"), st.sampled_from(["shell:echo", "sync:", "exec:ls"])),
        st.tuples(st.just("write"), st.integers(0, 4), st.binary(max_size=40)),
        st.tuples(st.just("ack"), st.integers(0, 4), st.integers(-2, 5000)),
        st.tuples(st.just("close"), st.integers(0, 4)),
    ),
    max_size=12,
)


def check_host_protocol(handshake: bool, delayed_ack: bool, steps: list[tuple], split: list[int]) -> None:
    """The host side of a connection fed anything a device could send, while it opens, writes,
    acknowledges and closes streams: only AdbConnectionError, and only known events."""
    features = ("shell_v2", "cmd", "delayed_ack") if delayed_ack else ("shell_v2", "cmd")
    host = AdbHostProtocol(features=features)
    host.connect()
    # PacketIgnored: the core's explicit answer to a packet its state does not take (never silence).
    names = ("Connected", "AuthPromptShown", "StreamOpened", "StreamData", "StreamClosed", "PacketIgnored")
    known = tuple(getattr(adb_events, name) for name in names)
    try:
        if handshake:
            host.receive_data(AdbPacket(Command.CNXN, 0x01000001, 1 << 20, DEVICE_BANNER).encode())
        for step in steps:
            kind = step[0]
            if kind == "bytes":
                for piece in chunked(step[1], split):
                    host.receive_data(piece)
            elif host.state.value != "online":
                continue
            elif kind == "open":
                host.open(step[1])
            elif kind == "write" and host.is_open(step[1]):
                host.write(step[1], step[2])
            elif kind == "ack":
                host.acknowledge(step[1], step[2])
            elif kind == "close":
                host.close(step[1])
            for event in host.events_received():
                assert isinstance(event, known), event
            for chunk in host.data_to_send():
                assert isinstance(chunk, bytes)
        host.receive_eof()
    except AdbConnectionError:
        pass


class _FakeWriter:
    """What AdbdConnection writes to, kept in memory."""

    def __init__(self) -> None:
        self.out = bytearray()
        self.closing = False

    def write(self, data: bytes) -> None:
        self.out += data

    def is_closing(self) -> bool:
        return self.closing

    def close(self) -> None:
        self.closing = True

    async def wait_closed(self) -> None:
        return None

    async def drain(self) -> None:
        return None

    def get_extra_info(self, _name: str) -> Any:
        return ("127.0.0.1", 1)


_SIM: Any = None


def _sim_server() -> Any:
    global _SIM
    if _SIM is None:
        from phone_agent.sim.server import SimulatedPhoneServer

        _SIM = SimulatedPhoneServer("127.0.0.1", 0, auth="none")
    return _SIM


HOST_CNXN = AdbPacket(Command.CNXN, 0x01000000, 1 << 20, b"host::features=shell_v2,cmd").encode()
# Services the device side may be asked for; only ones that end at once (no shell runs).
device_packets = st.builds(
    AdbPacket,
    st.sampled_from([Command.CNXN, Command.AUTH, Command.OPEN, Command.OKAY, Command.WRTE, Command.CLSE]),
    st.one_of(st.integers(0, 3), small_ints),
    st.one_of(st.integers(0, 3), small_ints),
    st.one_of(
        st.sampled_from([b"nosuchservice:\x00", b"host::features=delayed_ack", b"\x00\x00\x00\x01", b""]),
        st.binary(max_size=64),
    ),
)
device_input = st.lists(st.one_of(device_packets.map(lambda p: p.encode()), adb_pieces), max_size=10).map(
    lambda pieces: HOST_CNXN + b"".join(pieces)
)


def check_device_side(data: bytes, split: list[int]) -> None:
    """The simulated phone's adbd side fed any bytes after a host's CNXN: it ends the connection (no
    exception out of ``serve``) once the bytes end, and never hangs."""
    from phone_agent.sim.connection import AdbdConnection

    async def run() -> None:
        reader = asyncio.StreamReader()
        for piece in chunked(data, split):
            reader.feed_data(piece)
        reader.feed_eof()
        connection = AdbdConnection(_sim_server(), reader, _FakeWriter(), 1)  # type: ignore[arg-type]
        async with asyncio.timeout(HANG_S):
            await connection.serve()

    asyncio.run(run())


# ----- shell v2 and sync ---------------------------------------------------------------------------

shell_packets = st.lists(st.builds(ShellPacket, st.integers(0, 5), st.binary(max_size=200)), max_size=8)


def check_shell_decoder(data: bytes, split: list[int]) -> None:
    decoder = ShellPacketDecoder(max_packet=1 << 16)
    try:
        for piece in chunked(data, split):
            for packet in decoder.receive_data(piece):
                assert 0 <= packet.id <= 5
    except ShellProtocolError:
        pass


def check_shell_round_trip(items: list[ShellPacket], split: list[int]) -> None:
    decoder = ShellPacketDecoder()
    got: list[ShellPacket] = []
    for piece in chunked(b"".join(encode_shell_packet(p.id, p.data) for p in items), split):
        got += decoder.receive_data(piece)
    assert got == items and decoder.buffered == 0


class _ScriptedStream:
    """A ServiceStream that answers reads from a list of chunks, then ends."""

    capabilities = PLAIN_STREAM

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = list(chunks)
        self.written = bytearray()

    async def read(self, timeout: float | None = None) -> bytes:
        return self.chunks.pop(0) if self.chunks else b""

    async def write(self, data: bytes) -> None:
        self.written += data

    async def close(self) -> None:
        self.chunks = []


class _Opener:
    def __init__(self, stream: _ScriptedStream, features: frozenset[str]) -> None:
        self.stream = stream
        self.features = features

    async def open_stream(self, service: str, timeout: float = 10.0) -> _ScriptedStream:
        return self.stream


def _bounded(coroutine: Any) -> Any:
    async def run() -> Any:
        async with asyncio.timeout(HANG_S):
            return await coroutine

    return asyncio.run(run())


def check_shell_service(data: bytes, split: list[int]) -> None:
    """``shell`` over a phone that answers anything: ShellResult or AdbError."""
    opener = _Opener(_ScriptedStream(chunked(data, split)), frozenset({"shell_v2"}))
    try:
        output = _bounded(services.shell(opener, "true"))  # type: ignore[arg-type]
        assert isinstance(output.stdout, bytes) and 0 <= output.exit_code <= 255
    except AdbError:
        pass


sync_words = st.sampled_from(
    [b"DATA", b"DONE", b"FAIL", b"OKAY", b"DENT", b"DNT2", b"STAT", b"STA2", b"LSTZ"]
)
sync_replies = st.lists(
    st.one_of(
        st.builds(
            lambda w, n: struct.pack("<4sI", w, n), sync_words, st.one_of(st.integers(0, 80), small_ints)
        ),
        st.binary(max_size=80),
    ),
    max_size=8,
).map(b"".join)


def check_sync_client(operation: str, features: frozenset[str], data: bytes, split: list[int]) -> None:
    """Every sync request against a phone that answers anything: a result, SyncError or AdbError."""

    async def run() -> None:
        client = services.SyncClient(_ScriptedStream(chunked(data, split)), features, 1.0)  # type: ignore[arg-type]
        if operation == "stat":
            await client.stat("/sdcard/x")
        elif operation == "list":
            await client.list("/sdcard")
        elif operation == "pull":
            await client.pull("/sdcard/x")
        else:
            await client.push(b"hello", "/sdcard/x", mtime=0)

    try:
        _bounded(run())
    except (sp.SyncError, AdbError):
        pass


def check_sync_pull_round_trip(chunks: list[bytes], split: list[int]) -> None:
    """DATA chunks then DONE, however the stream cuts them: pull answers their concatenation."""
    reply = b"".join(sp.encode_data(c) + c for c in chunks) + sp.REQUEST.pack(b"DONE", 0)
    client = services.SyncClient(_ScriptedStream(chunked(reply, split)), frozenset(), 1.0)  # type: ignore[arg-type]
    assert _bounded(client.pull("/sdcard/x")) == b"".join(chunks)


def check_sync_list_round_trip(names: list[str], v2: bool, split: list[int]) -> None:
    """DENT (or DNT2) entries then DONE: list answers those names with their modes."""
    reply = bytearray()
    for number, name in enumerate(names):
        raw = name.encode()
        if v2:
            reply += sp.DENT_V2.pack(b"DNT2", 0, 0, 0, 0o100644 + number, 1, 0, 0, number, 0, 0, 0, len(raw))
        else:
            reply += sp.DENT_V1.pack(b"DENT", 0o100644 + number, number, 0, len(raw))
        reply += raw
    reply += sp.DENT_V2.pack(b"DONE", *[0] * 12) if v2 else sp.DENT_V1.pack(b"DONE", 0, 0, 0, 0)
    features = frozenset({"ls_v2"}) if v2 else frozenset()
    client = services.SyncClient(_ScriptedStream(chunked(bytes(reply), split)), features, 1.0)  # type: ignore[arg-type]
    entries = _bounded(client.list("/sdcard"))
    assert [e.name for e in entries] == names
    assert [e.stat.mode for e in entries] == [0o100644 + n for n in range(len(names))]


# ----- the adb server's smart sockets --------------------------------------------------------------


class _ScriptedPipe:
    """An AdbTransport to an adb server that answers from a list of chunks, then ends."""

    capabilities = PLAIN_TRANSPORT

    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = list(chunks)

    async def send(self, chunk: bytes) -> None:
        return None

    async def receive(self) -> bytes:
        return self.chunks.pop(0) if self.chunks else b""

    async def close(self) -> None:
        return None


smart_replies = st.lists(
    st.one_of(
        st.sampled_from([b"OKAY", b"FAIL", b"0004", b"000a", b"ffff", b"zzzz", b"OKAYOKAY"]),
        st.binary(max_size=40),
        st.text(max_size=40).map(str.encode),
    ),
    max_size=6,
).map(b"".join)


def check_smart_socket(operation: str, data: bytes, split: list[int]) -> None:
    """Any answer from an adb server: a result or AdbError (AdbServerError and the rest)."""

    async def connect() -> _ScriptedPipe:
        return _ScriptedPipe(chunked(data, split))

    client = AdbServerClient(connect, timeout=1.0)
    try:
        if operation == "version":
            assert isinstance(_bounded(client.version()), int)
        elif operation == "devices":
            _bounded(client.devices())
        elif operation == "device":
            _bounded(client.device("emulator-5554"))
        else:
            stream = _bounded(client.open_service("emulator-5554", "shell:true"))
            assert isinstance(stream._leftover, bytes)
    except AdbError:
        pass


def check_smart_socket_round_trip(text: str, split: list[int]) -> None:
    """OKAY + a length-prefixed string: query answers the string."""
    raw = text.encode()
    reply = b"OKAY" + f"{len(raw):04x}".encode() + raw

    async def connect() -> _ScriptedPipe:
        return _ScriptedPipe(chunked(reply, split))

    assert _bounded(AdbServerClient(connect, timeout=1.0).query("host:version")) == text
    assert encode_request(text)[4:] == raw


serials = st.text(st.characters(min_codepoint=33, max_codepoint=126), min_size=1, max_size=20)
device_entries = st.lists(
    st.tuples(serials, st.sampled_from(["device", "offline", "unauthorized", "recovery"])), max_size=5
)


def check_parse_devices(text: str) -> None:
    for entry in parse_devices(text):
        assert entry.serial and " " not in entry.serial


def check_parse_devices_round_trip(entries: list[tuple[str, str]]) -> None:
    text = "".join(
        f"{serial}\t{state} product:p model:m device:d transport_id:1\n" for serial, state in entries
    )
    parsed = parse_devices(text)
    assert [(e.serial, e.state, e.model) for e in parsed] == [(s, st_, "m") for s, st_ in entries]


# ----- relay frames --------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)
frame_objects = st.dictionaries(
    st.sampled_from(["id", "tool", "args", "type", "seq", "message", "result", "x"]), json_values, max_size=5
)
relay_text = st.one_of(st.text(max_size=200), frame_objects.map(json.dumps), json_values.map(json.dumps))


def check_relay_frame(text: str) -> None:
    frame = relay_frames.parse_server_frame(text)
    assert isinstance(frame, relay_frames.CallFrame | relay_frames.CancelFrame | relay_frames.BadFrame)
    page_frame = relay_frames.ResultFrame | relay_frames.ProgressFrame | relay_frames.BadFrame
    assert isinstance(relay_frames.parse_page_frame(text), page_frame)
    first = relay_frames.parse_first_frame(text)
    assert first is None or isinstance(first, relay_frames.HelloFrame | relay_frames.PairFrame)
    assert isinstance(open_farm_envelope(text), FarmEnvelope)


def check_relay_round_trip(frame_id: str, tool: str, args: Any, result: dict[str, Any]) -> None:
    frame = relay_frames.parse_server_frame(json.dumps({"id": frame_id, "tool": tool, "args": args}))
    assert frame == relay_frames.CallFrame(frame_id, tool, args)
    assert relay_frames.parse_server_frame(json.dumps({"id": frame_id, "type": "cancel"})) == (
        relay_frames.CancelFrame(frame_id)
    )
    result_text = relay_frames.ResultFrame(frame_id, result).to_wire()
    assert json.loads(result_text) == {"id": frame_id, "result": result}
    progress = relay_frames.ProgressSequence()
    first, second = (json.loads(progress.frame(frame_id, tool)) for _ in range(2))
    assert (first["seq"], second["seq"], first["message"]) == (1, 2, tool)
    # The server's half writes what the page's half reads, and the other way round.
    call = relay_frames.CallFrame(frame_id, tool, args).to_wire()
    assert relay_frames.parse_server_frame(call) == relay_frames.CallFrame(frame_id, tool, args)
    answer = relay_frames.parse_page_frame(result_text)
    assert answer == relay_frames.ResultFrame(frame_id, result)
    assert relay_frames.parse_page_frame(relay_frames.ProgressSequence().frame(frame_id, tool)) == (
        relay_frames.ProgressFrame(frame_id, 1, tool)
    )
    hello = relay_frames.HelloFrame(tool)
    assert relay_frames.parse_first_frame(hello.to_wire()) == hello
    # The farm's envelope gives the frame back exactly as it was written.
    assert open_farm_envelope(farm_envelope(tool, call)) == FarmEnvelope(tool, call)


page_urls = st.builds(
    lambda query: "http://127.0.0.1:7788/?" + query,
    st.text(st.characters(blacklist_categories=["Cs"]), max_size=80),
)


def check_relay_settings(url: str, config: Any) -> None:
    settings_ = relay_settings.relay_settings(url, config)
    assert settings_.retry_ms >= 100
    assert (
        relay_settings.loopback_relay(settings_.url)
        or settings_.url == relay_settings.DEFAULT_RELAY_URL
        or (isinstance(config, dict) and config.get("server") == "phone-agent")
    )


# ----- SSE and chat chunks -------------------------------------------------------------------------

sse_bytes = st.lists(
    st.one_of(
        st.sampled_from(
            [b"data: ", b"data:", b"event: x", b": comment", b"id: 7", b"\n", b"\r", b"\r\n", b"\n\n"]
        ),
        st.text(max_size=20).map(str.encode),
        st.binary(max_size=20),
    ),
    max_size=20,
).map(b"".join)


def check_sse_parser(data: bytes, split: list[int]) -> None:
    """Any bytes, however cut: events, and the same events as when fed whole."""
    whole = SseParser()
    expected = whole.feed(data) + whole.finish()
    parser = SseParser()
    got: list[SseEvent] = []
    for piece in chunked(data, split):
        got += parser.feed(piece)
    got += parser.finish()
    assert got == expected


sse_events = st.lists(
    st.builds(
        SseEvent,
        st.text(
            st.characters(blacklist_characters="\r\n", blacklist_categories=["Cs"]), min_size=1, max_size=30
        ),
        st.sampled_from(["message", "delta"]),
    ),
    max_size=6,
)


def check_sse_round_trip(events: list[SseEvent], split: list[int], newline: str) -> None:
    text = "".join(
        (f"event: {e.event}{newline}" if e.event != "message" else "") + f"data: {e.data}{newline}{newline}"
        for e in events
    )
    parser = SseParser()
    got: list[SseEvent] = []
    for piece in chunked(text.encode(), split):
        got += parser.feed(piece)
    got += parser.finish()
    assert [(e.data, e.event) for e in got] == [(e.data, e.event) for e in events]


chunk_objects = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "choices",
                    "delta",
                    "message",
                    "content",
                    "tool_calls",
                    "function",
                    "name",
                    "arguments",
                    "index",
                    "id",
                    "finish_reason",
                    "usage",
                    "text",
                    "function_call",
                    "reasoning_content",
                    "reasoning",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=16,
)


def check_chat_chunks(chunks: list[Any]) -> None:
    """Any JSON objects a provider streams: model events, never an exception."""
    assembler = ChatChunkAssembler()
    events: list[ModelEvent] = []
    for chunk in chunks:
        if isinstance(chunk, dict):
            events += assembler.add_chunk(chunk)
    events += assembler.finish()
    for event in events:
        assert type(event).__module__ == "phone_agent.agent.model", event


# ----- uiautomator XML -----------------------------------------------------------------------------

xml_text = st.text(st.characters(blacklist_categories=["Cs"]), max_size=30)
ui_nodes = st.recursive(
    st.builds(lambda t, d: {"text": t, "desc": d, "children": []}, xml_text, xml_text),
    lambda inner: st.builds(
        lambda t, kids: {"text": t, "desc": "", "children": kids}, xml_text, st.lists(inner, max_size=3)
    ),
    max_leaves=10,
)


def _xml_attr(text: str) -> str:
    from xml.sax.saxutils import quoteattr

    allowed = (c for c in text if c in "\t\n\r" or (ord(c) >= 0x20 and c not in "\ufffe\uffff"))
    return quoteattr("".join(allowed))


def _render(node: dict[str, Any]) -> str:
    kids = "".join(_render(k) for k in node["children"])
    return (
        f'<node index="0" text={_xml_attr(node["text"])} content-desc={_xml_attr(node["desc"])} '
        f'clickable="true" bounds="[1,2][3,4]">{kids}</node>'
    )


def _count(node: dict[str, Any]) -> int:
    return 1 + sum(_count(k) for k in node["children"])


ui_text = st.one_of(
    st.text(max_size=200),
    st.builds(lambda a, b: f'{a}<hierarchy rotation="0">{b}', st.text(max_size=20), st.text(max_size=200)),
    st.lists(ui_nodes, max_size=3).map(lambda ns: '<hierarchy rotation="0">' + "".join(map(_render, ns))),
)


def check_ui_dump(text: str) -> None:
    """Any text from ``uiautomator dump``: nodes or DeviceError."""
    try:
        for node in parse_ui_dump(text):
            assert node.bounds.right >= node.bounds.left or node.bounds == node.bounds
    except DeviceError:
        pass


def check_ui_dump_round_trip(nodes: list[dict[str, Any]], prefix: str) -> None:
    xml = f"{prefix}\n<?xml version='1.0' encoding='UTF-8' standalone='yes' ?>" if prefix else ""
    xml += '<hierarchy rotation="0">' + "".join(_render(n) for n in nodes) + "</hierarchy>"
    parsed = parse_ui_dump(xml)
    assert len(parsed) == sum(_count(n) for n in nodes)
    assert all(node.clickable and (node.bounds.left, node.bounds.bottom) == (1, 4) for node in parsed)


# ----- locators ------------------------------------------------------------------------------------

locator_keys = st.sampled_from([*LOCATOR_KEYS, "Text", "", " id", "ref", "@e"])
locator_text = st.one_of(
    st.text(max_size=40),
    st.builds(
        lambda k, sep, v: f"{k}{sep}{v}",
        locator_keys,
        st.sampled_from(["=", " = ", ":", "=="]),
        st.text(max_size=20),
    ),
    st.builds(lambda n, tail: f"@e{n}{tail}", st.integers(-5, 10**7), st.sampled_from(["", " ", "x", "\n"])),
    json_values,
)
good_targets = st.one_of(
    st.integers(1, 999_999).map(lambda n: f"@e{n}"),
    st.builds(
        lambda k, v: f"{k}={v}",
        st.sampled_from([k for k in LOCATOR_KEYS if k != "role"]),
        st.text(min_size=1, max_size=20).map(str.strip).filter(bool),
    ),
    st.sampled_from(ROLES).map(lambda role: f"role={role}"),
)


def check_locator(value: Any, dump: str) -> None:
    """Any target text: a Target or LocatorError; finding it on any screen never raises."""
    try:
        target = parse_target(value)
    except LocatorError:
        return
    _find_on_any_screen(target, dump)


def _find_on_any_screen(target: Any, dump: str) -> None:
    """Finding a target on the screen any dump gives (none, when the dump is refused) never raises and
    finds only the screen's own elements."""
    try:
        nodes = parse_ui_dump(dump)
    except DeviceError:
        nodes = []
    snapshot = ScreenSnapshot.from_nodes(nodes)
    for element in target.find(snapshot):
        assert element in snapshot.elements


_plain_keys = st.sampled_from([k for k in LOCATOR_KEYS if k != "role"])
_values = st.text(min_size=1, max_size=12).map(lambda v: " ".join(v.split())).filter(bool)


def _clause_lists(depth: int) -> st.SearchStrategy[list[Clause]]:
    plain = st.builds(Clause, _plain_keys, _values)
    index = st.integers(0, 30).map(lambda n: Clause("index", str(n)))
    if depth <= 0:
        return st.lists(plain, min_size=1, max_size=2).map(lambda cs: list({c.key: c for c in cs}.values()))
    relation = st.builds(
        lambda key, inner: Clause(key, inner=tuple(inner)),
        st.sampled_from(RELATION_KEYS),
        _clause_lists(depth - 1),
    )
    return st.tuples(
        st.lists(plain, min_size=1, max_size=2), st.lists(relation, max_size=2), st.booleans(), index
    ).map(
        lambda parts: (
            list({c.key: c for c in parts[0]}.values())
            + list({c.key: c for c in parts[1]}.values())
            + ([parts[3]] if parts[2] else [])
        )
    )


joined_locators = _clause_lists(2)


def check_joined_locator_round_trip(clauses: list[Clause], dump: str) -> None:
    """Joined clauses, with any text in their values, are written so that they read back as the same
    clauses, and finding them on any screen never raises."""
    written = format_clauses(clauses)
    assert parse_clauses(written) == clauses, written
    _find_on_any_screen(parse_target(written), dump)


def check_locator_round_trip(text: str) -> None:
    """A target written as the docs show it parses, and prints back as written."""
    target = parse_target(text)
    assert str(target) == text
    assert parse_target(str(target)) == target


# ----- tool arguments ------------------------------------------------------------------------------

tool_specs = st.sampled_from(TOOLS)
tool_args = st.one_of(
    json_values,
    st.dictionaries(
        st.sampled_from(sorted({k for t in TOOLS for k in t.input_schema["properties"]} | {"x"})),
        json_values | st.floats() | st.integers(min_value=-(2**70), max_value=2**70),
        max_size=4,
    ),
)


def check_tool_arguments(tool: Any, args: Any) -> None:
    """Any arguments: clean ones (which validate again to themselves) or ToolError."""
    try:
        clean = validate_arguments(tool, args)
    except ToolError:
        return
    assert set(clean) <= set(tool.input_schema["properties"])
    assert validate_arguments(tool, clean) == clean


# ----- the list the soak runs ----------------------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """One fuzz target: what to draw and the check it must pass."""

    name: str
    strategy: st.SearchStrategy[tuple[Any, ...]]
    check: Callable[..., None]


TARGETS: tuple[Target, ...] = (
    Target("adb packets (parser)", st.tuples(adb_bytes, cuts, st.booleans()), check_packet_parser),
    Target(
        "adb packets (round trip)",
        st.tuples(st.lists(packets, max_size=6), cuts, st.booleans()),
        check_packet_round_trip,
    ),
    Target(
        "adb host side",
        st.tuples(st.booleans(), st.booleans(), host_steps, cuts),
        check_host_protocol,
    ),
    Target("adb device side (sim)", st.tuples(device_input, cuts), check_device_side),
    Target("shell v2 decoder", st.tuples(st.binary(max_size=300), cuts), check_shell_decoder),
    Target("shell v2 (round trip)", st.tuples(shell_packets, cuts), check_shell_round_trip),
    Target(
        "shell v2 service",
        st.tuples(shell_packets.map(lambda ps: b"".join(encode_shell_packet(p.id, p.data) for p in ps)), cuts)
        | st.tuples(st.binary(max_size=200), cuts),
        check_shell_service,
    ),
    Target(
        "sync replies",
        st.tuples(
            st.sampled_from(["stat", "list", "pull", "push"]),
            st.sampled_from([frozenset(), frozenset({"stat_v2", "ls_v2"})]),
            sync_replies,
            cuts,
        ),
        check_sync_client,
    ),
    Target(
        "sync pull (round trip)",
        st.tuples(st.lists(st.binary(max_size=500), max_size=5), cuts),
        check_sync_pull_round_trip,
    ),
    Target(
        "sync list (round trip)",
        st.tuples(st.lists(st.text(max_size=20), max_size=5), st.booleans(), cuts),
        check_sync_list_round_trip,
    ),
    Target(
        "adb server replies",
        st.tuples(st.sampled_from(["version", "devices", "device", "service"]), smart_replies, cuts),
        check_smart_socket,
    ),
    Target("adb server (round trip)", st.tuples(st.text(max_size=60), cuts), check_smart_socket_round_trip),
    Target("adb server devices list", st.tuples(st.text(max_size=200)), check_parse_devices),
    Target("adb server devices (round trip)", st.tuples(device_entries), check_parse_devices_round_trip),
    Target("relay frames", st.tuples(relay_text), check_relay_frame),
    Target(
        "relay frames (round trip)",
        st.tuples(
            st.text(min_size=1, max_size=20),
            st.text(max_size=20),
            json_values,
            st.dictionaries(st.text(max_size=5), json_values, max_size=3),
        ),
        check_relay_round_trip,
    ),
    Target(
        "relay settings",
        st.tuples(
            page_urls,
            st.none() | st.dictionaries(st.sampled_from(["server", "relay"]), json_values, max_size=2),
        ),
        check_relay_settings,
    ),
    Target("sse stream", st.tuples(sse_bytes, cuts), check_sse_parser),
    Target(
        "sse (round trip)",
        st.tuples(sse_events, cuts, st.sampled_from(["\n", "\r\n", "\r"])),
        check_sse_round_trip,
    ),
    Target("chat chunks", st.tuples(st.lists(chunk_objects, max_size=5)), check_chat_chunks),
    Target("uiautomator xml", st.tuples(ui_text), check_ui_dump),
    Target(
        "uiautomator xml (round trip)",
        st.tuples(st.lists(ui_nodes, max_size=3), st.sampled_from(["", "UI hierchary dumped to: /dev/tty"])),
        check_ui_dump_round_trip,
    ),
    Target("locators", st.tuples(locator_text, ui_text), check_locator),
    Target("locators (round trip)", st.tuples(good_targets), check_locator_round_trip),
    Target(
        "joined locators (round trip)", st.tuples(joined_locators, ui_text), check_joined_locator_round_trip
    ),
    Target("tool arguments", st.tuples(tool_specs, tool_args), check_tool_arguments),
)
