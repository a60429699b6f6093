"""What an agent does on the phone, through `input`/`am` only, ends in state()."""

from __future__ import annotations

import base64
import json
import threading

from phone_agent.sim.android.phone import VirtualPhone

from .conftest import Harness

COMPOSE = "com.google.android.apps.messaging:id/compose_message_text"


def open_thread(h: Harness, name: str) -> None:
    h.out("input", "keyevent", "KEYCODE_HOME")
    h.tap(h.node(text="Messages"))
    h.tap(h.node(text=name))
    assert h.phone.state()["screen"] == "messages/thread"


def test_send_see_you_tomorrow_to_zhang_san(h: Harness) -> None:
    open_thread(h, "Zhang San")
    field = h.node(resource_id=COMPOSE)
    assert field["focusable"] == "true" and field["focused"] == "false" and field["text"] == "Text message"
    h.tap(field)
    assert h.node(resource_id=COMPOSE)["focused"] == "true"
    h.out("input", "text", "see%syou%stomorrow")
    assert h.node(resource_id=COMPOSE)["text"] == "see you tomorrow"
    assert h.phone.state()["focused_text"] == "see you tomorrow"
    h.tap(h.node(content_desc="Send SMS"))
    state = h.phone.state()
    assert state["sent"] == [{"to": "Zhang San", "text": "see you tomorrow"}]
    assert state["messages"]["Zhang San"][-1] == {"from": "me", "text": "see you tomorrow"}
    assert state["focused_text"] == ""
    texts = [n["text"] for n in h.nodes()]
    assert "see you tomorrow" in texts
    json.dumps(state)  # JSON-able


def test_enter_sends_and_del_deletes(h: Harness) -> None:
    open_thread(h, "Mom")
    h.tap(h.node(resource_id=COMPOSE))
    h.out("input", "text", "okay!")
    h.out("input", "keyevent", "KEYCODE_DEL", "67")
    assert h.phone.state()["focused_text"] == "oka"
    h.out("input", "keyevent", "KEYCODE_Y", "KEYCODE_ENTER")
    assert h.phone.state()["sent"] == [{"to": "Mom", "text": "okay"}]


def test_typing_without_a_focused_field_changes_nothing(h: Harness) -> None:
    open_thread(h, "Li Si")
    version = h.phone.state()["version"]
    h.out("input", "text", "lost")
    assert h.phone.state()["version"] == version
    h.tap(h.node(content_desc="Send SMS"))  # disabled while empty
    assert h.phone.state()["sent"] == []


def test_adbkeyboard_types_non_ascii_text(h: Harness) -> None:
    open_thread(h, "Zhang San")
    h.tap(h.node(resource_id=COMPOSE))
    text = "明天见 — café 👋"
    encoded = base64.b64encode(text.encode()).decode()
    h.out("am", "broadcast", "-a", "ADB_INPUT_B64", "--es", "msg", encoded)
    assert h.phone.state()["focused_text"] == text
    assert h.node(resource_id=COMPOSE)["text"] == text
    h.tap(h.node(content_desc="Send SMS"))
    assert h.phone.state()["sent"] == [{"to": "Zhang San", "text": text}]


def test_adbkeyboard_only_types_when_it_is_the_current_ime(h: Harness) -> None:
    open_thread(h, "Zhang San")
    h.tap(h.node(resource_id=COMPOSE))
    h.out("ime", "set", "com.google.android.inputmethod.latin/com.android.inputmethod.latin.LatinIME")
    h.out("am", "broadcast", "-a", "ADB_INPUT_TEXT", "--es", "msg", "x")
    assert h.phone.state()["focused_text"] == ""
    h.out("ime", "set", "com.android.adbkeyboard/.AdbIME")
    h.out("am", "broadcast", "-a", "ADB_INPUT_TEXT", "--es", "msg", "x")
    assert h.phone.state()["focused_text"] == "x"


def test_wifi_toggle_flow(h: Harness) -> None:
    h.tap(h.node(text="Settings"))
    h.tap(h.node(text="Network & internet"))
    assert h.phone.state()["screen"] == "settings/network"
    switch = h.node(**{"class": "android.widget.Switch"})
    assert switch["checked"] == "true"
    h.tap(switch)
    assert h.phone.state()["wifi"] is False
    assert h.out("settings", "get", "global", "wifi_on") == "0\n"
    h.tap(h.node(text="Wi-Fi"))  # the whole row toggles too
    assert h.phone.state()["wifi"] is True


