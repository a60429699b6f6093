"""Reading flows: the YAML that Maestro flows are written in, the command table, and the errors a flow
that cannot be run gets when it is read (with its line and column), never when it runs."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from phone_agent.flows.flow_reader import COMMANDS, FlowError, read_flow
from phone_agent.flows.recorder import flow_yaml, regex_literal
from phone_agent.flows.yaml_nodes import parse_all

EVERY_COMMAND = """\
appId: com.android.settings
name: every command
env:
  WHO: Zoë
---
- launchApp
- launchApp:
    appId: com.google.android.apps.messaging
    clearState: true
    stopApp: false
- stopApp
- stopApp: com.android.chrome
- clearState
- clearState: com.android.chrome
- tapOn: Settings
- tapOn: {id: "title", index: 1}
- tapOn:
    point: 50%,50%
- tapOn:
    text: "Wi.*"
    below: Network & internet
    retryTapIfNoChange: true
    optional: true
- longPressOn: {id: conversation_name}
- doubleTapOn:
    point: "100, 200"
- inputText: Hello ${WHO}
- eraseText
- eraseText: 5
- eraseText:
    charactersToErase: 7
- pressKey: Home
- pressKey: Volume Up
- pressKey: backspace
- back
- hideKeyboard
- scroll
- scrollUntilVisible:
    element:
      text: Item 40
    direction: DOWN
    timeout: 30000
- swipe:
    direction: LEFT
- swipe:
    start: 90%, 50%
    end: 10%, 50%
- assertVisible: Settings
- assertVisible:
    text: Wi-Fi
    enabled: true
    checked: false
- assertNotVisible:
    id: compose
    timeout: 2000
- extendedWaitUntil:
    visible: Done
    timeout: 10000
- extendedWaitUntil:
    notVisible: {id: spinner}
    timeout: 5000
- waitForAnimationToEnd
- waitForAnimationToEnd:
    timeout: 3000
- openLink: https://example.com/a?b=c#d
- takeScreenshot: shots/home
- copyTextFrom: {id: title}
- pasteText
- runFlow: login.yaml
- runFlow:
    when:
      visible: Sign in
    env:
      USER: someone
    commands:
      - tapOn: Sign in
      - inputText: ${USER}
- repeat:
    times: 3
    commands:
      - scroll
- repeat:
    while:
      notVisible: Item 30
    commands:
      - scroll
- label: a labelled one
  tapOn: Settings
