"""`screencap` and `uiautomator dump`: the screen as PNG or raw, the nodes as XML, as Android writes them."""

from __future__ import annotations

import re
import struct

from tests.sim_android.conftest import Harness
from tests.ui_corpus.shapes import FLAGS


def test_raw_screencap_has_the_16_byte_header_then_rgba(h: Harness) -> None:
    raw = h.run("screencap").stdout
    width, height, fmt, space = struct.unpack("<4I", raw[:16])
    assert (width, height, fmt, space) == (1080, 2400, 1, 1)
    assert len(raw) == 16 + 1080 * 2400 * 4


def test_screencap_to_files(h: Harness) -> None:
    assert h.run("screencap", "-p", "/sdcard/a.png").exit_code == 0
    assert h.fs.files["/sdcard/a.png"].startswith(b"\x89PNG\r\n\x1a\n")
    assert h.run("screencap", "/sdcard/b.png").exit_code == 0
    assert h.fs.files["/sdcard/b.png"] == h.fs.files["/sdcard/a.png"]
    assert h.run("screencap", "/data/local/tmp/raw").exit_code == 0
    assert h.fs.files["/data/local/tmp/raw"][:8] == struct.pack("<2I", 1080, 2400)
    missing = h.run("screencap", "-p", "/nope/x.png")
    assert missing.exit_code == 1 and b"No such file or directory" in missing.stderr
    assert h.run("screencap", "-x").exit_code == 1


def test_uiautomator_dump_writes_the_default_file_with_androids_message(h: Harness) -> None:
    result = h.run("uiautomator", "dump")
    assert result.stdout == b"UI hierchary dumped to: /sdcard/window_dump.xml\n"
    xml = h.fs.files["/sdcard/window_dump.xml"].decode()
    assert xml.startswith(
        "<?xml version='1.0' encoding='UTF-8' standalone='yes' ?><hierarchy rotation=\"0\">"
    )
    first = re.search(r"<node [^>]*>", xml)
    assert first is not None
    names = re.findall(r' ([a-z-]+)="', first.group(0))
    assert names == ["index", "text", "resource-id", "class", "package", "content-desc", *FLAGS, "bounds"]
    assert h.run("uiautomator", "dump", "/data/local/tmp/ui.xml").stdout.endswith(b"/data/local/tmp/ui.xml\n")
    assert h.fs.files["/data/local/tmp/ui.xml"] == h.fs.files["/sdcard/window_dump.xml"]


def test_uiautomator_dump_to_dev_tty_prints_the_xml(h: Harness) -> None:
    out = h.run("uiautomator", "dump", "/dev/tty").stdout
    assert out.startswith(b"<?xml") and out.endswith(b"</hierarchy>UI hierchary dumped to: /dev/tty\n")