def test_bluetooth_toggle_and_about_phone(h: Harness) -> None:
    h.out("am", "start", "-n", "com.android.settings/.Settings")
    h.tap(h.node(text="Connected devices"))
    h.tap(h.node(**{"class": "android.widget.Switch"}))
    assert h.phone.state()["bluetooth"] is True
    h.out("input", "keyevent", "KEYCODE_BACK")
    h.tap(h.node(text="About phone"))
    texts = {n["text"] for n in h.nodes()}
    assert {"Pixel 7", "14", "PHAGSIM0001"} <= texts


def test_catalog_scrolls_by_the_swipe_distance_and_clamps(h: Harness) -> None:
    h.out("monkey", "-p", "com.phoneagent.catalog", "-c", "android.intent.category.LAUNCHER", "1")
    titles = [n["text"] for n in h.nodes() if n["resource-id"] == "com.phoneagent.catalog:id/item_title"]
    assert titles[0] == "Item 01 - Amber Falcon" and "Item 30 - Quiet Tapir" not in titles
    assert len(titles) < 15
    h.out("input", "swipe", "540", "2000", "540", "1000", "400")
    assert h.phone.state()["catalog_scroll"] == 1000
    nodes = [n for n in h.nodes() if n["resource-id"] == "com.phoneagent.catalog:id/item_title"]
    assert nodes[0]["text"].startswith("Item 06")
    for node in nodes:
        assert 340 <= node.bounds[1] and node.bounds[3] <= 2274  # clipped to the list
    for _ in range(12):
        h.out("input", "swipe", "540", "2000", "540", "400", "200")
    assert h.phone.state()["catalog_scroll"] == 50 * 200 - (2274 - 340)
    last = [n["text"] for n in h.nodes() if n["resource-id"] == "com.phoneagent.catalog:id/item_title"][-1]
    assert last.startswith("Item 50 - ")
    h.out("input", "swipe", "540", "400", "540", "2200")
    assert h.phone.state()["catalog_scroll"] == 50 * 200 - (2274 - 340) - 1800
    distinct = set()
    h.out("am", "force-stop", "com.phoneagent.catalog")
    h.out("am", "start", "-n", "com.phoneagent.catalog/.MainActivity")
    while True:
        distinct |= {
            n["text"] for n in h.nodes() if n["resource-id"] == "com.phoneagent.catalog:id/item_title"
        }
        before = h.phone.state()["catalog_scroll"]
        h.out("input", "swipe", "540", "2000", "540", "600", "300")
        if h.phone.state()["catalog_scroll"] == before:
            break
    assert len(distinct) == 50


def test_tapping_a_catalog_item_opens_its_details(h: Harness) -> None:
    h.out("am", "start", "-n", "com.phoneagent.catalog/.MainActivity")
    h.tap(h.node(text="Item 03 - Brisk Koala"))
    state = h.phone.state()
    assert state["screen"] == "catalog/item" and state["screen_arg"] == "3"
    assert h.node(resource_id="com.phoneagent.catalog:id/name")["text"] == "Brisk Koala"


def test_back_home_and_recents_behave_like_android(h: Harness) -> None:
    h.out("am", "start", "-n", "com.android.settings/.Settings")
    h.tap(h.node(text="Network & internet"))
    h.out("input", "keyevent", "KEYCODE_BACK")
    assert h.phone.state()["screen"] == "settings/main"
    h.out("input", "keyevent", "KEYCODE_BACK")  # back at the root leaves the app
    assert h.phone.state()["screen"] == "home"
    h.out("input", "keyevent", "4")
    assert h.phone.state()["screen"] == "home"
    open_thread(h, "Zhang San")
    h.out("input", "keyevent", "3")  # HOME keeps the task
    assert h.phone.state()["screen"] == "home"
    h.out("input", "keyevent", "187")
    state = h.phone.state()
    assert state["screen"] == "recents"
    assert state["recents"] == ["com.google.android.apps.messaging", "com.android.settings"]
    h.tap(h.node(content_desc="Settings"))
    assert h.phone.state()["package"] == "com.android.settings"
    h.out("input", "keyevent", "KEYCODE_APP_SWITCH")
    h.tap(h.node(content_desc="Messages"))
    state = h.phone.state()
    assert (state["screen"], state["screen_arg"]) == ("messages/thread", "Zhang San")
    h.out("input", "keyevent", "KEYCODE_APP_SWITCH")
    h.tap(h.node(text="Clear all"))
    assert h.phone.state()["screen"] == "home" and h.phone.state()["recents"] == []


