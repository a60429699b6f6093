"""No value a caller gives reaches the phone's shell as syntax, tried as an attacker would: every device
tool of the catalog (and every string parameter of each) is called, through the page's one dispatch and
the project's ADB client, with values that would run ``touch MARKER`` if a command line were built by
pasting them in — ``;``, ``$(…)``, backticks, newlines, ``&&``, ``|``, a broken-out quote and ``${IFS}``
for the spaces — and then the simulated phone's own file system (its shell is real: ``touch`` works) is
searched for the marker. The read-only profile's tools are also checked to send the phone only commands
that read."""

from __future__ import annotations

import base64
import re

import pytest

from phone_agent.adb.client import ServiceStream
from phone_agent.adb.device import AdbDevice
from phone_agent.tools.catalog import DEVICE_TOOLS, FLOW_TOOLS, TOOLS_BY_NAME, ToolProfile, tools_for_profile
from phone_agent.tools.dispatch import ToolDispatcher
from phone_agent.tools.named_secrets import SecretBook
from phone_agent.tools.spec import Channel
from tests.support import SHELL_ATTACK_MARKS, shell_attacks

MARKS = SHELL_ATTACK_MARKS
attacks = shell_attacks


# A valid call of each tool, into which each string parameter in turn gets the attack values.
BASE_ARGS: dict[str, dict] = {
    "list_elements": {},
    "tap": {},
    "long_press": {},
    "swipe": {"direction": "up"},
    "scroll_to": {"target": "text=Nothing here", "maxSwipes": 1},
    "type_text": {"text": "hello"},
    "type_secret": {"name": "ATTACK"},
    "press_key": {"key": "back"},
    "open_app": {"packageName": "com.android.settings"},
    "stop_app": {"packageName": "com.android.settings"},
    "open_url": {"url": "https://example.com/"},
    "wait_for": {"target": "text=Nothing here", "condition": "visible", "timeoutMs": 0},
    "uninstall_app": {"packageName": "com.phoneagent.catalog"},
    "clear_app_data": {"packageName": "com.android.settings"},
    "set_permission": {"packageName": "com.android.settings", "permission": "CAMERA", "granted": True},
    "read_logs": {"maxLines": 5},
    "list_crashes": {},
    "get_crash": {"id": "none"},
    "push_file": {"devicePath": "/sdcard/Download/a.txt", "contentBase64": base64.b64encode(b"hi").decode()},
    "pull_file": {"devicePath": "/sdcard/Download/a.txt"},
    "list_files": {"devicePath": "/sdcard"},
    "set_clipboard": {"text": "hello"},
    "pinch": {"scale": 1.5},
    "install_app": {},
    "stop_recording": {},
    "run_flow": {"yaml": "appId: com.android.settings\n---\n- back\n"},
    "assert_visible": {"target": "text=Nothing here", "timeoutMs": 0},
    "assert_not_visible": {"target": "text=Nothing here", "timeoutMs": 0},
}


def string_fields(tool: str) -> list[str]:
    properties = TOOLS_BY_NAME[tool].input_schema["properties"]
    return [name for name, spec in properties.items() if spec.get("type") == "string" and "enum" not in spec]


PHONE_TOOLS = [t.name for t in DEVICE_TOOLS if string_fields(t.name)] + [
    t.name for t in FLOW_TOOLS if t.name in ("run_flow", "assert_visible", "assert_not_visible")
]


def test_every_device_tool_with_a_string_parameter_is_attacked():
    assert set(PHONE_TOOLS) <= set(BASE_ARGS), sorted(set(PHONE_TOOLS) - set(BASE_ARGS))


@pytest.fixture
def ctx(client) -> ToolDispatcher:
    service = ToolDispatcher()
    service.device = AdbDevice(client, transport="tcp")
    book = SecretBook()
    marker = f"{MARKS}/pwned-secret"
    book.set_page({"ATTACK": f"x';touch {marker};echo '$(touch {marker})`touch {marker}`"})
    service.secrets = book
    return service


def pwned(sim) -> list[str]:
    """Marker files the attacks left, anywhere on the phone."""
    return [path for path in sim.fs.walk("/") if re.fullmatch(r"pwned-[\w-]+", path.rsplit("/", 1)[-1])]


@pytest.mark.parametrize("tool", PHONE_TOOLS)
async def test_no_value_of_any_parameter_runs_on_the_phone(ctx, sim, tool):
    answers = 0
    for field in string_fields(tool):
        for number in range(len(attacks(""))):
            mark = f"{MARKS}/pwned-{tool}-{field}-{number}"
            value = attacks(mark)[number]
            if field == "target":  # a locator, so that it gets as far as the screen
                value = f"text={value}"
            args = {**BASE_ARGS[tool], field: value}
            result = await ctx.dispatch(tool, args, Channel.RELAY)
            answers += 1
            if result.get("isError"):
                # Refused or failed, always in words: never a crash of the tool.
                assert result["structuredContent"]["code"] != "internal_error", (field, value, result)
    assert answers
    assert pwned(sim) == [], f"{tool} ran an attacker's command"
    assert await sim_alive(ctx)


