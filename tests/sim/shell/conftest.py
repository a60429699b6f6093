"""The shell under test: a session on a fresh virtual file system with an echoing phone."""

from __future__ import annotations

import pytest

from phone_agent.sim.shell.interpreter import Shell
from phone_agent.sim.vfs import VirtualFileSystem
from tests.sim.shell.support import EchoPhone


@pytest.fixture
def sh() -> Shell:
    return Shell(VirtualFileSystem(), EchoPhone())
