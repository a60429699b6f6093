"""The installed packages and their activities: which activity a screen on a task is, as dumpsys says."""

from __future__ import annotations

from phone_agent.sim.android.apps import APPS, CATALOG, SETTINGS, screen_activity_of, short_activity
from phone_agent.sim.android.contract import Screen


def test_a_screen_is_the_first_activity_of_its_app_that_opens_it():
    assert screen_activity_of(SETTINGS, Screen("settings/network")) == (
        SETTINGS,
        "com.android.settings.Settings$NetworkDashboardActivity",
    )
    assert screen_activity_of(CATALOG, Screen("catalog/item", "3")) == (
        CATALOG,
        "com.phoneagent.catalog.ItemActivity",
    )


def test_a_screen_no_activity_names_reports_the_apps_main_activity():
    assert screen_activity_of(SETTINGS, Screen("settings/nowhere")) == (
        SETTINGS,
        APPS[SETTINGS].main_activity,
    )


def test_an_activity_inside_its_package_is_shortened_as_android_prints_it():
    assert short_activity(SETTINGS, "com.android.settings.Settings") == ".Settings"
    assert short_activity(SETTINGS, "org.other.Activity") == "org.other.Activity"
