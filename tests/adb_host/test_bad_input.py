"""Misbehaving devices, scripted over an in-memory transport: every case ends in bounded time with a
clear error, never a hang. Also delayed ack end to end (the simulated phone does not offer it)."""

from __future__ import annotations

import asyncio
import struct

import pytest

from phone_agent.adb.client import AdbClient, AdbError, AdbTimeoutError
from phone_agent.adb.packet import VERSION_SKIP_CHECKSUM, AdbPacket, Command
from phone_agent.adb.services import SyncClient, exec_into, exec_out, shell
from phone_agent.adb.shell_protocol import ShellId, encode_shell_packet
from phone_agent.adb.streams import DELAYED_ACK_WINDOW
from phone_agent.adb.transport import PLAIN_TRANSPORT
from phone_agent.server.adb_tcp import TcpTransport, connect_adbd
from tests.support import free_port

BANNER = b"device::ro.product.model=Fake;features=shell_v2,stat_v2"


async def bounded(awaitable, seconds: float = 5.0):
    async with asyncio.timeout(seconds):
        return await awaitable


async def online_client(transport, key, banner: bytes = BANNER, **options) -> AdbClient:
    client = AdbClient(transport, key, **options)
    connecting = asyncio.create_task(client.connect(timeout=3))
    cnxn = await transport.device_receive()
    assert cnxn.command == Command.CNXN
    transport.device_send(AdbPacket(Command.CNXN, VERSION_SKIP_CHECKSUM, 1 << 20, banner))
    await bounded(connecting)
    transport.clients.append(client)
    return client


async def accept_open(transport, remote: int = 500, credit: bytes = b"") -> AdbPacket:
    request = await transport.device_receive()
    assert request.command == Command.OPEN
    transport.device_send(AdbPacket(Command.OKAY, remote, request.arg0, credit), checksum=False)
    return request


async def accepted_stream(transport, client: AdbClient, service: str):
    """``service`` opened on ``client`` and accepted by the scripted device."""
    opening = asyncio.create_task(client.open_stream(service))
    await accept_open(transport)
    return await bounded(opening)


async def test_a_device_that_never_answers_times_out(memory_transport, host_key):
    client = AdbClient(memory_transport, host_key)
    with pytest.raises(AdbTimeoutError, match=r"did not answer the ADB handshake within 0\.5 s"):
        await bounded(client.connect(timeout=0.5))
    assert memory_transport.closed


