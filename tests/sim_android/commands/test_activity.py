"""`am` and `monkey`: starting activities and broadcasts, with Android's messages."""

from __future__ import annotations

from tests.sim_android.conftest import Harness


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
