"""PyPI's adb-shell as a second, independent host: protocol 0x01000000 with checksums, v1 shell, sync."""

from __future__ import annotations

import asyncio
import os
import stat

import pytest

adb_shell = pytest.importorskip("adb_shell")
from adb_shell.adb_device import AdbDeviceTcp  # noqa: E402
from adb_shell.auth.keygen import keygen  # noqa: E402
from adb_shell.auth.sign_pythonrsa import PythonRSASigner  # noqa: E402


@pytest.fixture(scope="module")
def signer(tmp_path_factory):
    path = tmp_path_factory.mktemp("adb-shell-key") / "adbkey"
    keygen(str(path))
    return PythonRSASigner.FromRSAKeyPath(str(path))


@pytest.fixture
async def device(sim, signer):
    device = AdbDeviceTcp("127.0.0.1", sim.port, default_transport_timeout_s=10.0)
    assert await asyncio.to_thread(device.connect, rsa_keys=[signer], auth_timeout_s=10.0)
    try:
        yield device
    finally:
        await asyncio.to_thread(device.close)


async def test_connects_with_checksummed_v1_protocol_and_its_own_key(sim, device):
    (connection,) = sim.connections()
    assert connection["version"] == "0x01000000"
    assert connection["state"] == "device"  # adbd's name for online
    assert len(sim.trusted_keys) == 2  # the tests' key and adb-shell's, accepted on RSAPUBLICKEY


async def test_v1_shell(sim, device):
    out = await asyncio.to_thread(device.shell, "getprop ro.product.model")
    assert out.strip() == sim.phone.props["ro.product.model"]
    out = await asyncio.to_thread(device.shell, "echo hi && nosuch; echo $?")
    assert out == "hi\n/system/bin/sh: nosuch: inaccessible or not found\n127\n"


async def test_sync_push_pull_list_stat(device, tmp_path):
    data = os.urandom(3 * 1024 * 1024 + 17)
    (tmp_path / "in.bin").write_bytes(data)
    await asyncio.to_thread(device.push, str(tmp_path / "in.bin"), "/data/local/tmp/in.bin", st_mode=0o100644)
    mode, size, _mtime = await asyncio.to_thread(device.stat, "/data/local/tmp/in.bin")
    assert stat.S_ISREG(mode) and size == len(data)
    entries = await asyncio.to_thread(device.list, "/data/local/tmp")
    names = {bytes(entry.filename).decode() for entry in entries}
    assert {"in.bin", ".", ".."} <= names
    await asyncio.to_thread(device.pull, "/data/local/tmp/in.bin", str(tmp_path / "out.bin"))
    assert (tmp_path / "out.bin").read_bytes() == data


async def test_exec_out_binary(device):
    out = await asyncio.to_thread(device.exec_out, "screencap -p", decode=False)
    assert out.startswith(b"\x89PNG\r\n\x1a\n")
