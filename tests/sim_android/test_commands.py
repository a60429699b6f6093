"""Android's commands answer in Android's own formats."""

from __future__ import annotations

import re
import struct

from phone_agent.sim.android import VirtualPhone

from .conftest import Harness


def test_getprop_all_is_sorted_bracketed_lines(h: Harness) -> None:
    lines = h.out("getprop").splitlines()
    assert all(re.fullmatch(r"\[[^\]]+\]: \[[^\]]*\]", line) for line in lines)
    keys = [line.split("]")[0][1:] for line in lines]
    assert keys == sorted(keys)
    assert "[ro.product.model]: [Pixel 7]" in lines
    assert "[ro.build.version.sdk]: [34]" in lines


def test_getprop_by_key_and_unknown_key() -> None:
    phone = VirtualPhone(serial="SIM42")
    run = lambda *a: phone.run(list(a), b"", None).stdout  # noqa: E731 - the store is unused
    assert run("getprop", "ro.product.model") == b"Pixel 7\n"
    assert run("getprop", "ro.product.brand") == b"google\n"
    assert run("getprop", "ro.product.manufacturer") == b"Google\n"
    assert run("getprop", "ro.product.name") == b"phone_agent_sim\n"
    assert run("getprop", "ro.build.version.release") == b"14\n"
    assert run("getprop", "ro.serialno") == b"SIM42\n"
    assert run("getprop", "no.such.key") == b"\n"
    assert phone.serial == "SIM42" and phone.props["ro.serialno"] == "SIM42"


def test_wm_size_and_density(h: Harness) -> None:
    assert h.out("wm", "size") == "Physical size: 1080x2400\n"
    assert h.out("wm", "density") == "Physical density: 420\n"


def test_command_names_cover_the_android_tools(h: Harness) -> None:
    names = h.phone.command_names()
    for name in (
        "getprop",
        "wm",
        "screencap",
        "input",
        "am",
        "monkey",
        "pm",
        "cmd",
        "ime",
        "settings",
        "dumpsys",
        "uiautomator",
    ):
        assert name in names
    assert "echo" not in names  # the shell's own


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
    assert names == [
        "index",
        "text",
        "resource-id",
        "class",
        "package",
        "content-desc",
        "checkable",
        "checked",
        "clickable",
        "enabled",
        "focusable",
        "focused",
        "scrollable",
        "long-clickable",
        "password",
        "selected",
        "bounds",
    ]
    assert h.run("uiautomator", "dump", "/data/local/tmp/ui.xml").stdout.endswith(b"/data/local/tmp/ui.xml\n")
    assert h.fs.files["/data/local/tmp/ui.xml"] == h.fs.files["/sdcard/window_dump.xml"]


def test_uiautomator_dump_to_dev_tty_prints_the_xml(h: Harness) -> None:
    out = h.run("uiautomator", "dump", "/dev/tty").stdout
    assert out.startswith(b"<?xml") and out.endswith(b"</hierarchy>UI hierchary dumped to: /dev/tty\n")


def test_pm_list_packages(h: Harness) -> None:
    everything = h.out("pm", "list", "packages").splitlines()
    assert "package:com.android.settings" in everything
    assert "package:com.google.android.apps.messaging" in everything
    assert all(line.startswith("package:") for line in everything)
    third = h.out("pm", "list", "packages", "-3").splitlines()
    assert "package:com.phoneagent.catalog" in third and "package:com.android.adbkeyboard" in third
    assert "package:com.android.settings" not in third
    assert h.out("pm", "list", "packages", "catalog") == "package:com.phoneagent.catalog\n"


def test_resolve_activity_brief(h: Harness) -> None:
    assert h.out("cmd", "package", "resolve-activity", "--brief", "com.android.settings") == (
        "priority=0 preferredOrder=0 match=0x108000 specificIndex=-1 isDefault=true\n"
        "com.android.settings/com.android.settings.Settings\n"
    )
    assert h.out("cmd", "package", "resolve-activity", "--brief", "com.nope") == "No activity found\n"
    assert h.run("cmd", "nosuchservice").exit_code == 20