async def test_a_peer_that_answers_garbage_is_named_not_adb(memory_transport, host_key):
    client = AdbClient(memory_transport, host_key)
    connecting = asyncio.create_task(client.connect(timeout=0.5))
    await memory_transport.device_receive()
    memory_transport.device_send(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n" * 3)
    with pytest.raises(AdbError, match="not an ADB answer"):
        await bounded(connecting)


async def test_a_tcp_port_with_nothing_listening_fails_at_once(host_key):
    with pytest.raises(AdbError, match="cannot connect"):
        await bounded(connect_adbd("127.0.0.1", free_port(), host_key, timeout=2))


async def test_a_tcp_server_that_says_nothing_times_out(host_key):
    async def silent(reader, writer):
        await asyncio.sleep(10)
        writer.close()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        with pytest.raises(AdbTimeoutError, match="handshake"):
            await bounded(connect_adbd("127.0.0.1", port, host_key, timeout=0.5))
    finally:
        server.close()


async def test_eof_during_the_handshake(memory_transport, host_key):
    client = AdbClient(memory_transport, host_key)
    connecting = asyncio.create_task(client.connect(timeout=3))
    await memory_transport.device_receive()
    memory_transport.device_eof()
    with pytest.raises(AdbError, match="closed the connection during the handshake"):
        await bounded(connecting)


async def test_stls_is_refused_with_the_tls_message(memory_transport, host_key):
    client = AdbClient(memory_transport, host_key)
    connecting = asyncio.create_task(client.connect(timeout=3))
    await memory_transport.device_receive()
    memory_transport.device_send(AdbPacket(Command.STLS, 0x01000000, 0))
    with pytest.raises(AdbError, match="wireless-debugging TLS is not supported, use USB or `adb tcpip`"):
        await bounded(connecting)


async def test_garbage_after_online_ends_open_streams_with_the_reason(memory_transport, host_key):
    client = await online_client(memory_transport, host_key)
    stream = await accepted_stream(memory_transport, client, "exec:cat x")
    memory_transport.device_send(b"\x00" * 64)
    with pytest.raises(AdbError, match="not ADB"):
        await bounded(stream.read(timeout=3))
    with pytest.raises(AdbError, match="not connected"):
        await client.open_stream("shell:")


async def test_open_without_answer_times_out_and_refused_open_is_clear(memory_transport, host_key):
    client = await online_client(memory_transport, host_key)
    with pytest.raises(AdbTimeoutError, match="did not answer OPEN"):
        await bounded(client.open_stream("exec:x", timeout=0.3))
    opening = asyncio.create_task(client.open_stream("jdwp:1"))
    while (request := await memory_transport.device_receive()).payload != b"jdwp:1\x00":
        pass
    memory_transport.device_send(AdbPacket(Command.CLSE, 0, request.arg0), checksum=False)
    with pytest.raises(AdbError, match="refused the service 'jdwp:1'"):
        await bounded(opening)


async def test_a_silent_stream_read_times_out(memory_transport, host_key):
    client = await online_client(memory_transport, host_key)
    stream = await accepted_stream(memory_transport, client, "exec:sleep 100")
    with pytest.raises(AdbTimeoutError, match=r"sent nothing for 0\.2 s"):
        await stream.read(timeout=0.2)


async def test_shell_closed_before_its_exit_code(memory_transport, host_key):
    client = await online_client(memory_transport, host_key)
    running = asyncio.create_task(shell(client, "echo hi", timeout=3))
    request = await accept_open(memory_transport)
    assert request.payload == b"shell,v2,raw:echo hi\x00"
    close_stdin = await memory_transport.device_receive()
    assert close_stdin.payload == encode_shell_packet(ShellId.CLOSE_STDIN)
    packet = encode_shell_packet(ShellId.STDOUT, b"hi\n")
    memory_transport.device_send(AdbPacket(Command.WRTE, 500, request.arg0, packet[:4]), checksum=False)
    memory_transport.device_send(AdbPacket(Command.CLSE, 500, request.arg0), checksum=False)
    with pytest.raises(AdbError, match="closed the shell before sending an exit code"):
        await bounded(running)


async def test_sync_pull_cut_mid_transfer(memory_transport, host_key):
    client = await online_client(memory_transport, host_key)
    pulling = asyncio.create_task(_pull(client, "/sdcard/x"))
    request = await accept_open(memory_transport)
    assert (await memory_transport.device_receive()).payload == b"RECV\x09\x00\x00\x00/sdcard/x"
    data = b"DATA" + struct.pack("<I", 1000) + b"z" * 400
    memory_transport.device_send(AdbPacket(Command.WRTE, 500, request.arg0, data), checksum=False)
    memory_transport.device_send(AdbPacket(Command.CLSE, 0, request.arg0), checksum=False)
    with pytest.raises(AdbError, match="in the middle of a message"):
        await bounded(pulling)


async def _pull(client, path: str) -> bytes:
    async with await SyncClient.open(client, timeout=3) as sync:
        return await sync.pull(path)


async def test_connection_lost_mid_transfer(memory_transport, host_key):
    client = await online_client(memory_transport, host_key)
    reading = asyncio.create_task(exec_out(client, "cat big", timeout=3))
    request = await accept_open(memory_transport)
    memory_transport.device_send(AdbPacket(Command.WRTE, 500, request.arg0, b"part"), checksum=False)
    memory_transport.device_eof()
    with pytest.raises(AdbError, match="the phone closed the connection"):
        await bounded(reading)


async def test_a_transport_that_raises_on_receive(host_key):
    class Broken:
        capabilities = PLAIN_TRANSPORT

        async def send(self, chunk: bytes) -> None:
            pass

        async def receive(self) -> bytes:
            raise ConnectionError("USB device disconnected")

        async def close(self) -> None:
            pass

    client = AdbClient(Broken(), host_key)
    with pytest.raises(AdbError, match="USB device disconnected"):
        await bounded(client.connect(timeout=2))


async def test_tcp_peer_closing_mid_stream_is_reported(sim, host_key):
    client = await connect_adbd("127.0.0.1", sim.port, host_key)
    try:
        stream = await client.open_stream("shell,v2,raw:cat")  # waits for stdin
        for connection in list(sim._connections.values()):
            connection.abort("test cuts the cable")
        with pytest.raises(AdbError, match="closed the connection"):
            await bounded(stream.read(timeout=3))
    finally:
        await client.close()
    assert isinstance(client.transport, TcpTransport)


# ----- delayed ack, end to end through the client ------------------------------------------------


async def test_delayed_ack_through_the_client(memory_transport, host_key):
    client = await online_client(memory_transport, host_key, banner=BANNER + b",delayed_ack")
    assert "delayed_ack" in client.features
    opening = asyncio.create_task(client.open_stream("exec:cat"))
    request = await accept_open(memory_transport, credit=struct.pack("<i", 3000))
    assert request.arg1 == DELAYED_ACK_WINDOW
    stream = await bounded(opening)
    # The device sends several WRTEs without waiting (its budget is our 32 MiB window).
    for part in (b"a" * 1000, b"b" * 2000, b"c" * 500):
        memory_transport.device_send(AdbPacket(Command.WRTE, 500, request.arg0, part), checksum=False)
    received = b""
    while len(received) < 3500:
        received += await stream.read(timeout=3)
    okays = [await memory_transport.device_receive() for _ in range(3)]
    assert [(p.command, struct.unpack("<i", p.payload)[0]) for p in okays] == [
        (Command.OKAY, 1000),
        (Command.OKAY, 2000),
        (Command.OKAY, 500),
    ]
    # Our writes burst up to the device's credit of 3000 bytes, then wait for its OKAY.
    await stream.write(b"x" * 2000)
    await stream.write(b"y" * 2000)
    await stream.write(b"z" * 2000)
    writes = [await memory_transport.device_receive() for _ in range(2)]
    assert [len(p.payload) for p in writes] == [2000, 2000]
    with pytest.raises(TimeoutError):
        await memory_transport.device_receive(timeout=0.2)
    memory_transport.device_send(
        AdbPacket(Command.OKAY, 500, request.arg0, struct.pack("<i", 2000)), checksum=False
    )
    assert (await memory_transport.device_receive()).payload == b"z" * 2000
    await client.close()


# ----- exec_into hands chunks to its sink as they arrive ----------------------------------------------


async def test_exec_into_a_failing_sink_fails_the_call_and_closes_the_stream(memory_transport, host_key):
    client = await online_client(memory_transport, host_key)
    calls: list[bytes] = []

    def sink(chunk: bytes) -> None:
        calls.append(bytes(chunk))
        raise OSError("disk full")

    running = asyncio.create_task(exec_into(client, "cat big", sink, timeout=3))
    request = await accept_open(memory_transport)
    memory_transport.device_send(AdbPacket(Command.WRTE, 500, request.arg0, b"first"))
    memory_transport.device_send(AdbPacket(Command.WRTE, 500, request.arg0, b"second"))
    with pytest.raises(OSError, match="disk full"):
        await bounded(running)
    assert calls == [b"first"]  # nothing more reaches a sink that failed
    while (await memory_transport.device_receive(timeout=3)).command != Command.CLSE:
        pass  # the OKAYs of what arrived, then our end closes
    await client.close()


async def test_exec_into_a_silent_phone_times_out_even_after_some_output(memory_transport, host_key):
    client = await online_client(memory_transport, host_key)
    stream_opening = asyncio.create_task(client.open_stream("exec:cat slow"))
    request = await accept_open(memory_transport)
    stream = await bounded(stream_opening)
    received: list[bytes] = []
    stream.consume(received.append)
    memory_transport.device_send(AdbPacket(Command.WRTE, 500, request.arg0, b"some"))
    with pytest.raises(AdbTimeoutError, match=r"exec:cat slow: the phone sent nothing for 0\.3 s"):
        await bounded(stream.consumed(0.3))
    assert received == [b"some"]
    await client.close()
