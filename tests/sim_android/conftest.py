"""Fixtures for the virtual phone's tests: a phone with a pinned clock, a dict-backed
file store, and helpers to run commands and read the UI dump."""

from __future__ import annotations

import io
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import pytest
from PIL import Image

from phone_agent.device.shell_result import ShellResult
from phone_agent.sim.android.phone import VirtualPhone


class DictFileStore:
    """A file store with directories /sdcard and /data/local/tmp."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}
        self.dirs = {"/", "/sdcard", "/data", "/data/local", "/data/local/tmp", "/dev"}

    def read_file(self, path: str) -> bytes:
        if path in self.dirs:
            raise IsADirectoryError(path)
        try:
            return self.files[path]
        except KeyError:
            raise FileNotFoundError(path) from None

    def write_file(self, path: str, data: bytes) -> None:
        if path in self.dirs:
            raise IsADirectoryError(path)
        if (path.rsplit("/", 1)[0] or "/") not in self.dirs:
            raise FileNotFoundError(path)
        self.files[path] = data


@dataclass
class Node:
    """A node of the uiautomator dump."""

    attrs: dict[str, str]

    @property
    def bounds(self) -> tuple[int, int, int, int]:
        left, right = self.attrs["bounds"][1:-1].split("][")
        x1, y1 = map(int, left.split(","))
        x2, y2 = map(int, right.split(","))
        return x1, y1, x2, y2

    @property
    def center(self) -> tuple[int, int]:
        x1, y1, x2, y2 = self.bounds
        return (x1 + x2) // 2, (y1 + y2) // 2

    def __getitem__(self, key: str) -> str:
        return self.attrs[key]


class Harness:
    """A phone with a file store; `sh` runs one command, `nodes` reads the dump."""

    def __init__(self) -> None:
        self.phone = VirtualPhone()
        self.phone.clock = lambda: "12:00"
        self.fs = DictFileStore()

    def run(self, *argv: str, stdin: bytes = b"") -> ShellResult:
        return self.phone.run(list(argv), stdin, self.fs)

    def out(self, *argv: str) -> str:
        result = self.run(*argv)
        assert result.exit_code == 0, result
        return result.stdout.decode()

    def nodes(self) -> list[Node]:
        assert self.run("uiautomator", "dump").exit_code == 0
        root = ET.fromstring(self.fs.files["/sdcard/window_dump.xml"])
        return [Node(dict(e.attrib)) for e in root.iter("node")]

    def node(self, **wanted: str) -> Node:
        """The first node whose attributes (resource_id → resource-id) match."""
        want = {k.replace("_", "-"): v for k, v in wanted.items()}
        for node in self.nodes():
            if all(node.attrs.get(k) == v for k, v in want.items()):
                return node
        raise AssertionError(f"no node with {want}")

    def tap(self, node: Node) -> None:
        x, y = node.center
        assert self.run("input", "tap", str(x), str(y)).exit_code == 0

    def png(self) -> bytes:
        result = self.run("screencap", "-p")
        assert result.exit_code == 0
        return result.stdout

    def image(self) -> Image.Image:
        return Image.open(io.BytesIO(self.png())).convert("RGB")


@pytest.fixture
def h() -> Harness:
    return Harness()
