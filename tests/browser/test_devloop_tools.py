"""The developer's loop through the page on both channels: install a real APK, files, logs and crashes,
notifications, recording, and (with the live view on scrcpy) the clipboard and pinch — through
``phone-agent mcp`` (stdio, where ``path`` is a file of this machine that the front reads or writes) and
through WebMCP (bytes as base64), on the simulated phone, each result checked with Debian's adb. Every
error code of these tools is produced on both channels, and HTTP ``/mcp`` refuses a ``path``.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
from pathlib import Path

import av
import pytest

from tests.adb_host.apk_maker import make_apk
from tests.browser.rigs import CHANNELS
from tests.browser.rigs import PhoneRig as Rig
from tests.server.harness import http_session, token

pytestmark = pytest.mark.browser
REAL_APK = Path(__file__).resolve().parents[2] / ".venv" / "test-data" / "app-uiautomator.apk"
UIAUTOMATOR = "com.github.uiautomator"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


async def adb(ctx: Rig, *args: str) -> str:
    return (await ctx.adb.output("-s", ctx.serial, *args, timeout=60)).decode("utf-8", "replace")


async def dump(ctx: Rig) -> str:
    return await ctx.ui_dump()


@pytest.mark.parametrize("channel", CHANNELS)
async def test_a_real_apk_installs_and_uninstalls(fresh, channel):
    ctx = fresh
    source = {"path": str(REAL_APK)} if channel == "mcp" else {"contentBase64": b64(REAL_APK.read_bytes())}
    installed = await ctx.ok(channel, "install_app", **source)
    assert installed == {"packageName": UIAUTOMATOR, "versionName": "2.4.0", "versionCode": 2004001}
    assert f"package:{UIAUTOMATOR}" in (await ctx.adb_shell("pm list packages")).split()
    await ctx.ok(channel, "press_key", key="home")
    assert 'text="ATX"' in await dump(ctx)  # its launcher icon
    await ctx.ok(channel, "uninstall_app", packageName=UIAUTOMATOR)
    assert f"package:{UIAUTOMATOR}" not in (await ctx.adb_shell("pm list packages")).split()


@pytest.mark.parametrize("channel", CHANNELS)
async def test_files_go_both_ways(fresh, channel, tmp_path):
    ctx = fresh
    data = bytes(range(256)) * 1000 + f"from {channel} ✓".encode()
    if channel == "mcp":
        (tmp_path / "up.bin").write_bytes(data)
        pushed = await ctx.ok(
            channel, "push_file", devicePath="/sdcard/Download/up.bin", path=str(tmp_path / "up.bin")
        )
    else:
        pushed = await ctx.ok(
            channel, "push_file", devicePath="/sdcard/Download/up.bin", contentBase64=b64(data)
        )
    assert pushed["size"] == len(data) and pushed["sha256"] == hashlib.sha256(data).hexdigest()
    await adb(ctx, "pull", "/sdcard/Download/up.bin", str(tmp_path / "check.bin"))
    assert md5((tmp_path / "check.bin").read_bytes()) == md5(data)

    (tmp_path / "phone.txt").write_bytes(b"written by Debian's adb\n" * 100)
    await adb(ctx, "push", str(tmp_path / "phone.txt"), "/sdcard/Documents/phone.txt")
    if channel == "mcp":
        pulled = await ctx.ok(
            channel, "pull_file", devicePath="/sdcard/Documents/phone.txt", path=str(tmp_path)
        )
        assert "contentBase64" not in pulled and Path(pulled["path"]) == tmp_path / "phone.txt"
        got = Path(pulled["path"]).read_bytes()
    else:
        pulled = await ctx.ok(channel, "pull_file", devicePath="/sdcard/Documents/phone.txt")
        got = base64.b64decode(pulled["contentBase64"])
    assert md5(got) == md5((tmp_path / "phone.txt").read_bytes()) and pulled["size"] == len(got)
    listed = await ctx.ok(channel, "list_files", devicePath="/sdcard/Documents")
    assert [(e["name"], e["type"], e["size"]) for e in listed["entries"]] == [("phone.txt", "file", len(got))]


@pytest.mark.parametrize("channel", CHANNELS)
async def test_logs_and_a_crash(fresh, channel):
    ctx = fresh
    await ctx.adb_shell(f"log -t PageLoop -p e 'seen through {channel}'")
    lines = (await ctx.ok(channel, "read_logs", grep=f"seen through {channel}", level="E"))["lines"]
    assert [(ln["tag"], ln["level"], ln["message"]) for ln in lines] == [
        ("PageLoop", "E", f"seen through {channel}")
    ]
    await ctx.ok(channel, "open_app", packageName="com.phoneagent.crashdemo")
    await ctx.ok(channel, "tap", target="text=Crash now")
    assert "Crash Demo keeps stopping" in await dump(ctx)
    crashes = (await ctx.ok(channel, "list_crashes", packageName="com.phoneagent.crashdemo"))["crashes"]
    assert len(crashes) == 1 and crashes[0]["kind"] == "crash"
    report = await ctx.ok(channel, "get_crash", id=crashes[0]["id"])
    assert "FATAL" not in report["summary"] and "IllegalStateException" in report["report"]
    assert "FATAL EXCEPTION: main" in await adb(ctx, "logcat", "-d", "-b", "crash")


@pytest.mark.parametrize("channel", CHANNELS)
async def test_notifications_and_the_shade(fresh, channel):
    ctx = fresh
    await ctx.adb_shell(f"cmd notification post -t 'From {channel}' tag1 'Body text'")
    notes = (await ctx.ok(channel, "list_notifications"))["notifications"]
    assert [(n["packageName"], n["title"], n["text"]) for n in notes] == [
        ("com.android.shell", f"From {channel}", "Body text")
    ]
    await ctx.ok(channel, "open_notifications")
    assert "notification_panel" in await dump(ctx) and f"From {channel}" in await dump(ctx)


@pytest.mark.parametrize("channel", CHANNELS)
async def test_a_recording_comes_back_as_mp4(fresh, channel, tmp_path):
    ctx = fresh
    await ctx.ok(channel, "start_recording", maxSeconds=20)
    await ctx.ok(channel, "open_app", packageName="com.android.settings")
    await asyncio.sleep(1.5)
    if channel == "mcp":
        stopped = await ctx.ok(channel, "stop_recording", path=str(tmp_path / "run.mp4"))
        video = Path(stopped["path"]).read_bytes()
    else:
        stopped = await ctx.ok(channel, "stop_recording")
        video = base64.b64decode(stopped["contentBase64"])
    assert stopped["size"] == len(video) and stopped["sha256"] == hashlib.sha256(video).hexdigest()
    with av.open(io.BytesIO(video)) as container:
        assert sum(1 for _ in container.decode(video=0)) >= 10


@pytest.mark.parametrize("channel", CHANNELS)
async def test_every_error_code_of_the_loop(fresh, channel):
    ctx = fresh
    await ctx.fails(channel, "pull_file", "file_not_found", devicePath="/sdcard/none.txt")
    await ctx.fails(channel, "list_files", "file_not_found", devicePath="/sdcard/none")
    await ctx.fails(channel, "pull_file", "permission_denied", devicePath="/data/system/packages.xml")
    await ctx.fails(
        channel, "push_file", "permission_denied", devicePath="/system/x", contentBase64=b64(b"x")
    )
    await ctx.fails(channel, "uninstall_app", "app_not_installed", packageName="com.example.gone")
    await ctx.fails(channel, "clear_app_data", "app_not_installed", packageName="com.example.gone")
    await ctx.fails(
        channel,
        "set_permission",
        "app_not_installed",
        packageName="com.example.gone",
        permission="CAMERA",
        granted=True,
    )
    error = await ctx.fails(
        channel, "install_app", "install_failed", contentBase64=b64(make_apk("com.android.settings"))
    )
    assert error["details"]["reason"] == "INSTALL_FAILED_UPDATE_INCOMPATIBLE"
    error = await ctx.fails(channel, "install_app", "invalid_argument", contentBase64=b64(b"MZ not an apk"))
    assert "the file is not an APK" in error["message"]
    await ctx.fails(channel, "get_clipboard", "unsupported")  # the live view is off: no scrcpy
    await ctx.fails(channel, "pinch", "unsupported", scale=1.5)
    await ctx.fails(channel, "stop_recording", "invalid_argument")
    if channel == "webmcp":  # a path only means something to phone-agent mcp (stdio)
        error = await ctx.fails(
            channel, "push_file", "invalid_argument", devicePath="/sdcard/a", path="/etc/hostname"
        )
        assert "contentBase64" in error["remedy"]
    else:  # the front reads the caller's file: one it cannot read is the caller's mistake
        await ctx.fails(
            channel, "push_file", "invalid_argument", devicePath="/sdcard/a", path="/no/such/file"
        )


async def test_http_mcp_refuses_a_path(fresh):
    ctx = fresh
    port = int(ctx.kept.url.split("127.0.0.1:")[1].split("/")[0])
    async with http_session(port, token()) as session:
        answer = await session.call_tool(
            "push_file", {"devicePath": "/sdcard/a.txt", "path": "/etc/hostname"}
        )
        assert answer.is_error
        error = answer.structured_content
        assert error["code"] == "invalid_argument" and "contentBase64" in error["remedy"]
        pulled = await session.call_tool("pull_file", {"devicePath": "/sdcard/a.txt", "path": "/tmp/a.txt"})
        assert pulled.is_error and pulled.structured_content["code"] == "invalid_argument"
        ok = await session.call_tool(
            "push_file", {"devicePath": "/sdcard/a.txt", "contentBase64": b64(b"hi")}
        )
        assert not ok.is_error
    assert await ctx.adb_shell("cat /sdcard/a.txt") == "hi"


@pytest.mark.parametrize("channel", CHANNELS)
async def test_clipboard_and_pinch_through_scrcpy(fresh, channel):
    ctx = fresh
    page = ctx.page
    ctx.sim.scrcpy.enabled = True  # this module's phone has app_process for this test only
    await page.check("#live-toggle")
    try:
        await page.wait_for_selector("canvas#screen[data-source=scrcpy]", state="attached", timeout=30_000)
        text = f"{channel}: héllo ✓ 你好 🙂"
        said = await ctx.ok(channel, "set_clipboard", text=text)
        assert said["via"] == "scrcpy"
        assert ctx.sim.phone.clipboard == text
        await ctx.adb_shell("am broadcast -a clipper.set -e text 'set on the phone'")
        assert (await ctx.ok(channel, "get_clipboard"))["text"] == "set on the phone"
        await ctx.ok(channel, "open_app", packageName="com.google.android.GoogleCamera")
        await ctx.ok(channel, "pinch", scale=2.0)
        for _ in range(50):
            if "Zoom 2.0x" in await dump(ctx):
                break
            await asyncio.sleep(0.1)
        assert "Zoom 2.0x" in await dump(ctx)
    finally:
        await page.uncheck("#live-toggle")
        ctx.sim.scrcpy.enabled = False


async def test_the_developer_card_installs_an_apk_shows_the_log_and_records(fresh, tmp_path):
    ctx = fresh
    page = ctx.page
    await page.set_input_files("#apk-input", str(REAL_APK))
    await page.wait_for_selector("#apk-status[data-state=installed]", timeout=60_000)
    assert UIAUTOMATOR in (await page.text_content("#apk-status") or "")
    assert f"package:{UIAUTOMATOR}" in (await ctx.adb_shell("pm list packages")).split()
    # dropping a file that is no APK says why
    await page.evaluate(
        """() => {
            const data = new DataTransfer();
            data.items.add(new File(["hello"], "notes.txt", {type: "text/plain"}));
            document.getElementById("devloop").dispatchEvent(new DragEvent("drop", {dataTransfer: data}));
        }"""
    )
    await page.wait_for_selector("#apk-status[data-state=failed]", timeout=30_000)
    assert "the file is not an APK" in (await page.text_content("#apk-status") or "")

    await ctx.adb_shell("log -t CardTest -p w 'seen in the card'")
    await page.select_option("#logs-level", "W")
    await page.click("#logs-refresh")
    await page.wait_for_selector("#logs-output[data-state=shown]", timeout=30_000)
    assert "CardTest: seen in the card" in (await page.text_content("#logs-output") or "")

    await page.click("#record-button")
    await page.wait_for_selector("#record-button[aria-pressed=true]", timeout=30_000)
    await asyncio.sleep(1.5)
    await page.click("#record-button")
    await page.wait_for_selector("#record-download:not([hidden])", timeout=60_000)
    async with page.expect_download() as waiting:
        await page.click("#record-download")
    download = await waiting.value
    await download.save_as(str(tmp_path / "card.mp4"))
    with av.open(str(tmp_path / "card.mp4")) as container:
        assert sum(1 for _ in container.decode(video=0)) >= 10


async def test_with_scrcpy_the_page_records_the_stream_itself(fresh, tmp_path):
    """start/stop_recording while the live view runs scrcpy: the stream's H.264 muxed into MP4 in the page
    (no screenrecord runs on the phone), decodable with ≥ 10 frames."""
    ctx = fresh
    page = ctx.page
    ctx.sim.scrcpy.enabled = True
    await page.check("#live-toggle")
    try:
        await page.wait_for_selector("canvas#screen[data-source=scrcpy]", state="attached", timeout=30_000)
        await ctx.ok("webmcp", "open_app", packageName="com.phoneagent.catalog")
        assert (await ctx.ok("mcp", "start_recording", maxSeconds=60))["via"] == "scrcpy"
        assert "screenrecord" not in await ctx.adb_shell("ps")
        for step in range(14):  # each scroll is a new picture, so a new frame of the stream
            await ctx.ok("webmcp", "swipe", direction="up" if step % 2 == 0 else "down", durationMs=100)
            await asyncio.sleep(0.1)
        stopped = await ctx.ok("mcp", "stop_recording", path=str(tmp_path / "stream.mp4"))
        video = Path(stopped["path"]).read_bytes()
        with av.open(io.BytesIO(video)) as container:
            stream = container.streams.video[0]
            assert stream.codec_context.name == "h264"
            assert sum(1 for _ in container.decode(video=0)) >= 10
    finally:
        await page.uncheck("#live-toggle")
        ctx.sim.scrcpy.enabled = False