def test_view_intent_opens_the_browser_with_the_url(h: Harness) -> None:
    out = h.out("am", "start", "-a", "android.intent.action.VIEW", "-d", "https://example.org/a/b")
    assert out.startswith("Starting: Intent { act=android.intent.action.VIEW dat=https://example.org/... }")
    state = h.phone.state()
    assert state["package"] == "com.android.chrome" and state["screen_arg"] == "https://example.org/a/b"
    assert h.node(resource_id="com.android.chrome:id/url_bar")["text"] == "https://example.org/a/b"
    h.out("am", "start", "-a", "android.intent.action.VIEW", "-d", "smsto:+8613800138000")
    assert (h.phone.state()["screen"], h.phone.state()["screen_arg"]) == ("messages/thread", "Zhang San")


def test_long_press_is_a_swipe_on_one_point(h: Harness) -> None:
    h.out("input", "swipe", "405", "1545", "405", "1545", "800")  # long press on Messages: no launch
    assert h.phone.state()["screen"] == "home"
    h.out("input", "swipe", "405", "1545", "405", "1545", "100")  # short: a tap
    assert h.phone.state()["screen"] == "messages/list"


def test_reset_restores_the_initial_phone(h: Harness) -> None:
    initial = h.phone.state()
    open_thread(h, "Zhang San")
    h.tap(h.node(resource_id=COMPOSE))
    h.out("input", "text", "hello")
    h.out("input", "keyevent", "ENTER")
    h.out("svc", "wifi", "disable")
    h.phone.reset()
    after = h.phone.state()
    assert after.pop("version") > initial.pop("version")
    assert after == initial


def test_concurrent_runs_do_not_corrupt_state() -> None:
    phone = VirtualPhone()
    store = None
    phone.run(
        ["am", "start", "-n", "com.google.android.apps.messaging/.ui.ConversationListActivity"], b"", store
    )
    phone.run(["input", "tap", "540", "450"], b"", store)  # Zhang San
    phone.run(["input", "tap", "400", "2170"], b"", store)  # the text field
    errors: list[BaseException] = []

    def typer(letter: str) -> None:
        try:
            for _ in range(200):
                phone.run(["input", "text", letter], b"", store)
        except BaseException as exc:  # pragma: no cover - reported below
            errors.append(exc)

    def reader() -> None:
        try:
            for _ in range(30):
                json.dumps(phone.state())
                phone.run(["uiautomator", "dump", "/dev/tty"], b"", store)
                phone.run(["screencap"], b"", store)
        except BaseException as exc:  # pragma: no cover
            errors.append(exc)

    threads = [threading.Thread(target=typer, args=(c,)) for c in "abcd"] + [threading.Thread(target=reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    text = phone.state()["focused_text"]
    assert len(text) == 800 and all(text.count(c) == 200 for c in "abcd")


def test_motionevent_down_up_is_a_tap(h: Harness) -> None:
    h.out("input", "motionevent", "DOWN", "405", "1545")
    h.out("input", "motionevent", "UP", "405", "1545")
    assert h.phone.state()["screen"] == "messages/list"


def test_am_start_wait_reports_the_launch(h: Harness) -> None:
    out = h.out("am", "start", "-W", "-n", "com.android.settings/.Settings")
    assert (
        "Status: ok" in out
        and "Activity: com.android.settings/.Settings" in out
        and out.endswith("Complete\n")
    )


def test_an_intent_into_a_fresh_task_leaves_the_app_on_back(h: Harness) -> None:
    h.out("am", "start", "-a", "android.intent.action.VIEW", "-d", "https://example.org/")
    h.out("input", "keyevent", "KEYCODE_BACK")
    assert h.phone.state()["screen"] == "home"
    h.out("am", "start", "-a", "android.settings.BLUETOOTH_SETTINGS")
    assert h.phone.state()["back_stack"] == ["settings/connected"]
    h.out("input", "keyevent", "KEYCODE_BACK")
    assert h.phone.state()["screen"] == "home"


def test_the_address_bar_loads_what_is_typed(h: Harness) -> None:
    h.out("monkey", "-p", "com.android.chrome", "-c", "android.intent.category.LAUNCHER", "1")
    h.tap(h.node(resource_id="com.android.chrome:id/url_bar"))
    h.out("input", "text", "example.com")
    h.out("input", "keyevent", "KEYCODE_ENTER")
    state = h.phone.state()
    assert state["screen_arg"] == "https://example.com" and state["focused_field"] is None
    assert h.node(resource_id="com.android.chrome:id/url_bar")["text"] == "https://example.com"
