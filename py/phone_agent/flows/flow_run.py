"""The run of a flow itself: each command, in order, through the catalog's device tools — no model.

``FlowRunnerBase`` acts through a ``FlowPhone``: ``call`` runs a device tool of the catalog by name (tap,
long_press, swipe, type_text, press_key, open_app, stop_app, open_url, push_file …) and raises its
``ToolError``; ``nodes`` reads the screen's UI tree, on which Maestro's selectors are matched
(``selectors``); ``shell`` runs a shell line on the phone. Commands are run by a table of actions
(``actions.ACTIONS``, one function a command), handed to the runner. ``${…}`` are expanded when a
command runs (``variables``), through the run's JavaScript session when they are more than a name.

A run is Maestro's: the header's ``onFlowStart`` commands, the flow's, then ``onFlowComplete``'s, which run
even when a command failed. Every wait is bounded (Maestro's: 7 s for an assertion, 10 s to find what a
tap names, a command's own ``timeout``) and the whole run by its deadline. The run stops at the first failed
step; the steps after it are reported skipped. Pure.
"""

from __future__ import annotations

import asyncio
import base64
import posixpath
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..device.interface import UiNode
from ..errors import ToolError
from .grammar import MATCHING_KEYS
from .model import Flow, FlowCommand
from .scripts import ScriptSession, truthy
from .selectors import UiScreen, describe, find
from .variables import StepFailed, Variables

ASSERT_WAIT_MS = 7_000  # Maestro's fluent wait for assertVisible / assertNotVisible
LOOKUP_WAIT_MS = 10_000  # how long tapOn and its kin look for the element they name
OPTIONAL_LOOKUP_WAIT_MS = 3_000
POLL_S = 0.3
SETTLE_S = 0.4  # after an action, before the next command looks at the screen
MAX_SETTLE_MS = 30_000  # Maestro's ceiling on waitToSettleTimeoutMs
# Keys whose ``${…}`` are not expanded before a command runs: conditions are evaluated when they are
# checked (a repeat's while each round), runScript's env by the script's own scope.
_RAW_KEYS = ("when", "while")


