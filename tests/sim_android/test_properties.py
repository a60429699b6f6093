"""Property tests: any sequence of touches and keys leaves a consistent phone."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from phone_agent.sim.android.phone import VirtualPhone
from phone_agent.sim.android.ui import hit_test

coordinate_x = st.integers(min_value=-50, max_value=1130)
coordinate_y = st.integers(min_value=-50, max_value=2450)
keys = st.sampled_from(
    [
        "KEYCODE_BACK",
        "KEYCODE_HOME",
        "KEYCODE_APP_SWITCH",
        "KEYCODE_ENTER",
        "KEYCODE_DEL",
        "KEYCODE_A",
        "62",
        "3",
        "4",
        "187",
        "66",
        "67",
        "BOGUS",
    ]
)
commands = st.one_of(
    st.tuples(st.just("tap"), coordinate_x, coordinate_y).map(
        lambda t: ["input", "tap", str(t[1]), str(t[2])]
    ),
    st.tuples(coordinate_x, coordinate_y, coordinate_x, coordinate_y, st.integers(0, 1200)).map(
        lambda t: ["input", "swipe", *map(str, t)]
    ),
    keys.map(lambda k: ["input", "keyevent", k]),
    st.text(alphabet="abc xyz%s", max_size=8).map(lambda s: ["input", "text", s or "x"]),
    st.sampled_from(
        [
            ["monkey", "-p", "com.phoneagent.catalog", "-c", "android.intent.category.LAUNCHER", "1"],
            ["am", "start", "-n", "com.google.android.apps.messaging/.ui.ConversationListActivity"],
            ["am", "start", "-a", "android.settings.WIFI_SETTINGS"],
            ["am", "force-stop", "com.google.android.apps.messaging"],
        ]
    ),
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(commands, max_size=25))
def test_random_input_keeps_the_dump_consistent(sequence: list[list[str]]) -> None:
    phone = VirtualPhone()
    phone.clock = lambda: "12:00"
    for argv in sequence:
        assert phone.run(argv, b"", None).exit_code == 0
    state = phone.state()
    json.dumps(state)
    assert 0 <= state["catalog_scroll"] <= 50 * 200 - (2274 - 340)
    xml = phone.run(["uiautomator", "dump", "/dev/tty"], b"", None).stdout.split(b"UI hierchary")[0]
    windows = phone.windows()
    for element in ET.fromstring(xml).iter("node"):
        left, right = element.attrib["bounds"][1:-1].split("][")
        x1, y1 = map(int, left.split(","))
        x2, y2 = map(int, right.split(","))
        assert 0 <= x1 < x2 <= 1080 and 0 <= y1 < y2 <= 2400
        if element.attrib["clickable"] == "true":
            hit = hit_test(windows, (x1 + x2) // 2, (y1 + y2) // 2)
            assert hit is not None and hit.bounds == (x1, y1, x2, y2)


words = st.sampled_from(
    [
        "-p",
        "-n",
        "-a",
        "-d",
        "-c",
        "--es",
        "--ei",
        "msg",
        "1",
        "0",
        "-3",
        "list",
        "packages",
        "start",
        "broadcast",
        "force-stop",
        "get",
        "put",
        "global",
        "wifi_on",
        "size",
        "density",
        "dump",
        "tap",
        "swipe",
        "text",
        "keyevent",
        "com.android.settings",
        "com.android.settings/.Settings",
        "https://x.org",
        "ADB_INPUT_B64",
        "%s",
        "-W",
        "resolve-activity",
        "--brief",
        "window",
        "windows",
        "/sdcard/x",
        "/nope/y",
        "set",
        "enable",
        "-s",
        "é",
        "",
    ]
)


@settings(max_examples=150, deadline=None)
@given(
    st.sampled_from(sorted(VirtualPhone().command_names())),
    st.lists(st.one_of(words, st.text(max_size=6)), max_size=7),
)
def test_any_arguments_get_an_answer_not_an_exception(name: str, args: list[str]) -> None:
    phone = VirtualPhone()
    store = _Store()
    result = phone.run([name, *args], b"", store)
    assert isinstance(result.exit_code, int) and 0 <= result.exit_code <= 255
    assert b"Exception occurred while executing" not in result.stderr or b"java.lang." in result.stderr
    json.dumps(phone.state())


class _Store:
    def read_file(self, path: str) -> bytes:
        raise FileNotFoundError(path)

    def write_file(self, path: str, data: bytes) -> None:
        if not path.startswith(("/sdcard/", "/data/local/tmp/")):
            raise FileNotFoundError(path)
