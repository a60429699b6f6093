"""The developer's loop end to end in CPython: the page's one dispatch and the project's ADB client on
the simulated phone — install and uninstall a real APK (uiautomator2's, from its PyPI wheel), files over
sync, logs and crashes, notifications, clipboard, pinch and recording — each result checked by Debian's
adb on the same phone (its package list, the file's bytes, the log line, the notification), and every
error code these tools answer produced here."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import io
from pathlib import Path

import av
import pytest

from tests.adb_host.apk_maker import make_apk
from tests.adb_host.test_device_tools import call, fails, ok

REAL_APK = Path(__file__).resolve().parents[2] / ".venv" / "test-data" / "app-uiautomator.apk"
UIAUTOMATOR = "com.github.uiautomator"


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


@pytest.fixture
def real_apk() -> bytes:
    if not REAL_APK.exists():
        pytest.fail(
            "the test APK is missing: run ./scripts/setup --test (it takes it from uiautomator2's wheel)"
        )
    return REAL_APK.read_bytes()


@pytest.fixture
def adb(adb_serial, debian_adb):
    """``adb -s SERIAL …`` of Debian's adb, connected to the same simulated phone."""

    async def run(*args: str) -> str:
        return (await debian_adb.output("-s", adb_serial, *args, timeout=60)).decode("utf-8", "replace")

    return run


async def test_a_real_apk_installs_shows_in_the_launcher_and_uninstalls(ctx, adb, real_apk):
    installed = await ok(ctx, "install_app", contentBase64=b64(real_apk))
    assert installed == {"packageName": UIAUTOMATOR, "versionName": "2.4.0", "versionCode": 2004001}
    assert f"package:{UIAUTOMATOR}" in (await adb("shell", "pm list packages")).split()
    assert "versionName=2.4.0" in await adb("shell", f"dumpsys package {UIAUTOMATOR}")
    await ok(ctx, "press_key", key="home")
    assert await ok(ctx, "wait_for", target="text=ATX", condition="visible", timeoutMs=5000)  # its icon
    await ok(ctx, "open_app", packageName=UIAUTOMATOR)
    assert UIAUTOMATOR in await adb("shell", "dumpsys window | grep mCurrentFocus")
    # replace=false on an installed app: Android's ALREADY_EXISTS, before anything is sent
    error = await fails(ctx, "install_app", "install_failed", contentBase64=b64(real_apk), replace=False)
    assert error["details"]["reason"] == "INSTALL_FAILED_ALREADY_EXISTS"
    # a lower versionCode of the same package: Android's own refusal comes back with a remedy
    older = make_apk(UIAUTOMATOR, 1, "0.1")
    error = await fails(ctx, "install_app", "install_failed", contentBase64=b64(older))
    assert error["details"]["reason"] == "INSTALL_FAILED_VERSION_DOWNGRADE" and "uninstall" in error["remedy"]
    # grant and revoke a runtime permission it asks for; clearing its data resets it
    await ok(ctx, "set_permission", packageName=UIAUTOMATOR, permission="GET_ACCOUNTS", granted=True)
    assert "android.permission.GET_ACCOUNTS: granted=true" in await adb(
        "shell", f"dumpsys package {UIAUTOMATOR}"
    )
    error = await fails(
        ctx,
        "set_permission",
        "invalid_argument",
        packageName=UIAUTOMATOR,
        permission="android.permission.CAMERA",
        granted=True,
    )
    assert "has not requested" in error["message"]
    assert await ok(ctx, "clear_app_data", packageName=UIAUTOMATOR) == {"packageName": UIAUTOMATOR}
    assert "GET_ACCOUNTS: granted=false" in await adb("shell", f"dumpsys package {UIAUTOMATOR}")
    gone = await ok(ctx, "uninstall_app", packageName=UIAUTOMATOR)
    assert gone == {"packageName": UIAUTOMATOR, "keptData": False}
    assert f"package:{UIAUTOMATOR}" not in (await adb("shell", "pm list packages")).split()
    await fails(ctx, "uninstall_app", "app_not_installed", packageName=UIAUTOMATOR)


async def test_what_is_no_apk_is_refused_before_anything_is_sent(ctx, adb):
    before = await adb("shell", "ls /data/local/tmp")
    for data, why in ((b"hello", "not a zip"), (make_apk("x.y")[:40], "not a readable zip")):
        error = await fails(ctx, "install_app", "invalid_argument", contentBase64=b64(data))
        assert "the file is not an APK: " in error["message"], why
    archive = io.BytesIO()
    import zipfile

    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("readme.txt", "no manifest")
    error = await fails(ctx, "install_app", "invalid_argument", contentBase64=b64(archive.getvalue()))
    assert "no AndroidManifest.xml" in error["message"]
    await fails(ctx, "install_app", "invalid_argument", contentBase64="***")
    await fails(ctx, "install_app", "invalid_argument")  # neither path nor bytes
    await fails(ctx, "install_app", "invalid_argument", path="/tmp/app.apk")  # path: only the stdio front's
    assert await adb("shell", "ls /data/local/tmp") == before
    # a system app's name, signed by someone else: Android's UPDATE_INCOMPATIBLE
    error = await fails(
        ctx, "install_app", "install_failed", contentBase64=b64(make_apk("com.android.settings"))
    )
    assert error["details"]["reason"] == "INSTALL_FAILED_UPDATE_INCOMPATIBLE"


