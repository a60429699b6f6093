"""The pure ADB host runs unchanged in Pyodide: the vendored Pyodide (Python 3.14) under Node loads
``phone_agent.adb`` from py/ and drives AdbClient against a scripted device (auth prompt, delayed
ack, shell v2 split across WRTEs, exec), with headers handed to the transport as 24-byte chunks."""

from __future__ import annotations

from tests.support import run_in_node_pyodide

CHECK = r"""
import asyncio, struct, sys
sys.path.insert(0, "/mnt/py")
from phone_agent.adb.client import AdbClient
from phone_agent.adb.transport import PLAIN_TRANSPORT
from phone_agent.adb.keys import generate_private_key
from phone_agent.adb.packet import VERSION, AdbPacket, AdbPacketParser, AuthType, Command
from phone_agent.adb.services import exec_out, shell
from phone_agent.adb.shell_protocol import ShellId, encode_shell_packet
import phone_agent.adb.device, phone_agent.adb.smart_socket, phone_agent.adb.keystore  # importable


class Pipe:
    capabilities = PLAIN_TRANSPORT

    def __init__(self):
        self.to_device, self.to_host, self.sizes = asyncio.Queue(), asyncio.Queue(), []

    async def send(self, chunk):
        self.sizes.append(len(chunk))
        await self.to_device.put(chunk)

    async def receive(self):
        return await self.to_host.get()

    async def close(self):
        self.to_host.put_nowait(b"")


async def device(pipe):
    parser = AdbPacketParser()
    parser.verify_checksum = False  # version 0x01000001: the host sends no checksums once online
    send = lambda p: pipe.to_host.put_nowait(p.encode())
    while True:
        parser.receive_data(await pipe.to_device.get())
        for p in parser.packets_received():
            if p.command == Command.CNXN or (p.command == Command.AUTH and p.arg0 == AuthType.SIGNATURE):
                send(AdbPacket(Command.AUTH, AuthType.TOKEN, 0, bytes(20)))
            elif p.command == Command.AUTH and p.arg0 == AuthType.RSAPUBLICKEY:
                await asyncio.sleep(0.05)
                send(AdbPacket(Command.CNXN, VERSION, 1 << 20, b"device::features=shell_v2,delayed_ack"))
            elif p.command == Command.OPEN:
                assert p.arg1 == 32 << 20, p.arg1
                send(AdbPacket(Command.OKAY, 9, p.arg0, struct.pack("<i", 1 << 20)))
                if p.payload.startswith(b"shell,v2,raw:"):
                    out = encode_shell_packet(ShellId.STDOUT, b"hi\n")
                    out += encode_shell_packet(ShellId.EXIT, b"\x02")
                    send(AdbPacket(Command.WRTE, 9, p.arg0, out[:6]))
                    send(AdbPacket(Command.WRTE, 9, p.arg0, out[6:]))
                else:
                    for i in range(4):
                        send(AdbPacket(Command.WRTE, 9, p.arg0, bytes([i]) * 65536))
                    send(AdbPacket(Command.CLSE, 9, p.arg0))


async def main():
    pipe = Pipe()
    task = asyncio.ensure_future(device(pipe))
    states = []
    client = AdbClient(pipe, generate_private_key(), on_state=lambda s: states.append(s.value))
    await client.connect(timeout=10, auth_timeout=10)
    result = await shell(client, "echo hi")
    data = await exec_out(client, "cat x")
    await client.close()
    task.cancel()
    assert "waiting_for_user" in states and "online" in states, states
    assert (result.stdout, result.exit_code) == (b"hi\n", 2), result
    assert len(data) == 4 * 65536 and data[-1] == 3
    assert pipe.sizes[0] == 24, pipe.sizes[:3]
    print("PYODIDE-OK", sys.version.split()[0])

await main()
"""


def test_the_adb_host_runs_in_pyodide(tmp_path):
    done = run_in_node_pyodide(CHECK, tmp_path)
    assert done.returncode == 0 and "PYODIDE-OK 3.1" in done.stdout, (done.stdout + done.stderr)[-3000:]
