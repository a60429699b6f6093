"""shell: and exec: at the message level: shell-protocol packets, stdin, exit codes, the PTY session."""

from __future__ import annotations

import struct

from phone_agent.adb.packet import AdbPacket, Command
from phone_agent.adb.shell_protocol import ShellPacketDecoder
from phone_agent.sim.services import shell_packet
from tests.sim.raw_host import RawHost

STDIN, STDOUT, STDERR, EXIT, CLOSE_STDIN, WINDOW_SIZE = range(6)


async def collect(host: RawHost, local: int, remote: int, until_exit: bool = True) -> list[tuple[int, bytes]]:
    """Shell-protocol packets the sim sends until it closes the stream."""
    reader, packets = ShellPacketDecoder(), []
    while True:
        packet = await host.recv()
        if packet.command == Command.CLSE:
            return packets
        if packet.command == Command.WRTE:
            packets += [(p.id, p.data) for p in reader.receive_data(packet.payload)]
            host.send(AdbPacket(Command.OKAY, local, remote))


def joined(packets: list[tuple[int, bytes]], packet_id: int) -> bytes:
    return b"".join(data for pid, data in packets if pid == packet_id)


async def send_stdin(host: RawHost, local: int, remote: int, data: bytes) -> None:
    host.send(AdbPacket(Command.WRTE, local, remote, data))
    okay = await host.recv()
    assert okay.command == Command.OKAY, okay


async def test_v2_separates_stdout_stderr_and_exit_code(raw_host):
    local, remote = await raw_host.open("shell,v2,raw:echo out; echo err >&2; exit 7")
    packets = await collect(raw_host, local, remote)
    assert joined(packets, STDOUT) == b"out\n"
    assert joined(packets, STDERR) == b"err\n"
    assert packets[-1] == (EXIT, b"\x07")


async def test_v2_stdin_split_across_writes_until_close_stdin(raw_host):
    local, remote = await raw_host.open("shell,v2,raw:cat > /data/local/tmp/in; cat /data/local/tmp/in")
    stream = (
        shell_packet(WINDOW_SIZE, b"24x80,0x0\x00")
        + shell_packet(STDIN, b"hello ")
        + shell_packet(STDIN, b"world")
    )
    stream += shell_packet(CLOSE_STDIN)
    for cut in range(0, len(stream), 7):  # packets do not line up with WRTEs
        await send_stdin(raw_host, local, remote, stream[cut : cut + 7])
    packets = await collect(raw_host, local, remote)
    assert joined(packets, STDOUT) == b"hello world"
    assert packets[-1] == (EXIT, b"\x00")


async def test_v1_shell_and_exec_are_raw_with_stderr_merged(raw_host):
    assert await raw_host.run("shell:echo a; nosuch; echo b") == (
        b"a\n/system/bin/sh: nosuch: inaccessible or not found\nb\n"
    )
    assert await raw_host.run("exec:echo 'x  y'") == b"x  y\n"


async def test_pty_session_echoes_and_uses_crlf(sim, raw_host):
    local, remote = await raw_host.open("shell,v2,TERM=xterm-256color,pty:")
    prompt = f"{sim.phone.props['ro.product.device']}:/ $ ".encode()
    reader, out = ShellPacketDecoder(), bytearray()

    async def read_until(marker: bytes) -> bytes:
        while not out.endswith(marker):
            packet = await raw_host.recv()
            assert packet.command == Command.WRTE, packet
            raw_host.send(AdbPacket(Command.OKAY, local, remote))
            out.extend(b"".join(p.data for p in reader.receive_data(packet.payload) if p.id == STDOUT))
        text = bytes(out)
        out.clear()
        return text

    assert await read_until(prompt) == prompt
    await send_stdin(raw_host, local, remote, shell_packet(STDIN, b"echo hx\x7fi\r"))
    assert await read_until(prompt) == b"echo hx\x08 \x08i\r\nhi\r\n" + prompt
    await send_stdin(raw_host, local, remote, shell_packet(STDIN, b"exit 4\r"))
    packets = await collect(raw_host, local, remote)
    assert joined(packets, STDOUT) == b"exit 4\r\n"
    assert packets[-1] == (EXIT, b"\x04")


async def test_exit_packet_is_one_byte(raw_host):
    local, remote = await raw_host.open("shell,v2,raw:exit 300")
    packets = await collect(raw_host, local, remote)
    assert packets[-1] == (EXIT, struct.pack("B", 300 & 0xFF))