async def sim_alive(ctx: ToolDispatcher) -> bool:
    status = await ctx.dispatch("get_device_status", {}, Channel.RELAY)
    return status["structuredContent"].get("connected") is True


async def test_a_package_filter_with_shell_syntax_is_refused_by_name(ctx, sim):
    result = await ctx.dispatch(
        "read_logs", {"packageName": f"com.x;touch {MARKS}/pwned-logs;echo"}, Channel.RELAY
    )
    assert result["isError"] and result["structuredContent"]["code"] == "invalid_argument"
    assert '"packageName"' in result["content"][0]["text"]
    assert pwned(sim) == []


async def test_a_secret_with_shell_syntax_is_typed_as_it_is(ctx, sim):
    await ctx.dispatch("open_app", {"packageName": "com.phoneagent.login"}, Channel.RELAY)
    target = "id=com.phoneagent.login:id/username"
    typed = await ctx.dispatch("type_secret", {"name": "ATTACK", "target": target}, Channel.RELAY)
    assert not typed.get("isError"), typed
    assert sim.phone.state()["drafts"]["com.phoneagent.login:id/username"].startswith("x';touch ")
    assert pwned(sim) == []


# ----- the read-only profile reads and nothing more ----------------------------------------------------


READING_COMMANDS = [
    r"getprop(?: [\w.]+)?",  # the phone's properties
    r"wm size",  # and screen size
    r"wm size; wm density; dumpsys display \| grep 'DisplayInfo\{'",  # get_screen_info
    r"dumpsys [\w -]+",  # dropbox, notification
    r"dumpsys window(?: windows)? \| grep .*",  # the focused window, the secure-window check
    r"date \+%s%z",  # the phone's clock
    r"pidof [\w.]+",
    r"logcat -d (?!.*-[cG])[\w ,.-]*",  # a dump of the log: never -c (clear) nor -G (resize)
    r"pm list packages(?: -3)?",
    r"screencap(?: -p)?",  # to stdout: never a file
    r"uiautomator dump /sdcard/window_dump\.xml && cat /sdcard/window_dump\.xml",
]
READING = re.compile("^(?:" + "|".join(READING_COMMANDS) + ")$")


class RecordingOpener:
    """The ADB client as the device sees it, writing down every service it opens."""

    def __init__(self, opener) -> None:
        self.opener = opener
        self.services: list[str] = []
        self.sync_requests: list[bytes] = []

    @property
    def features(self):
        return self.opener.features

    async def open_stream(self, service: str, timeout: float | None = None) -> ServiceStream:
        self.services.append(service)
        stream = await self.opener.open_stream(service, timeout=timeout)
        if service == "sync:":
            return _SyncSpy(stream, self.sync_requests)
        return stream


class _SyncSpy:
    def __init__(self, stream, requests: list[bytes]) -> None:
        self._stream, self._requests = stream, requests

    def __getattr__(self, name):
        return getattr(self._stream, name)

    async def write(self, data) -> None:
        self._requests.append(bytes(data[:4]))
        await self._stream.write(data)


READ_ONLY_ARGS = {
    "wait_for": {"target": "text=Settings", "condition": "visible", "timeoutMs": 0},
    "assert_visible": {"target": "text=Settings", "timeoutMs": 0},
    "assert_not_visible": {"target": "text=Nothing", "timeoutMs": 0},
    "read_logs": {"packageName": "com.android.settings", "sinceSeconds": 60},
    "list_crashes": {"packageName": "com.android.settings", "sinceSeconds": 60},
    "get_crash": {"id": "none"},
    "pull_file": {"devicePath": "/sdcard/Download/a.txt"},
    "list_files": {"devicePath": "/sdcard"},
    "get_task_result": {"taskId": "none"},
    "get_flow": {"name": "none"},
}


async def test_the_read_only_profile_sends_the_phone_only_commands_that_read(client, sim):
    sim.fs.write_file("/sdcard/Download/a.txt", b"hi")
    spy = RecordingOpener(client)
    ctx = ToolDispatcher()
    ctx.device = AdbDevice(spy, transport="tcp")
    for spec in tools_for_profile(ToolProfile.READ_ONLY):
        await ctx.dispatch(spec.name, READ_ONLY_ARGS.get(spec.name, {}), Channel.RELAY)
    commands = [s.split(":", 1)[1] for s in spy.services if s.startswith(("shell", "exec"))]
    assert commands, spy.services
    writing = [command for command in commands if not READING.match(command)]
    assert writing == [], writing
    others = {s for s in spy.services if not s.startswith(("shell", "exec"))}
    assert others <= {"sync:"}, others
    # over sync: stat, list and receive; never send (a write) nor anything else
    assert set(spy.sync_requests) <= {b"STA2", b"STAT", b"LIS2", b"LIST", b"RECV", b"QUIT"}, spy.sync_requests
