"""scripts/setup vendors the official scrcpy-server 2.5 (the file the page pushes and the sim knows)."""

from __future__ import annotations

import hashlib

from phone_agent.scrcpy.protocol import SERVER_SHA256, SERVER_SIZE
from tests.support import ROOT


def test_the_vendored_server_is_scrcpy_2_5():
    jar = ROOT / "static" / "vendor" / "scrcpy" / "scrcpy-server"
    assert jar.exists(), "run scripts/setup"
    data = jar.read_bytes()
    assert len(data) == SERVER_SIZE
    assert hashlib.sha256(data).hexdigest() == SERVER_SHA256