class FlowPhone(Protocol):
    """What a flow needs of the phone: the catalog's device tools by name, the UI tree, a screenshot,
    deleting characters, a shell line."""

    async def call(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """The tool's structuredContent; ToolError when it fails."""
        ...

    async def nodes(self) -> list[UiNode]: ...

    async def screenshot(self) -> bytes: ...

    async def delete_chars(self, count: int) -> None: ...

    async def shell(self, command: str) -> str: ...


@dataclass
class FlowRun:
    """The state of one run: its variables and scripts, the screenshots and recordings it made, the
    flow's path (runScript's and takeScreenshot's names), the deadline."""

    variables: Variables
    deadline: float
    path: str = ""
    screenshots: list[dict[str, str]] = field(default_factory=list)
    recordings: list[dict[str, str]] = field(default_factory=list)
    recording: str = ""  # the path of the recording startRecording began, until stopRecording
    prepared: set[str] = field(default_factory=set)  # what the phone was set up for once a run (location)

    @property
    def env(self) -> dict[str, str]:
        return self.variables.env

    @property
    def copied(self) -> str:
        return self.variables.copied


Action = Callable[["FlowRunnerBase", FlowCommand, dict[str, Any], FlowRun], Awaitable[None]]


def monotonic_ms() -> float:
    return time.monotonic() * 1000


def point_of(
    text: str, width: int, height: int, within: tuple[int, int, int, int] | None = None
) -> tuple[int, int]:
    """``"50%,50%"`` (of the screen, or of ``within``) or ``"100, 200"`` (pixels) as a point."""
    parts = [part.strip() for part in str(text).split(",")]
    if len(parts) != 2:
        raise StepFailed(f"{text!r} is not a point: write x,y in pixels or x%,y% of the screen")
    left, top, right, bottom = within or (0, 0, width, height)
    out = []
    for part, low, span in ((parts[0], left, right - left), (parts[1], top, bottom - top)):
        try:
            if part.endswith("%"):
                out.append(int(low + span * float(part[:-1]) / 100))
            else:
                out.append(int(float(part)) + (low if within else 0))
        except ValueError:
            raise StepFailed(f"{text!r} is not a point: write x,y in pixels or x%,y% of the screen") from None
    x = min(max(out[0], 0), max(width - 1, 0))
    y = min(max(out[1], 0), max(height - 1, 0))
    return x, y


def fingerprint(nodes: list[UiNode]) -> tuple[Any, ...]:
    """What a screen shows, to tell whether it changed."""
    return tuple((n.class_name, n.text, n.content_desc, n.bounds, n.checked, n.focused) for n in nodes)


async def settle_screen(runner: FlowRunnerBase, limit: float, run: FlowRun) -> None:
    """Wait until two looks in a row see the same screen, at most ``limit`` ms."""
    started = runner.now()
    last = fingerprint(await runner.phone.nodes())
    while runner.now() - started < limit and runner.now() < run.deadline:
        await runner.sleep(POLL_S)
        now = fingerprint(await runner.phone.nodes())
        if now == last:
            return
        last = now


def selector_of(args: dict[str, Any]) -> dict[str, Any]:
    """The keys of a command's arguments that choose an element."""
    return {key: value for key, value in args.items() if key in MATCHING_KEYS}


class SkipStep(Exception):
    """A command that did not run because its condition was false (Maestro reports it skipped)."""


class FlowRunnerBase:
    """Runs flows on one phone with a table of actions. ``progress`` hears one line a step."""

    def __init__(
        self,
        phone: FlowPhone,
        actions: Mapping[str, Action],
        progress: Callable[[str], None] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        monotonic_ms: Callable[[], float] = monotonic_ms,
        screen_size: Callable[[], Awaitable[tuple[int, int]]] | None = None,
    ) -> None:
        self.phone, self.actions, self.progress = phone, actions, progress
        self.sleep, self.now = sleep, monotonic_ms
        # The screen's true size as it is turned now, when the caller knows it; else a flow's screen is
        # the union of the tree's windows.
        self.screen_size = screen_size

    # -- the screen ---------------------------------------------------------------------------

    async def screen(self) -> UiScreen:
        nodes = await self.phone.nodes()
        size = await self.screen_size() if self.screen_size is not None else (0, 0)
        return UiScreen(nodes, *size)

    async def wait_for(
        self, selector: dict[str, Any], present: bool, limit_ms: float, run: FlowRun
    ) -> tuple[UiNode | None, UiScreen]:
        """Look until ``selector`` finds a node (``present``) or none, at most ``limit_ms``; the node
        (or None) and the last screen. Never raises for not found: the caller says what failed."""
        started = self.now()
        while True:
            screen = await self.screen()
            found = find(selector, screen)
            if bool(found) == present:
                return (found[0] if found else None), screen
            elapsed = self.now() - started
            if elapsed >= limit_ms or self.now() >= run.deadline:
                return (found[0] if found else None), screen
            await self.sleep(min(POLL_S, max(0.0, (limit_ms - elapsed) / 1000)))

    async def element(
        self, selector: dict[str, Any], run: FlowRun, optional: bool = False
    ) -> tuple[UiNode, UiScreen]:
        limit = OPTIONAL_LOOKUP_WAIT_MS if optional else LOOKUP_WAIT_MS
        node, screen = await self.wait_for(selector, True, limit, run)
        if node is None:
            raise StepFailed(f"Element not found: {describe(selector)}. The screen shows {screen.summary()}")
        return node, screen

    async def settle(self) -> None:
        await self.sleep(SETTLE_S)

    # -- running ------------------------------------------------------------------------------

    async def run(
        self,
        flow: Flow,
        env: dict[str, str] | None = None,
        timeout_ms: int = 600_000,
        scripts: ScriptSession | None = None,
    ) -> dict[str, Any]:
        """Run ``flow``; ``{passed, durationMs, steps, screenshots}``, and ``failure`` (the failed step's
        index, command and error, and the screen's PNG then, base64) when a step failed."""
        started = self.now()
        filename = posixpath.splitext(posixpath.basename(flow.path))[0] if flow.path else ""
        variables = Variables({**({"MAESTRO_FILENAME": filename} if filename else {}), **(env or {})})
        variables.scripts = scripts
        env_error = await self.define_env(flow, variables, env or {})
        run = FlowRun(variables, started + timeout_ms, flow.path)
        hooks = [("onFlowStart", command) for command in flow.on_start]
        body = [("", command) for command in flow.commands]
        after = [("onFlowComplete", command) for command in flow.on_complete]
        steps: list[dict[str, Any]] = []
        failed: dict[str, Any] | None = None
        if env_error is not None:  # the header's env could not be evaluated: nothing runs
            failed = {"index": 0, "command": "env", "line": 1, "error": env_error}
        total = len(hooks) + len(body) + len(after)
        for index, (hook, command) in enumerate([*hooks, *body, *after], 1):
            step: dict[str, Any] = {"index": index, "command": command.describe(), "line": command.line}
            if hook:
                step["hook"] = hook
            if failed is not None and hook != "onFlowComplete":
                steps.append({**step, "status": "skipped", "durationMs": 0})
                continue
            began = self.now()
            error, skipped = await self.attempt(command, run)
            step["durationMs"] = round(self.now() - began)
            logs = variables.take_logs()
            if logs:
                step["logs"] = logs
            if error is None:
                step["status"] = "skipped" if skipped else "passed"
            elif command.optional:
                step.update(status="skipped", error=f"optional command failed: {error}")
            else:
                step.update(status="failed", error=error)
                if failed is None:
                    failed = {
                        "index": index,
                        "command": step["command"],
                        "line": command.line,
                        "error": error,
                    }
            steps.append(step)
            self.report(step, total)
        if run.recording:  # Maestro closes a recording the flow left running
            try:
                answer_data = await self.phone.call("stop_recording", {})
                run.recordings.append(
                    {"path": run.recording, "data": str(answer_data.get("contentBase64", ""))}
                )
            except ToolError:
                pass
        answer: dict[str, Any] = {
            "passed": failed is None,
            "durationMs": round(self.now() - started),
            "steps": steps,
            "screenshots": run.screenshots,
            "recordings": run.recordings,
        }
        if flow.name:
            answer["name"] = flow.name
        if failed is not None:
            try:
                failed["screenshot"] = base64.b64encode(await self.phone.screenshot()).decode("ascii")
            except Exception as exc:  # the phone may be the reason it failed
                failed["screenshotError"] = str(exc)
            answer["failure"] = failed
        return answer

    async def define_env(self, flow: Flow, variables: Variables, given: dict[str, str]) -> str | None:
        """The header's env, in order, each value's ``${…}`` evaluated with the ones before it (as
        Maestro's DefineVariables does); a value given by the caller (``--env``) wins and is taken as is.
        None, or why a value could not be evaluated."""
        for name, value in flow.env.items():
            if name in given:
                continue
            try:
                variables.env[name] = await variables.expand(value, flow.path, 1)
            except StepFailed as exc:
                return f"env {name}: {exc}"
        return None

    def report(self, step: dict[str, Any], total: int) -> None:
        if self.progress is None:
            return
        for line in step.get("logs", []):
            self.progress(f"console.log: {line}")
        mark = {"passed": "✅", "failed": "❌", "skipped": "⏭️"}[step["status"]]
        self.progress(
            f"[{step['index']}/{total}] {mark} {step['command']} ({step['durationMs']} ms)"
            + (f": {step['error']}" if "error" in step else "")
        )

    async def attempt(self, command: FlowCommand, run: FlowRun) -> tuple[str | None, bool]:
        """Run one command: (None, skipped?) when it did what it says, else (why not, False)."""
        if self.now() >= run.deadline:
            return "the flow ran out of time (timeoutMs) before this command", False
        try:
            raw = {key: value for key, value in command.args.items() if key in _RAW_KEYS}
            cooked = {key: value for key, value in command.args.items() if key not in _RAW_KEYS}
            args = {**await run.variables.expand(cooked, command.source, command.line), **raw}
            await self.actions[command.name](self, command, args, run)
        except SkipStep:
            return None, True
        except StepFailed as exc:
            return str(exc), False
        except ToolError as exc:
            return f"{exc.message} ({exc.code})", False
        return None, False

    async def run_inner(
        self,
        commands: list[FlowCommand],
        run: FlowRun,
        where: str,
        on_start: list[FlowCommand] | None = None,
        on_complete: list[FlowCommand] | None = None,
    ) -> None:
        """runFlow's, retry's and repeat's commands (a subflow's own hooks around them); the first failure
        fails the outer step, saying which."""
        try:
            for command in [*(on_start or []), *commands]:
                await self.inner_step(command, run, where)
        finally:
            for command in on_complete or []:
                await self.inner_step(command, run, where)

    async def inner_step(self, command: FlowCommand, run: FlowRun, where: str) -> None:
        error, _ = await self.attempt(command, run)
        if error is not None and not command.optional:
            source = f"{command.source} " if command.source else ""
            raise StepFailed(f"{where}: {source}line {command.line} `{command.describe()}` failed: {error}")

    async def condition(self, condition: dict[str, Any] | None, run: FlowRun, command: FlowCommand) -> bool:
        """Maestro's condition: the platform, a selector visible or not, a script's value true."""
        if not condition:
            return True
        if "platform" in condition and str(condition["platform"]).lower() != run.variables.platform:
            return False
        if "visible" in condition or "notVisible" in condition:
            screen = await self.screen()
            if "visible" in condition:
                selector = await run.variables.expand(condition["visible"], command.source, command.line)
                if not find(selector, screen):
                    return False
            if "notVisible" in condition:
                selector = await run.variables.expand(condition["notVisible"], command.source, command.line)
                if find(selector, screen):
                    return False
        if "true" in condition:
            value = await run.variables.expand(str(condition["true"]), command.source, command.line)
            return truthy(value)
        return True