def test_ime_lists_adbkeyboard(h: Harness) -> None:
    assert "com.android.adbkeyboard/.AdbIME" in h.out("ime", "list", "-s").splitlines()
    assert h.out("settings", "get", "secure", "default_input_method") == "com.android.adbkeyboard/.AdbIME\n"


def test_settings_get_put(h: Harness) -> None:
    assert h.out("settings", "get", "global", "wifi_on") == "1\n"
    assert h.out("settings", "get", "global", "bluetooth_on") == "0\n"
    h.out("settings", "put", "global", "bluetooth_on", "1")
    assert h.phone.state()["bluetooth"] is True
    assert h.out("settings", "get", "system", "no_such_key") == "null\n"


def test_dumpsys_window_names_the_focused_activity(h: Harness) -> None:
    home = h.out("dumpsys", "window")
    assert re.search(r"mCurrentFocus=Window\{\w+ u0 com\.google\.android\.apps\.nexuslauncher/", home)
    h.out("am", "start", "-n", "com.android.settings/.Settings")
    for section in ("window", "window windows"):
        text = h.out("dumpsys", *section.split())
        assert re.search(
            r"mCurrentFocus=Window\{\w+ u0 com\.android\.settings/com\.android\.settings\.Settings\}", text
        )
        assert re.search(r"mFocusedApp=ActivityRecord\{\w+ u0 com\.android\.settings/\.Settings t\d+\}", text)


def test_monkey_launches_and_reports_events(h: Harness) -> None:
    out = h.out("monkey", "-p", "com.phoneagent.catalog", "-c", "android.intent.category.LAUNCHER", "1")
    assert "Events injected: 1" in out
    assert h.phone.state()["package"] == "com.phoneagent.catalog"
    missing = h.run("monkey", "-p", "com.nope", "-c", "android.intent.category.LAUNCHER", "1")
    assert missing.exit_code == 252 and b"No activities found to run" in missing.stderr


def test_am_start_messages(h: Harness) -> None:
    assert h.out("am", "start", "-n", "com.android.settings/.Settings") == (
        "Starting: Intent { cmp=com.android.settings/.Settings }\n"
    )
    again = h.out("am", "start", "-n", "com.android.settings/com.android.settings.Settings")
    assert (
        "Warning: Activity not started, intent has been delivered to currently running top-most instance."
        in again
    )
    bad = h.run("am", "start", "-n", "com.android.settings/.Nope")
    assert bad.exit_code != 0
    assert (
        b"Error: Activity class {com.android.settings/com.android.settings.Nope} does not exist."
        in bad.stderr
    )
    unresolved = h.run("am", "start", "-a", "android.intent.action.VIEW", "-d", "weird:thing")
    assert unresolved.exit_code != 0 and b"unable to resolve Intent" in unresolved.stderr


def test_am_broadcast_answers_like_android(h: Harness) -> None:
    out = h.out("am", "broadcast", "-a", "ADB_INPUT_B64", "--es", "msg", "aGk=")
    assert out == (
        "Broadcasting: Intent { act=ADB_INPUT_B64 flg=0x400000 (has extras) }\n"
        "Broadcast completed: result=0\n"
    )


def test_input_errors_like_android(h: Harness) -> None:
    bad = h.run("input", "tap", "x", "5")
    assert bad.exit_code == 255
    assert b"java.lang.IllegalArgumentException: Error: Invalid arguments for command: tap" in bad.stderr
    short = h.run("input", "swipe", "1", "2")
    assert short.exit_code == 255 and b"Argument expected" in short.stderr
    assert h.out("input", "bogus") == "Unknown command: bogus\n"
    assert h.out("input").startswith("Usage: input [<source>] [-d DISPLAY_ID] <command> [<arg>...]")
    non_ascii = h.run("input", "text", "caf\u00e9")
    assert non_ascii.exit_code == 255 and b"NullPointerException" in non_ascii.stderr


def test_unknown_command_name_is_127(h: Harness) -> None:
    result = h.run("frobnicate")
    assert result.exit_code == 127 and b"inaccessible or not found" in result.stderr
