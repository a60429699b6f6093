"""Maestro's flow grammar as data: every command a flow may hold, what a bare, scalar, list or mapping
value means for it, its keys and their kinds, the selector's keys and the header's — the table the reader
checks a flow against (``flow_reader``) and the runner's actions must match (a test pins the two).

Learned from Maestro's own reader (mobile-dev-inc/maestro, ``YamlFluentCommand`` and its ``Yaml*``
classes): what it accepts is accepted here, what it refuses is refused. Kinds follow the Java types Maestro
reads into: a ``str`` key takes any scalar (numbers and booleans become their text), ``int`` and ``bool``
keys take a number or boolean (or its text, as Jackson coerces it) and never a ``${…}`` expression, a
``numstr`` key is a Maestro string that must be a number once its ``${…}`` are evaluated. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

STR, INT, NUMSTR, BOOL, DOUBLE = "string", "integer", "number", "boolean", "decimal"
OUT = "output path"  # a path the command writes to: it stays under the run's folder (output_paths)
SEL, SELS, ENV, CMDS, COND, STRS, MAP = "selector", "selectors", "env", "commands", "condition", "list", "map"
COMMON = {"label": STR, "optional": BOOL}

# Maestro's YamlElementSelector: one set of keys for every place a selector stands (tapOn, assertVisible,
# below: …); the ones that only mean something on a command (point, repeat …) are accepted anywhere, as
# Maestro accepts them, and do nothing inside a nested selector.
SELECTOR_KEYS: dict[str, str] = {
    "text": STR,
    "id": STR,
    "width": INT,
    "height": INT,
    "tolerance": INT,
    "optional": BOOL,
    "retryTapIfNoChange": BOOL,
    "waitUntilVisible": BOOL,
    "point": STR,
    "start": STR,
    "end": STR,
    "below": SEL,
    "above": SEL,
    "leftOf": SEL,
    "rightOf": SEL,
    "containsChild": SEL,
    "containsDescendants": SELS,
    "traits": STR,
    "index": NUMSTR,
    "enabled": BOOL,
    "selected": BOOL,
    "checked": BOOL,
    "focused": BOOL,
    "repeat": INT,
    "delay": INT,
    "waitToSettleTimeoutMs": INT,
    "childOf": SEL,
    "label": STR,
}
# The keys that choose elements (the rest are the command's options).
MATCHING_KEYS = (
    "text",
    "id",
    "index",
    "enabled",
    "checked",
    "focused",
    "selected",
    "below",
    "above",
    "leftOf",
    "rightOf",
    "containsChild",
    "childOf",
    "containsDescendants",
    "width",
    "height",
    "tolerance",
    "traits",
)
TRAITS = ("text", "square", "long-text")
CONDITION_KEYS = {
    "platform": STR,
    "visible": SEL,
    "notVisible": SEL,
    "true": STR,
    "label": STR,
    "optional": BOOL,
}
SWIPE_DIRECTIONS = ("UP", "DOWN", "LEFT", "RIGHT")
PLATFORMS = ("android", "ios", "web")


@dataclass(frozen=True)
class CommandSpec:
    """One command: ``bare`` when ``- name`` alone is a command; ``scalar`` the key a scalar value sets
    (``selector`` for a text selector); ``listed`` the key a list value sets; ``keys`` its mapping's keys
    and kinds; ``selector`` when its mapping is a selector (tapOn …); ``loose`` when its mapping may carry
    keys Maestro ignores (inputText, evalScript, assertTrue read only theirs); ``required`` keys."""

    bare: bool = False
    scalar: str | None = None
    listed: str | None = None
    keys: dict[str, str] = field(default_factory=dict)
    selector: bool = False
    loose: bool = False
    required: tuple[str, ...] = ()

    def all_keys(self) -> dict[str, str]:
        return {**(SELECTOR_KEYS if self.selector else {}), **COMMON, **self.keys}

    @property
    def shorthand(self) -> str | None:
        """The key a scalar value sets (a selector command's is its selector's ``text``)."""
        return "text" if self.scalar == "selector" else self.scalar


_SELECTOR_COMMAND = CommandSpec(scalar="selector", selector=True)
# phone-agent's own addition, kept from before: how long an assertion waits (Maestro's reader has no such
# key on assertVisible; `flow check` notes it).
_ASSERT_COMMAND = CommandSpec(scalar="selector", selector=True, keys={"timeout": INT})
_APP = {"appId": STR}
_AI_OPTIONAL = {"optional": BOOL, "label": STR}

COMMANDS: dict[str, CommandSpec] = {
    "launchApp": CommandSpec(
        bare=True,
        scalar="appId",
        keys={
            "appId": STR,
            "url": STR,
            "clearState": BOOL,
            "clearKeychain": BOOL,
            "stopApp": BOOL,
            "permissions": MAP,
            "arguments": MAP,
        },
    ),
    "stopApp": CommandSpec(bare=True, scalar="appId", keys=_APP),
    "killApp": CommandSpec(bare=True, scalar="appId", keys=_APP),
    "clearState": CommandSpec(bare=True, scalar="appId", keys=_APP),
    "clearKeychain": CommandSpec(bare=True),
    "tapOn": _SELECTOR_COMMAND,
    "doubleTapOn": _SELECTOR_COMMAND,
    "longPressOn": _SELECTOR_COMMAND,
    "assertVisible": _ASSERT_COMMAND,
    "assertNotVisible": _ASSERT_COMMAND,
    "copyTextFrom": _SELECTOR_COMMAND,
    "assertTrue": CommandSpec(scalar="condition", keys={"condition": STR}, loose=True),
    "assertWithAI": CommandSpec(scalar="assertion", keys={"assertion": STR}, required=("assertion",)),
    "assertNoDefectsWithAI": CommandSpec(bare=True, keys=_AI_OPTIONAL),
    "extractTextWithAI": CommandSpec(
        scalar="query", keys={"query": STR, "outputVariable": STR}, required=("query",)
    ),
    "inputText": CommandSpec(scalar="text", keys={"text": STR}, loose=True),
    "inputRandomText": CommandSpec(bare=True, keys={"length": INT}),
    "inputRandomNumber": CommandSpec(bare=True, keys={"length": INT}),
    "inputRandomEmail": CommandSpec(bare=True),
    "inputRandomPersonName": CommandSpec(bare=True),
    "eraseText": CommandSpec(bare=True, scalar="charactersToErase", keys={"charactersToErase": INT}),
    "pressKey": CommandSpec(scalar="key", keys={"key": STR}, required=("key",)),
    "back": CommandSpec(bare=True),
    "hideKeyboard": CommandSpec(bare=True),
    "pasteText": CommandSpec(bare=True),
    "scroll": CommandSpec(bare=True),
    "scrollUntilVisible": CommandSpec(
        keys={
            "element": SEL,
            "direction": STR,
            "timeout": NUMSTR,
            "speed": NUMSTR,
            "visibilityPercentage": INT,
            "centerElement": BOOL,
            "waitToSettleTimeoutMs": INT,
        },
        required=("element",),
    ),
    "swipe": CommandSpec(
        keys={
            "direction": STR,
            "start": STR,
            "end": STR,
            "from": SEL,
            "duration": NUMSTR,
            "waitToSettleTimeoutMs": NUMSTR,
        }
    ),
    "extendedWaitUntil": CommandSpec(keys={"visible": SEL, "notVisible": SEL, "timeout": NUMSTR}),
    "waitForAnimationToEnd": CommandSpec(bare=True, keys={"timeout": INT}),
    "openLink": CommandSpec(
        scalar="link", keys={"link": STR, "autoVerify": BOOL, "browser": BOOL}, required=("link",)
    ),
    "takeScreenshot": CommandSpec(scalar="path", keys={"path": OUT}, required=("path",)),
    "startRecording": CommandSpec(scalar="path", keys={"path": OUT}, required=("path",)),
    "stopRecording": CommandSpec(bare=True),
    "runFlow": CommandSpec(scalar="file", keys={"file": STR, "when": COND, "env": ENV, "commands": CMDS}),
    "runScript": CommandSpec(scalar="file", keys={"file": STR, "env": ENV, "when": COND}, required=("file",)),
    "evalScript": CommandSpec(scalar="script", keys={"script": STR}, loose=True),
    "repeat": CommandSpec(keys={"times": NUMSTR, "while": COND, "commands": CMDS}, required=("commands",)),
    "retry": CommandSpec(keys={"maxRetries": NUMSTR, "file": STR, "commands": CMDS, "env": ENV}),
    "setLocation": CommandSpec(keys={"latitude": STR, "longitude": STR}, required=("latitude", "longitude")),
    "travel": CommandSpec(keys={"points": STRS, "speed": DOUBLE}, required=("points",)),
    "addMedia": CommandSpec(listed="files", keys={"files": STRS}, required=("files",)),
    "setAirplaneMode": CommandSpec(scalar="value", keys={"value": STR}, required=("value",)),
    "toggleAirplaneMode": CommandSpec(bare=True),
}
# The most a number key may ask for: a flow never runs away (a tap repeated a million times, a billion
# random letters, a day's delay); timeouts are bounded by the run's own deadline instead.
MAXIMA = {"repeat": 1_000, "delay": 60_000, "length": 10_000, "charactersToErase": 10_000}
# Keys phone-agent takes that Maestro's reader does not (kept from before; `flow check` notes them).
OWN_KEYS = {"assertVisible": ("timeout",), "assertNotVisible": ("timeout",)}
# ``- action: back`` and its kin, Maestro's older spelling of a bare command.
ACTION_ALIASES = ("back", "hideKeyboard", "scroll", "clearKeychain", "pasteText")
# ``- hide keyboard`` is Maestro's other spelling of ``- hideKeyboard``.
BARE_ALIASES = {"hide keyboard": "hideKeyboard"}
# Header keys: the ones read here; every other key Maestro accepts too (and keeps aside), so they are
# read, and ``flow check`` names them as changing nothing here.
HEADER_KEYS = ("appId", "url", "name", "tags", "env", "onFlowStart", "onFlowComplete")
KNOWN_NOOP_HEADER_KEYS = {
    "jsEngine": "phone-agent runs every script in its own sandboxed QuickJS engine",
    "androidWebViewHierarchy": "phone-agent reads WebView content through the accessibility tree",
    "properties": "custom properties are kept by Maestro's cloud reports only",
}
