"""The simulated phone's in-memory file system."""

import stat

import pytest

from phone_agent.sim.vfs import VirtualFileSystem


def test_default_tree_has_androids_directories():
    fs = VirtualFileSystem()
    for path in ("/sdcard", "/sdcard/Download", "/data/local/tmp", "/system/bin"):
        assert fs.is_dir(path)
    assert stat.S_IMODE(fs.stat("/system/bin/sh").mode) == 0o755


def test_files_round_trip_with_mode_size_and_mtime():
    fs = VirtualFileSystem()
    fs.write_file("/sdcard/a.txt", b"hello", mode=0o600, mtime=1234)
    info = fs.stat("/sdcard/a.txt")
    assert (stat.S_ISREG(info.mode), stat.S_IMODE(info.mode), info.size, info.mtime) == (True, 0o600, 5, 1234)
    fs.write_file("/sdcard/a.txt", b"!", append=True)
    assert fs.read_file("/sdcard/a.txt") == b"hello!"


def test_errors_match_the_filestore_contract():
    fs = VirtualFileSystem()
    with pytest.raises(FileNotFoundError):
        fs.read_file("/sdcard/none")
    with pytest.raises(IsADirectoryError):
        fs.read_file("/sdcard")
    with pytest.raises(FileNotFoundError):
        fs.write_file("/sdcard/no/dir/f", b"")
    with pytest.raises(FileExistsError):
        fs.mkdir("/sdcard")


def test_remove_and_reset():
    fs = VirtualFileSystem()
    fs.mkdir("/sdcard/x/y", parents=True)
    with pytest.raises(IsADirectoryError):
        fs.remove("/sdcard/x")
    fs.remove("/sdcard/x", recursive=True)
    assert not fs.exists("/sdcard/x")
    fs.write_file("/sdcard/f", b"")
    fs.reset()
    assert not fs.exists("/sdcard/f")
    assert fs.normalize("../a/./b", "/sdcard") == "/a/b"