"""

LOGIN = "appId: com.android.settings\nenv:\n  USER: nobody\n---\n- tapOn: Sign in\n"


def test_every_command_of_the_issue_is_read():
    flow = read_flow(
        EVERY_COMMAND.replace("- label: a labelled one\n  tapOn: Settings\n", ""), files={"login.yaml": LOGIN}
    )
    assert flow.app_id == "com.android.settings"
    assert flow.name == "every command"
    assert flow.env == {"WHO": "Zoë"}
    names = {command.name for command in flow.commands}
    assert names <= set(COMMANDS)
    first = flow.commands[0]
    assert first.args == {"appId": "com.android.settings"} and first.line == 6
    launch = flow.commands[1]
    assert launch.args == {"appId": "com.google.android.apps.messaging", "clearState": True, "stopApp": False}
    tap = next(c for c in flow.commands if c.name == "tapOn" and "below" in c.args)
    assert tap.optional is True
    assert tap.args["below"] == {"text": "Network & internet"}
    included = next(c for c in flow.commands if c.name == "runFlow" and c.args.get("file") == "login.yaml")
    assert [c.name for c in included.commands] == ["tapOn"] and included.env == {"USER": "nobody"}
    inline = next(c for c in flow.commands if c.name == "runFlow" and c.condition)
    assert inline.condition == {"visible": {"text": "Sign in"}} and inline.env == {"USER": "someone"}
    repeat = next(c for c in flow.commands if c.name == "repeat" and c.condition)
    assert repeat.condition == {"notVisible": {"text": "Item 30"}}
    assert next(c for c in flow.commands if c.name == "openLink").args == {
        "link": "https://example.com/a?b=c#d"
    }


def test_a_command_item_with_two_keys_is_refused_even_with_a_label():
    with pytest.raises(FlowError) as caught:
        read_flow(EVERY_COMMAND, files={"login.yaml": LOGIN})
    assert caught.value.line == EVERY_COMMAND.count("\n", 0, EVERY_COMMAND.index("- label:")) + 1
    assert "one command per" in caught.value.reason


@pytest.mark.parametrize(
    ("text", "line", "column", "words"),
    [
        ("appId: a\n---\n- tapOn: OK\n- evalScripts: ${1+1}\n", 4, 3, "unsupported command 'evalScripts'"),
        ("appId: a\n---\n- tapOn:\n    txt: OK\n", 4, 5, "tapOn has no key 'txt'"),
        ("appId: a\n---\n- tapOn: {id: x\n", 3, 16, "not closed"),
        ('appId: a\n---\n- inputText: "open\n', 3, 14, "not closed"),
        ("appId: a\n---\n- swipe:\n    direction: SIDEWAYS\n", 4, 16, "UP, DOWN, LEFT, RIGHT"),
        ("appId: a\n---\n- pressKey: Hyper\n", 3, 13, "unknown key 'Hyper'"),
        ("appId: a\n---\n- tapOn: OK\n  - back\n", 4, 3, ""),
        ("appId: a\n---\n- repeat:\n    times: 5000\n    commands: [back]\n", 4, 12, "from 0 to 1000"),
        ("appId: a\n---\n- runFlow: missing.yaml\n", 3, 12, "missing.yaml"),
        ("appId: a\n---\n- tapOn: {text: OK, traits: round}\n", 3, 29, "unknown trait 'round'"),
        ("appId: a\n---\n- assertVisible:\n    enabled: maybe\n", 4, 14, "true or false"),
        ("name: a\nfoo: 1\n---\n- back\n", 1, 1, "the header needs an appId"),
        ("- launchApp\n", 1, 1, 'two sections separated by "---"'),
        ("appId: a\n---\n\tback\n", 3, 1, "tab"),
        ("appId: a\n---\n- tapOn: OK\n- tapOn: OK\n  optional: true\n", 4, 3, "one command per"),
    ],
)
def test_a_flow_that_cannot_be_run_is_refused_when_read_naming_line_and_column(text, line, column, words):
    with pytest.raises(FlowError) as caught:
        read_flow(text)
    assert (caught.value.line, caught.value.column) == (line, column), str(caught.value)
    assert words in caught.value.reason
    assert f"line {line}, column {column}" in str(caught.value)


def test_the_yaml_reader_reads_what_flows_are_written_with():
    text = (
        "a: plain text # a comment\n"
        "b: 'it''s'\n"
        'c: "tab\\there \\u00e9"\n'
        "d: [1, two, 'three, four']\n"
        "e: {x: 1, y: [a, b]}\n"
        "f: |\n  line one\n  line two\n"
        "g: >\n  folded\n  text\n"
        "h:\n- 1\n- 2\n"
        "i: true\n"
        "j: ~\n"
        "k: 50%,50%\n"
        "l: https://example.com/#x\n"
        "m:\n  - n: 1\n    o: 2\n  - p\n"
    )
    [document] = parse_all(text)
    assert document.python() == {
        "a": "plain text", "b": "it's", "c": "tab\there é", "d": [1, "two", "three, four"],
        "e": {"x": 1, "y": ["a", "b"]}, "f": "line one\nline two\n", "g": "folded text\n", "h": [1, 2],
        "i": True, "j": None, "k": "50%,50%", "l": "https://example.com/#x", "m": [{"n": 1, "o": 2}, "p"],
    }  # fmt: skip


def test_a_duplicate_key_takes_the_last_value_as_maestro_reads_it():
    [document] = parse_all("a: 1\nb: 2\na: 3\n")
    assert document.python() == {"a": 3, "b": 2}


def test_a_written_flow_reads_back_to_the_same_commands():
    commands = [
        ("launchApp", {"appId": "com.android.settings", "stopApp": False}),
        ("tapOn", regex_literal("Network & internet (2)")),
        ("tapOn", {"id": "title", "index": 2}),
        ("inputText", 'Zoë said "hi": 你好 #1'),
        ("pressKey", "Enter"),
        ("back", None),
        ("swipe", {"start": "10,20", "end": "30,40"}),
        ("extendedWaitUntil", {"visible": {"text": "true"}, "timeout": 5000}),
    ]
    text = flow_yaml("com.android.settings", commands, "round trip")
    flow = read_flow(text)
    assert flow.name == "round trip"
    assert [(c.name, c.args) for c in flow.commands] == [
        ("launchApp", {"appId": "com.android.settings", "stopApp": False}),
        ("tapOn", {"text": "Network & internet \\(2\\)"}),
        ("tapOn", {"id": "title", "index": 2}),
        ("inputText", {"text": 'Zoë said "hi": 你好 #1'}),
        ("pressKey", {"key": "Enter"}),
        ("back", {}),
        ("swipe", {"start": "10,20", "end": "30,40"}),
        ("extendedWaitUntil", {"visible": {"text": "true"}, "timeout": 5000}),
    ]


def test_what_real_flows_hold_is_read_as_maestro_reads_it():
    text = (
        "url: com.example.app\nandroidWebViewHierarchy: devtools\ntags: [smoke]\n"
        "onFlowStart:\n  - runFlow:\n      commands:\n        - back\nonFlowComplete:\n  - back\n---\n"
        "- action: back\n"
        "- tapOn:\n    text: Row\n    waitUntilVisible: true\n    traits: text long-text\n"
        "    below: {text: Title, optional: true}\n"
        "- assertVisible:\n    containsDescendants:\n      - text: One\n      - id: two\n"
        "- launchApp:\n    arguments:\n      user: zoë\n      count: 3\n      fast: true\n"
        '- inputText: "a long line\n    folded in two"\n'
        "- retry:\n    maxRetries: 2\n    commands:\n      - tapOn: OK\n"
        "- evalScript: ${output.a = 1}\n- assertTrue: ${output.a == 1}\n"
        "- runFlow:\n    when:\n      true: ${output.a}\n    commands:\n      - back\n"
        "- killApp\n- setAirplaneMode: enabled\n- toggleAirplaneMode\n- clearKeychain\n"
        "- startRecording: clip\n- stopRecording\n- inputRandomEmail\n"
        "- setLocation: {latitude: 1.5, longitude: 2}\n- travel: {points: ['1,1', '2,2'], speed: 10}\n"
    )
    flow = read_flow(text, source="flows/real.yaml")
    assert flow.app_id == "com.example.app" and flow.tags == ["smoke"]
    assert [c.name for c in flow.on_start] == ["runFlow"] and [c.name for c in flow.on_complete] == ["back"]
    assert "header key 'androidWebViewHierarchy' changes nothing here" in flow.notes[0]
    by_name = {command.name: command for command in flow.commands}
    assert by_name["back"].args == {}
    tap = by_name["tapOn"]
    assert tap.args["traits"] == ["text", "long-text"] and tap.args["waitUntilVisible"] is True
    assert tap.args["below"] == {"text": "Title", "optional": True}
    assert by_name["assertVisible"].args == {"containsDescendants": [{"text": "One"}, {"id": "two"}]}
    assert by_name["launchApp"].args["arguments"] == {"user": "zoë", "count": 3, "fast": True}
    assert by_name["inputText"].args == {"text": "a long line folded in two"}
    assert by_name["retry"].args == {"maxRetries": 2} and by_name["retry"].commands[0].name == "tapOn"
    assert by_name["runFlow"].condition == {"true": "${output.a}"}
    assert by_name["killApp"].args == {"appId": "com.example.app"}
    assert by_name["setAirplaneMode"].args == {"value": "enabled"}
    assert by_name["travel"].args == {"points": ["1,1", "2,2"], "speed": 10.0}


def test_every_problem_of_a_flow_is_listed_not_only_the_first():
    text = (
        "appId: a\n---\n- tapOn: {txt: 1}\n- back\n- teleport: home\n- launchApp:\n- swipe: {direction: up}\n"
    )
    with pytest.raises(FlowError) as caught:
        read_flow(text, source="f.yaml")
    assert [problem.location() for problem in caught.value.problems] == [
        "f.yaml:3:11: error: tapOn has no key 'txt' (it takes " + caught.value.reason.split("(it takes ")[1],
        "f.yaml:5:3: error: " + caught.value.problems[1].reason,
        "f.yaml:6:3: error: launchApp: has nothing after the colon: write `- launchApp` alone",
    ]
    assert "unsupported command 'teleport'" in caught.value.problems[1].reason


def test_mangled_flows_are_refused_with_a_flow_error_never_a_crash():
    corpus = sorted((Path(__file__).parent / "corpus").rglob("*.yaml"))
    rng = random.Random(34)
    tried = 0
    for path in corpus[::5]:
        text = path.read_text(encoding="utf-8")
        for _ in range(12):
            lines = text.splitlines(keepends=True)
            cut = rng.randrange(len(lines))
            mutation = rng.choice(["drop", "swap", "indent", "char", "dup"])
            if mutation == "drop":
                del lines[cut]
            elif mutation == "swap" and len(lines) > 1:
                other = rng.randrange(len(lines))
                lines[cut], lines[other] = lines[other], lines[cut]
            elif mutation == "indent":
                lines[cut] = " " * rng.randrange(1, 6) + lines[cut]
            elif mutation == "char":
                at = rng.randrange(len(lines[cut]) + 1)
                lines[cut] = lines[cut][:at] + rng.choice("{}[]:-&*!|>'\"#%@`\t\\") + lines[cut][at:]
            else:
                lines.insert(cut, lines[cut])
            try:
                read_flow("".join(lines), saved=lambda name: "appId: a\n---\n- back\n")
            except FlowError as exc:
                assert exc.line >= 1 and exc.column >= 1 and exc.reason
            tried += 1
    assert tried >= 300
