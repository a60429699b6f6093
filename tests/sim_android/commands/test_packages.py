"""`pm` and `cmd`: the package list and activity resolution, as Android answers."""

from __future__ import annotations

from tests.sim_android.conftest import Harness


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
