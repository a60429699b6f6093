"""No value in a flow reaches the phone's shell as syntax: every command of the flow grammar, each of its
keys, given values that would run ``touch MARKER`` if pasted into a command line — written in the flow
(refused when the flow is read where a kind is known: an appId, a permission) and through ``${ATTACK}``
from the run's env (known only while it runs) — then the simulated phone's file system is searched for
the marker. Runs through run_flow on the page's one dispatch and the project's ADB client; the flow's
waits run on a clock that moves only when the runner sleeps, so a lookup that cannot succeed costs its
polls, not its seconds."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from phone_agent.flows.flow_reader import COMMANDS, SELECTOR_KEYS
from phone_agent.tools.dispatch import ToolDispatcher
from phone_agent.tools.spec import Channel
from tests.support import SHELL_ATTACK_MARKS, shell_attacks

MARKS = SHELL_ATTACK_MARKS


def attacks(mark: str) -> list[str]:
    return shell_attacks(mark, short=True)


# What each command needs beside the key under attack, to be a command the reader takes.
NEEDS: dict[str, dict] = {
    "inputText": {"text": "hello"},
    "pressKey": {"key": "back"},
    "openLink": {"link": "https://example.com/"},
    "takeScreenshot": {"path": "shot"},
    "swipe": {"direction": "UP"},
    "scrollUntilVisible": {"element": {"text": "Settings"}, "timeout": 500},
    "extendedWaitUntil": {"visible": {"text": "Settings"}, "timeout": 100},
    "repeat": {"times": 1, "commands": ["back"]},
    "runFlow": {"commands": ["back"]},
}
SHORT_TIMEOUT = {"assertVisible", "assertNotVisible", "extendedWaitUntil", "waitForAnimationToEnd"}


def keys_under_attack(name: str) -> list[str]:
    spec = COMMANDS[name]
    keys = [key for key, kind in spec.keys.items() if kind in ("string", "integer")]
    if spec.selector:
        keys += [key for key in ("text", "id") if key in SELECTOR_KEYS]
    return [*keys, "label"]


def yaml_value(value: object, indent: int) -> str:
    if isinstance(value, dict):
        pad = " " * indent
        return "".join(f"\n{pad}{key}: {yaml_value(inner, indent + 2)}" for key, inner in value.items())
    if isinstance(value, list):
        return "[" + ", ".join(str(item) for item in value) + "]"
    return json.dumps(value)  # a double-quoted YAML scalar


def flow_of(name: str, key: str, values: list[str]) -> str:
    lines = ["appId: com.android.settings", "---"]
    for value in values:
        args = {**NEEDS.get(name, {}), key: value, "optional": True}
        if name in SHORT_TIMEOUT and key != "timeout":
            args.setdefault("timeout", 100)
        if key in ("start", "end"):
            args.pop("direction", None)
            args = {"start": "50%,50%", "end": "50%,40%", **args}
        if name == "runFlow" and key == "file":
            args.pop("commands")
        lines.append(f"- {name}:{yaml_value(args, 4)}")
    return "\n".join(lines) + "\n"


CASES = [(name, key) for name in COMMANDS for key in keys_under_attack(name)]


@pytest.fixture
async def ctx(dispatcher: ToolDispatcher) -> ToolDispatcher:
    """The dispatch on the sim, its flows' waits on a clock that moves only when they sleep."""
    clock = [0.0]

    async def sleep(seconds: float) -> None:
        clock[0] += seconds * 1000
        await asyncio.sleep(0)

    session = dispatcher.session()
    session.sleep = sleep
    session.monotonic_ms = lambda: clock[0]
    return dispatcher


def pwned(sim) -> list[str]:
    return [path for path in sim.fs.walk("/") if re.fullmatch(r"pwned-[\w-]+", path.rsplit("/", 1)[-1])]


@pytest.mark.parametrize(("command", "key"), CASES, ids=[f"{c}.{k}" for c, k in CASES])
async def test_no_flow_value_runs_on_the_phone(ctx, sim, command, key):
    count = len(attacks(""))
    written = [attacks(f"{MARKS}/pwned-{command}-{key}-w{n}")[n] for n in range(count)]
    passed_in = [attacks(f"{MARKS}/pwned-{command}-{key}-e{n}")[n] for n in range(count)]
    for values, env in (
        (written, {}),
        *(([f"${{ATTACK{n}}}"], {f"ATTACK{n}": value}) for n, value in enumerate(passed_in)),
    ):
        text = flow_of(command, key, values)
        result = await ctx.dispatch("run_flow", {"yaml": text, "env": env}, Channel.RELAY)
        if result.get("isError"):  # refused as the flow is read, or failed in words: never a crash
            code = result["structuredContent"]["code"]
            assert code in ("invalid_flow", "invalid_argument"), (text, result)
    assert pwned(sim) == [], f"{command}.{key} ran an attacker's command"


async def test_launch_app_with_an_attacking_app_id_is_refused_when_read(ctx, sim):
    text = (
        'appId: "com.x;touch /sdcard/Download/pwned-app;echo"\n---\n'
        "- launchApp:\n    clearState: true\n    stopApp: false\n"
    )
    result = await ctx.dispatch("run_flow", {"yaml": text}, Channel.RELAY)
    assert result["structuredContent"]["code"] == "invalid_flow"
    assert "line 1, column 8" in result["content"][0]["text"]
    assert "appId is not an Android package name" in result["content"][0]["text"]
    assert pwned(sim) == []


async def test_a_permission_named_as_an_attack_is_refused_when_read(ctx, sim):
    text = (
        "appId: com.android.settings\n---\n- launchApp:\n    permissions:\n"
        '      "x;touch /sdcard/Download/pwned-perm;echo": allow\n'
    )
    result = await ctx.dispatch("run_flow", {"yaml": text}, Channel.RELAY)
    assert result["structuredContent"]["code"] == "invalid_flow"
    said = result["content"][0]["text"]
    assert "line 5" in said and "not a permission name" in said
    assert pwned(sim) == []


async def test_an_app_id_from_env_is_checked_when_it_runs(ctx, sim):
    text = "appId: ${APP}\n---\n- launchApp:\n    clearState: true\n    stopApp: false\n"
    env = {"APP": "com.x;touch /sdcard/Download/pwned-env;echo"}
    result = await ctx.dispatch("run_flow", {"yaml": text, "env": env}, Channel.RELAY)
    report = result["structuredContent"]
    assert report["passed"] is False
    assert "appId is not an Android package name" in report["failure"]["error"]
    assert pwned(sim) == []
