"""The pure scrcpy modules run unchanged in Pyodide (Python 3.14), the page's runtime.

Loads the vendored Pyodide in Node with ``phone_agent/scrcpy`` alone in its file system and parses a
stream the device-side encoders laid out. Skipped when Node or the vendored Pyodide is missing.
"""

from __future__ import annotations

import json

from tests.support import run_in_node_pyodide

CHECK = r"""
import json, sys
sys.path.insert(0, "/mnt/py")
from phone_agent.scrcpy import control, h264, protocol as p
config = b"\x00\x00\x00\x01\x67\x42\xc0\x1f\x00\x00\x00\x01\x68\xce"
stream = (b"\0" + p.encode_device_meta("sim") + p.encode_codec_meta(p.CODEC_H264, 64, 128)
          + p.encode_packet(config, 0, config=True))
events = p.VideoStreamParser().receive_data(stream)
touch = control.ControlMessageDecoder().receive_data(control.inject_touch(0, 1, 2, 64, 128))[0]
size = [events[1].width, events[1].height]
print(json.dumps({"version": sys.version_info[:2], "name": events[0].name, "size": size,
                  "codec": h264.avc_codec_string(events[2].data), "touch": [touch.x, touch.y]}))
"""


def test_the_scrcpy_modules_work_in_pyodide(tmp_path):
    done = run_in_node_pyodide(CHECK, tmp_path, package="scrcpy")
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {
        "version": [3, 14],
        "name": "sim",
        "size": [64, 128],
        "codec": "avc1.42C01F",
        "touch": [1, 2],
    }
