"""The pure ADB modules run unchanged in Pyodide (Python 3.14), the page's runtime.

Loads the vendored Pyodide in Node with ``phone_agent/adb`` alone in its file system and runs a packet
round trip and an RSA sign/verify there. Skipped when Node or the vendored Pyodide is missing.
"""

from __future__ import annotations

import json

from tests.support import run_in_node_pyodide

CHECK = """
import json, os, sys
sys.path.insert(0, "/mnt/py")
from phone_agent.adb.packet import AdbPacket, AdbPacketParser, Command
from phone_agent.adb.keys import AdbPublicKey, generate_private_key
packet = AdbPacket(Command.WRTE, 1, 2, os.urandom(5000))
parser = AdbPacketParser()
parser.receive_data(packet.encode()[:100]); parser.receive_data(packet.encode()[100:])
key = generate_private_key()
token = os.urandom(20)
public = AdbPublicKey.decode(key.public_key("page@browser").encode())
print(json.dumps({"version": sys.version_info[:2], "parsed": parser.packets_received() == [packet],
                  "verified": public.verify(token, key.sign(token))}))
"""


def test_packet_and_keys_work_in_pyodide(tmp_path):
    done = run_in_node_pyodide(CHECK, tmp_path, package="adb")
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"version": [3, 14], "parsed": True, "verified": True}