async def test_unknown_packages_are_app_not_installed(ctx):
    for tool, extra in (
        ("uninstall_app", {}),
        ("clear_app_data", {}),
        ("set_permission", {"permission": "CAMERA", "granted": True}),
    ):
        error = await fails(ctx, tool, "app_not_installed", packageName="com.example.nothere", **extra)
        assert error["details"]["packageName"] == "com.example.nothere"
    error = await fails(ctx, "uninstall_app", "device_error", packageName="com.android.settings")
    assert "DELETE_FAILED" in error["message"]


async def test_files_push_pull_and_list_over_sync(ctx, adb, tmp_path):
    data = bytes(range(256)) * 4099 + "é✓".encode()
    pushed = await ok(ctx, "push_file", devicePath="/sdcard/Download/dev/blob.bin", contentBase64=b64(data))
    assert pushed == {
        "devicePath": "/sdcard/Download/dev/blob.bin",
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    await adb("pull", "/sdcard/Download/dev/blob.bin", str(tmp_path / "blob.bin"))
    assert hashlib.md5((tmp_path / "blob.bin").read_bytes()).hexdigest() == hashlib.md5(data).hexdigest()
    (tmp_path / "up.txt").write_bytes(b"from Debian's adb\n")
    await adb("push", str(tmp_path / "up.txt"), "/sdcard/Download/dev/up.txt")
    pulled = await ok(ctx, "pull_file", devicePath="/sdcard/Download/dev/up.txt")
    assert base64.b64decode(pulled["contentBase64"]) == b"from Debian's adb\n"
    assert pulled["size"] == 18 and pulled["sha256"] == hashlib.sha256(b"from Debian's adb\n").hexdigest()
    listed = await ok(ctx, "list_files", devicePath="/sdcard/Download/dev")
    entries = {entry["name"]: entry for entry in listed["entries"]}
    assert set(entries) == {"blob.bin", "up.txt"}
    assert entries["blob.bin"]["type"] == "file" and entries["blob.bin"]["size"] == len(data)
    assert entries["blob.bin"]["mtime"] > 1_600_000_000 and entries["up.txt"]["mode"] & 0o400
    top = await ok(ctx, "list_files", devicePath="/sdcard")
    assert {"name": "Download", "type": "directory"}.items() <= next(
        e for e in top["entries"] if e["name"] == "Download"
    ).items()
    # what is missing, protected or not a file
    await fails(ctx, "pull_file", "file_not_found", devicePath="/sdcard/nothing.txt")
    await fails(ctx, "list_files", "file_not_found", devicePath="/sdcard/no/such/dir")
    error = await fails(ctx, "pull_file", "permission_denied", devicePath="/data/system/packages.xml")
    assert error["details"]["devicePath"] == "/data/system/packages.xml"
    await fails(ctx, "push_file", "permission_denied", devicePath="/system/evil.txt", contentBase64=b64(b"x"))
    await fails(ctx, "push_file", "permission_denied", devicePath="/data/data/x.txt", contentBase64=b64(b"x"))
    await fails(ctx, "pull_file", "invalid_argument", devicePath="/sdcard/Download")  # a directory
    await fails(ctx, "pull_file", "invalid_argument", devicePath="relative.txt")
    await fails(ctx, "pull_file", "invalid_argument", devicePath="/sdcard/x", path="/tmp/x")


async def test_logs_and_the_crash_demo_crash(ctx, adb, sim):
    await adb("shell", "log -t DevLoopTest -p w 'hello from adb 42'")
    found = await ok(ctx, "read_logs", grep="hello from adb")
    line = found["lines"][-1]
    assert (line["tag"], line["level"], line["message"]) == ("DevLoopTest", "W", "hello from adb 42")
    assert line["pid"] > 0 and line["time"][:4].isdigit() and found["truncated"] is False
    assert not (await ok(ctx, "read_logs", grep="hello from adb", level="E"))["lines"]
    assert (await ok(ctx, "read_logs", grep="hello from adb", sinceSeconds=60))["lines"]
    few = await ok(ctx, "read_logs", maxLines=1)
    assert len(few["lines"]) == 1 and few["truncated"] is True
    await fails(ctx, "read_logs", "invalid_argument", grep="(unclosed")
    await fails(ctx, "read_logs", "invalid_argument", level="X")

    assert not (await ok(ctx, "list_crashes", packageName="com.phoneagent.crashdemo"))["crashes"]
    await ok(ctx, "open_app", packageName="com.phoneagent.crashdemo")
    await ok(ctx, "tap", target="text=Crash now")
    assert "Crash Demo keeps stopping" in await adb(
        "shell", "uiautomator dump /sdcard/d.xml >/dev/null; cat /sdcard/d.xml"
    )
    assert "FATAL EXCEPTION: main" in await adb("logcat", "-d", "-b", "crash")
    crashes = (await ok(ctx, "list_crashes", packageName="com.phoneagent.crashdemo", sinceSeconds=120))[
        "crashes"
    ]
    assert len(crashes) == 1, crashes
    crash = crashes[0]
    assert crash["kind"] == "crash" and "IllegalStateException" in crash["summary"]
    report = await ok(ctx, "get_crash", id=crash["id"])
    assert "at com.phoneagent.crashdemo.MainActivity.onCrashClicked" in report["report"]
    assert report["packageName"] == "com.phoneagent.crashdemo"
    app_lines = (await ok(ctx, "read_logs", packageName="com.phoneagent.crashdemo", level="E"))["lines"]
    assert any(ln["message"] == "FATAL EXCEPTION: main" for ln in app_lines)
    assert all(ln["level"] in "EF" for ln in app_lines)
    await fails(ctx, "get_crash", "invalid_argument", id="data_app_crash@2001-01-01T00:00:00")
    await ok(ctx, "press_key", key="back")  # closes the dialog
    assert "keeps stopping" not in await adb(
        "shell", "uiautomator dump /sdcard/d.xml >/dev/null; cat /sdcard/d.xml"
    )


async def test_notifications_listed_and_the_shade_opened(ctx, adb):
    await adb("shell", "cmd notification post -t 'Build done' devloop 'All 42 tests passed ✓'")
    notes = (await ok(ctx, "list_notifications"))["notifications"]
    note = next(n for n in notes if n["title"] == "Build done")
    assert note["packageName"] == "com.android.shell" and note["text"] == "All 42 tests passed ✓"
    assert note["key"].startswith("0|com.android.shell|") and note["postedAt"].endswith("Z")
    assert await ok(ctx, "open_notifications") == {"opened": "notifications"}
    shade = await adb("shell", "uiautomator dump /sdcard/s.xml >/dev/null; cat /sdcard/s.xml")
    assert "notification_panel" in shade and "All 42 tests passed" in shade
    assert await ok(ctx, "open_notifications", quickSettings=True) == {"opened": "quickSettings"}
    assert "Battery Saver" in await adb(
        "shell", "uiautomator dump /sdcard/s.xml >/dev/null; cat /sdcard/s.xml"
    )
    await ok(ctx, "press_key", key="back")
    assert "notification_panel" not in await adb(
        "shell", "uiautomator dump /sdcard/s.xml >/dev/null; cat /sdcard/s.xml"
    )


async def test_without_scrcpy_the_clipboard_goes_through_clipper_and_pinch_is_unsupported(ctx, adb):
    error = await fails(ctx, "get_clipboard", "unsupported")
    assert "scrcpy" in error["remedy"]
    said = await ok(ctx, "set_clipboard", text="copied by the tool")
    assert said == {"length": 18, "pasted": False, "via": "Clipper"}
    assert 'data="copied by the tool"' in await adb("shell", "am broadcast -a clipper.get")
    error = await fails(ctx, "pinch", "unsupported", scale=2.0)
    assert "scrcpy" in error["remedy"]


async def test_a_screen_recording_is_an_mp4_with_frames(ctx, adb):
    assert (await ok(ctx, "start_recording", maxSeconds=30))["recording"] is True
    assert "screenrecord" in await adb("shell", "ps")
    await fails(ctx, "start_recording", "invalid_argument")  # one at a time
    await ok(ctx, "open_app", packageName="com.android.settings")
    await asyncio.sleep(1.6)
    stopped = await ok(ctx, "stop_recording")
    video = base64.b64decode(stopped["contentBase64"])
    assert stopped["mimeType"] == "video/mp4" and stopped["size"] == len(video)
    assert stopped["sha256"] == hashlib.sha256(video).hexdigest()
    with av.open(io.BytesIO(video)) as container:
        assert container.streams.video[0].codec_context.name == "h264"
        frames = sum(1 for _ in container.decode(video=0))
    assert frames >= 10
    assert "screenrecord" not in await adb("shell", "ps")
    assert "phone-agent-recording" not in await adb("shell", "ls /data/local/tmp")
    await fails(ctx, "stop_recording", "invalid_argument")  # nothing runs
    result = await call(ctx, "stop_recording", path="/tmp/x.mp4")
    assert result["structuredContent"]["code"] == "invalid_argument"


async def test_a_large_push_reports_its_progress(ctx, adb, tmp_path):
    from phone_agent.tools.spec import Channel

    data = bytes(range(256)) * (12 * 4096)  # 12 MiB
    said: list[str] = []
    result = await ctx.dispatch(
        "push_file",
        {"devicePath": "/data/local/tmp/big.bin", "contentBase64": b64(data)},
        Channel.RELAY,
        said.append,
    )
    assert not result.get("isError"), result
    assert said and said[-1].startswith("sending /data/local/tmp/big.bin: 100%"), said
    assert 3 <= len(said) <= 11 and any("%" in line and "100%" not in line for line in said)
    await adb("pull", "/data/local/tmp/big.bin", str(tmp_path / "big.bin"))
    assert hashlib.md5((tmp_path / "big.bin").read_bytes()).hexdigest() == hashlib.md5(data).hexdigest()
