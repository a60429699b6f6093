"""The pure ADB modules run unchanged in Pyodide (Python 3.14), the page's runtime.

Loads the vendored Pyodide in Node, copies ``phone_agent/adb`` into its file system and runs a
packet round trip and an RSA sign/verify there. Skipped when Node or the vendored Pyodide is missing.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PYODIDE = ROOT / "static" / "vendor" / "pyodide"
ADB_PACKAGE = ROOT / "py" / "phone_agent" / "adb"

SCRIPT = """
import { loadPyodide } from "%(pyodide)s/pyodide.mjs";
import fs from "node:fs";
const py = await loadPyodide({ indexURL: "%(pyodide)s/" });
py.FS.mkdirTree("/home/pyodide/phone_agent/adb");
py.FS.writeFile("/home/pyodide/phone_agent/__init__.py", "");
for (const name of %(files)s) {
  py.FS.writeFile(`/home/pyodide/phone_agent/adb/${name}`, fs.readFileSync(`%(package)s/${name}`));
}
console.log(await py.runPythonAsync(`
import json, os, sys
sys.path.insert(0, "/home/pyodide")
from phone_agent.adb.packet import AdbPacket, AdbPacketParser, Command
from phone_agent.adb.keys import AdbPublicKey, generate_private_key
packet = AdbPacket(Command.WRTE, 1, 2, os.urandom(5000))
parser = AdbPacketParser()
parser.receive_data(packet.encode()[:100]); parser.receive_data(packet.encode()[100:])
key = generate_private_key()
token = os.urandom(20)
public = AdbPublicKey.decode(key.public_key("page@browser").encode())
json.dumps({"version": sys.version_info[:2], "parsed": parser.packets_received() == [packet],
            "verified": public.verify(token, key.sign(token))})
`));
"""


def test_packet_and_keys_work_in_pyodide(tmp_path):
    node = shutil.which("node")
    if node is None or not (PYODIDE / "pyodide.mjs").exists():
        pytest.skip("needs Node and the vendored Pyodide (scripts/setup)")
    files = sorted(p.name for p in ADB_PACKAGE.glob("*.py"))  # the whole package, as the page loads it
    script = tmp_path / "check.mjs"
    script.write_text(
        SCRIPT % {"pyodide": PYODIDE.as_posix(), "package": ADB_PACKAGE.as_posix(), "files": files}
    )
    done = subprocess.run([node, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"version": [3, 14], "parsed": True, "verified": True}
