"""Files of any size through the relay: ``phone-agent mcp`` (stdio) streams a ``path`` in chunks through
the server's transfers while the page pulls or pushes them over ADB sync — above the 64 MiB an answer
carries inline — with progress, each result checked with Debian's adb; a large APK from a path goes into
an install session. (A page that leaves mid-transfer: tests/server/test_transfers.py.)
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest

from phone_agent.adb.dev_loop import STREAMED_INSTALL_MIN
from phone_agent.tools.files import PUSH_MAX
from tests.adb_host.test_streamed_files import big_apk
from tests.browser.rigs import PhoneRig as Rig

pytestmark = pytest.mark.browser
# Over the 64 MiB an answer carries inline; bench/bench_big_files.py runs this test at 256 MiB (push's limit).
SIZE = min(int(os.environ.get("BIG_MIB", "80")) * 1024 * 1024 + 12345, PUSH_MAX)


def md5_of(path: Path) -> str:
    digest = hashlib.md5()
    with path.open("rb") as file:
        while chunk := file.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def big_file(path: Path, size: int) -> Path:
    block = os.urandom(1 << 20)
    with path.open("wb") as file:
        for index in range(size >> 20):
            file.write(index.to_bytes(8, "big") + block[8:])  # no two MiB alike
        file.write(block[: size & ((1 << 20) - 1)])
    return path


async def call(ctx: Rig, tool: str, args: dict, progress: list[str]) -> dict:
    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append(message or "")

    answer = await ctx.session.call_tool(tool, args, progress_callback=on_progress)
    return answer.model_dump(by_alias=True, mode="json", exclude_none=True)


async def test_a_file_over_64_mib_is_pulled_and_pushed_in_chunks(fresh, tmp_path):
    ctx = fresh
    source = big_file(tmp_path / "big.bin", SIZE)
    await ctx.adb.output("-s", ctx.serial, "push", str(source), "/sdcard/Download/big.bin", timeout=120)

    progress: list[str] = []
    started = time.monotonic()
    pulled = await call(
        ctx, "pull_file", {"devicePath": "/sdcard/Download/big.bin", "path": str(tmp_path)}, progress
    )
    pull_s = time.monotonic() - started
    assert not pulled.get("isError"), pulled
    answer = pulled["structuredContent"]
    assert "contentBase64" not in answer and Path(answer["path"]) == tmp_path / "big.bin"
    assert answer["size"] == SIZE
    assert md5_of(Path(answer["path"])) == md5_of(source)
    assert len(progress) >= 5 and "receiving /sdcard/Download/big.bin: 100%" in progress[-1], progress
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".part")] == []

    progress.clear()
    started = time.monotonic()
    pushed = await call(
        ctx, "push_file", {"devicePath": "/sdcard/Download/up.bin", "path": str(source)}, progress
    )
    push_s = time.monotonic() - started
    assert not pushed.get("isError"), pushed
    assert pushed["structuredContent"]["size"] == SIZE
    assert len(progress) >= 5 and "100%" in progress[-1], progress
    await ctx.adb.output(
        "-s", ctx.serial, "pull", "/sdcard/Download/up.bin", str(tmp_path / "check.bin"), timeout=120
    )
    assert md5_of(tmp_path / "check.bin") == md5_of(source)
    print(f"\n{SIZE / 2**20:.1f} MiB through the page: pull {pull_s:.1f} s, push {push_s:.1f} s")


async def test_a_large_apk_from_a_path_installs_through_an_install_session(fresh, tmp_path):
    ctx = fresh
    apk = tmp_path / "big.apk"
    apk.write_bytes(big_apk("com.example.bigapp", STREAMED_INSTALL_MIN + 4096))
    progress: list[str] = []
    installed = await call(ctx, "install_app", {"path": str(apk)}, progress)
    assert not installed.get("isError"), installed
    assert installed["structuredContent"]["packageName"] == "com.example.bigapp"
    assert "package:com.example.bigapp" in (await ctx.adb_shell("pm list packages")).split()
    assert any("receiving the APK: 100%" in line for line in progress), progress
    assert "phone-agent-" not in await ctx.adb_shell("ls /data/local/tmp")  # streamed, not pushed first
    await ctx.ok("mcp", "uninstall_app", packageName="com.example.bigapp")
