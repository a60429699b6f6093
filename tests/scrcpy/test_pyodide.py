"""The pure scrcpy modules run unchanged in Pyodide (Python 3.14), the page's runtime.

Loads the vendored Pyodide in Node, copies ``phone_agent/scrcpy`` into its file system and parses a
stream the device-side encoders laid out. Skipped when Node or the vendored Pyodide is missing.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from tests.support import ROOT

PYODIDE = ROOT / "static" / "vendor" / "pyodide"
PACKAGE = ROOT / "py" / "phone_agent" / "scrcpy"

SCRIPT = """
import { loadPyodide } from "%(pyodide)s/pyodide.mjs";
import fs from "node:fs";
const py = await loadPyodide({ indexURL: "%(pyodide)s/" });
py.FS.mkdirTree("/home/pyodide/phone_agent/scrcpy");
py.FS.writeFile("/home/pyodide/phone_agent/__init__.py", "");
for (const name of %(files)s) {
  py.FS.writeFile(`/home/pyodide/phone_agent/scrcpy/${name}`, fs.readFileSync(`%(package)s/${name}`));
}
console.log(await py.runPythonAsync(`
import json, sys
sys.path.insert(0, "/home/pyodide")
from phone_agent.scrcpy import control, h264, protocol as p
config = b"\\\\x00\\\\x00\\\\x00\\\\x01\\\\x67\\\\x42\\\\xc0\\\\x1f\\\\x00\\\\x00\\\\x00\\\\x01\\\\x68\\\\xce"
stream = (b"\\\\0" + p.encode_device_meta("sim") + p.encode_codec_meta(p.CODEC_H264, 64, 128)
          + p.encode_packet(config, 0, config=True))
events = p.VideoStreamParser().receive_data(stream)
touch = control.ControlMessageDecoder().receive_data(control.inject_touch(0, 1, 2, 64, 128))[0]
size = [events[1].width, events[1].height]
json.dumps({"version": sys.version_info[:2], "name": events[0].name, "size": size,
            "codec": h264.avc_codec_string(events[2].data), "touch": [touch.x, touch.y]})
`));
"""


def test_the_scrcpy_modules_work_in_pyodide(tmp_path):
    node = shutil.which("node")
    if node is None or not (PYODIDE / "pyodide.mjs").exists():
        pytest.skip("needs Node and the vendored Pyodide (scripts/setup)")
    files = sorted(p.name for p in PACKAGE.glob("*.py"))
    script = tmp_path / "check.mjs"
    script.write_text(SCRIPT % {"pyodide": PYODIDE.as_posix(), "package": PACKAGE.as_posix(), "files": files})
    done = subprocess.run([node, str(script)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {
        "version": [3, 14],
        "name": "sim",
        "size": [64, 128],
        "codec": "avc1.42C01F",
        "touch": [1, 2],
    }
