"""Running a flow: each command, in order, through the catalog's device tools — no model.

``FlowRunner`` acts through a ``FlowPhone``: ``call`` runs a device tool of the catalog by name (tap,
long_press, swipe, type_text, press_key, open_app, stop_app, open_url …) and raises its ``ToolError``;
``nodes`` reads the screen's UI tree, on which Maestro's selectors are matched (``selectors``). Commands are
run by a table (``ACTIONS``), one function a command. Every wait is bounded (Maestro's: 7 s for an assertion,
10 s to find what a tap names, a command's own ``timeout``) and the whole run by its deadline. The run stops
at the first failed step; the steps after it are reported skipped. Pure.
"""

from __future__ import annotations

import asyncio
import base64
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..device import shell_args
from ..device.interface import UiNode
from ..device.shell_args import ShellValueError, package_name, permission_name
from ..errors import ToolError
from .flow_reader import COMMANDS, MAX_REPEAT, SELECTOR_KEYS, Flow, FlowCommand, repeat_bound
from .keys import maestro_key
from .output_paths import OutputPathError, output_path
from .selectors import UiScreen, describe, find
from .variables import SECRET_TEXT, StepFailed, expand

ASSERT_WAIT_MS = 7_000  # Maestro's fluent wait for assertVisible / assertNotVisible
LOOKUP_WAIT_MS = 10_000  # how long tapOn and its kin look for the element they name
OPTIONAL_LOOKUP_WAIT_MS = 3_000
EXTENDED_WAIT_MS = 10_000
SCROLL_UNTIL_VISIBLE_MS = 20_000  # Maestro's default timeout
ANIMATION_WAIT_MS = 15_000
POLL_S = 0.3
SETTLE_S = 0.4  # after an action, before the next command looks at the screen
ERASE_DEFAULT = 50


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
    """The state of one run: its variables, what copyTextFrom copied, screenshots taken, the deadline."""

    env: dict[str, str]
    deadline: float
    copied: str = ""
    screenshots: list[dict[str, str]] = field(default_factory=list)


def _monotonic_ms() -> float:
    return time.monotonic() * 1000


def _point(
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


def _fingerprint(nodes: list[UiNode]) -> tuple[Any, ...]:
    return tuple((n.class_name, n.text, n.content_desc, n.bounds, n.checked, n.focused) for n in nodes)


Action = Callable[["FlowRunner", FlowCommand, dict[str, Any], FlowRun], Awaitable[None]]


def _retyped(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """A number written as ``${NAME}`` is known only now: it must be a number then, or the step fails."""
    kinds = COMMANDS[name].keys
    for key, value in args.items():
        if kinds.get(key) == "integer" and isinstance(value, str):
            try:
                args[key] = int(value.strip())
            except ValueError:
                raise StepFailed(f"{key} must be a number, not {value!r}") from None
    return args


def selector_of(args: dict[str, Any]) -> dict[str, Any]:
    found = {key: value for key, value in args.items() if key in SELECTOR_KEYS}
    if "tolerance" in args and found:
        found["tolerance"] = args["tolerance"]
    return found


class FlowRunner:
    """Runs flows on one phone. ``progress`` hears one line a step."""

    def __init__(
        self,
        phone: FlowPhone,
        progress: Callable[[str], None] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        monotonic_ms: Callable[[], float] = _monotonic_ms,
        screen_size: Callable[[], Awaitable[tuple[int, int]]] | None = None,
    ) -> None:
        self.phone, self.progress, self.sleep, self.now = phone, progress, sleep, monotonic_ms
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
        self, flow: Flow, env: dict[str, str] | None = None, timeout_ms: int = 600_000
    ) -> dict[str, Any]:
        """Run ``flow``; ``{passed, durationMs, steps, screenshots}``, and ``failure`` (the failed step's
        index, command and error, and the screen's PNG then, base64) when a step failed."""
        started = self.now()
        run = FlowRun({**flow.env, **(env or {})}, started + timeout_ms)
        steps: list[dict[str, Any]] = []
        failed: dict[str, Any] | None = None
        total = len(flow.commands)
        for index, command in enumerate(flow.commands, 1):
            step = {"index": index, "command": command.describe(), "line": command.line}
            if failed is not None:
                steps.append({**step, "status": "skipped", "durationMs": 0})
                continue
            began = self.now()
            error = await self.attempt(command, run)
            step["durationMs"] = round(self.now() - began)
            if error is None:
                step["status"] = "passed"
            elif command.optional:
                step.update(status="skipped", error=f"optional command failed: {error}")
            else:
                step.update(status="failed", error=error)
                failed = {"index": index, "command": step["command"], "line": command.line, "error": error}
            steps.append(step)
            if self.progress is not None:
                mark = {"passed": "✅", "failed": "❌", "skipped": "⏭️"}[step["status"]]
                self.progress(
                    f"[{index}/{total}] {mark} {step['command']} ({step['durationMs']} ms)"
                    + (f": {step['error']}" if "error" in step else "")
                )
        answer: dict[str, Any] = {
            "passed": failed is None,
            "durationMs": round(self.now() - started),
            "steps": steps,
            "screenshots": run.screenshots,
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

    async def attempt(self, command: FlowCommand, run: FlowRun) -> str | None:
        """Run one command; None when it did what it says, else why not."""
        if self.now() >= run.deadline:
            return "the flow ran out of time (timeoutMs) before this command"
        try:
            args = _retyped(command.name, expand(command.args, run.env, run.copied))
            await ACTIONS[command.name](self, command, args, run)
        except StepFailed as exc:
            return str(exc)
        except ToolError as exc:
            return f"{exc.message} ({exc.code})"
        return None

    async def run_inner(self, commands: list[FlowCommand], run: FlowRun, where: str) -> None:
        """runFlow's and repeat's commands; the first failure fails the outer step, saying which."""
        for command in commands:
            error = await self.attempt(command, run)
            if error is not None and not command.optional:
                source = f"{command.source} " if command.source else ""
                raise StepFailed(
                    f"{where}: {source}line {command.line} `{command.describe()}` failed: {error}"
                )

    async def condition(self, condition: dict[str, Any], run: FlowRun) -> bool:
        condition = expand(condition, run.env, run.copied)
        if "platform" in condition and str(condition["platform"]).lower() != "android":
            return False
        screen = await self.screen()
        if "visible" in condition and not find(condition["visible"], screen):
            return False
        return not ("notVisible" in condition and find(condition["notVisible"], screen))


# -- the commands, one function each ------------------------------------------------------------


async def _launch_app(runner: FlowRunner, command: FlowCommand, args: dict[str, Any], run: FlowRun) -> None:
    package = args["appId"]
    if args.get("stopApp", True):
        await runner.phone.call("stop_app", {"packageName": package})
    if args.get("clearState"):
        await _clear(runner, package)
    if args.get("permissions"):
        await _set_permissions(runner, package, args["permissions"])
    await runner.phone.call("open_app", {"packageName": package})
    await runner.settle()


def _checked(check: Callable[[str], str], value: Any, what: str) -> str:
    """A value bound for the phone's shell, of its kind (a package, a permission), else the step fails."""
    try:
        return check(str(value))
    except ShellValueError as exc:
        raise StepFailed(f"{what} {exc.problem}: {exc.remedy}") from None


async def _clear(runner: FlowRunner, package: str) -> None:
    package = _checked(package_name, package, "appId")
    answer = await runner.phone.shell(shell_args.command("pm", "clear", package))
    if "Success" not in answer:
        raise StepFailed(f"the phone did not clear {package}'s data: {answer.strip() or 'no answer'}")


async def _set_permissions(runner: FlowRunner, package: str, wanted: dict[str, str]) -> None:
    """launchApp's permissions: ``all`` means every permission the app requests (``dumpsys package``);
    a named one wins over ``all``. allow grants, deny and unset revoke (pm grant / pm revoke)."""
    package = _checked(package_name, package, "appId")
    named = {_checked(permission_name, name, "the permission"): state for name, state in wanted.items()}
    states: dict[str, str] = {}
    if "all" in named:
        listing = await runner.phone.shell(shell_args.command("dumpsys", "package", package))
        requested, inside = [], False
        for line in listing.splitlines():
            stripped = line.strip()
            if stripped.startswith("requested permissions:"):
                inside = True
            elif inside and re.fullmatch(r"[A-Za-z0-9_.]+", stripped or "-") and "." in stripped:
                requested.append(stripped)
            elif inside:
                inside = False
        states = dict.fromkeys(requested, named["all"])
    states.update({name: state for name, state in named.items() if name != "all"})
    for name, state in states.items():
        verb = "grant" if state == "allow" else "revoke"
        answer = await runner.phone.shell(shell_args.command("pm", verb, package, name))
        if "Exception" in answer or "Unknown" in answer:
            raise StepFailed(f"the phone would not {verb} {name} for {package}: {answer.strip()}")


async def _stop_app(runner: FlowRunner, command: FlowCommand, args: dict[str, Any], run: FlowRun) -> None:
    await runner.phone.call("stop_app", {"packageName": args["appId"]})


async def _clear_state(runner: FlowRunner, command: FlowCommand, args: dict[str, Any], run: FlowRun) -> None:
    await _clear(runner, args["appId"])


async def _target_point(
    runner: FlowRunner, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> tuple[int, int]:
    selector = selector_of(args)
    if not selector:
        if "point" not in args:
            raise StepFailed(f"{command.name} needs a selector (text, id …) or a point")
        screen = await runner.screen()
        return _point(args["point"], screen.width, screen.height)
    node, screen = await runner.element(selector, run, command.optional)
    if "point" in args:
        b = node.bounds
        return _point(args["point"], screen.width, screen.height, (b.left, b.top, b.right, b.bottom))
    return node.bounds.center


async def _tap_on(runner: FlowRunner, command: FlowCommand, args: dict[str, Any], run: FlowRun) -> None:
    x, y = await _target_point(runner, command, args, run)
    before = _fingerprint(await runner.phone.nodes()) if args.get("retryTapIfNoChange") else None
    for time_index in range(max(1, int(args.get("repeat", 1)))):
        if time_index:
            await runner.sleep(int(args.get("delay", 100)) / 1000)
        await runner.phone.call("tap", {"x": x, "y": y})
    await runner.settle()
    if before is not None and _fingerprint(await runner.phone.nodes()) == before:
        await runner.phone.call("tap", {"x": x, "y": y})  # nothing changed: Maestro taps once more
        await runner.settle()
    if "waitToSettleTimeoutMs" in args:
        await _settle_screen(runner, int(args["waitToSettleTimeoutMs"]), run)


async def _long_press_on(
    runner: FlowRunner, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    x, y = await _target_point(runner, command, args, run)
    await runner.phone.call("long_press", {"x": x, "y": y})
    await runner.settle()


async def _double_tap_on(
    runner: FlowRunner, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    x, y = await _target_point(runner, command, args, run)
    await runner.phone.call("tap", {"x": x, "y": y, "double": True})
    await runner.settle()


async def _input_text(runner: FlowRunner, command: FlowCommand, args: dict[str, Any], run: FlowRun) -> None:
    secret = SECRET_TEXT.fullmatch(str(args["text"]))  # a recorded type_secret: typed by name again
    if secret is not None:
        await runner.phone.call("type_secret", {"name": secret[1]})
    else:
        await runner.phone.call("type_text", {"text": str(args["text"])})
    await runner.settle()


async def _erase_text(runner: FlowRunner, command: FlowCommand, args: dict[str, Any], run: FlowRun) -> None:
    await runner.phone.delete_chars(int(args.get("charactersToErase", ERASE_DEFAULT)))


async def _press_key(runner: FlowRunner, command: FlowCommand, args: dict[str, Any], run: FlowRun) -> None:
    key = maestro_key(str(args["key"]))
    if key is None:
        raise StepFailed(f"unknown key {args['key']!r}")
    await runner.phone.call("press_key", {"key": key})
    await runner.settle()


async def _back(runner: FlowRunner, command: FlowCommand, args: dict[str, Any], run: FlowRun) -> None:
    await runner.phone.call("press_key", {"key": "back"})
    await runner.settle()


async def _hide_keyboard(
    runner: FlowRunner, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    state = await runner.phone.shell("dumpsys input_method")
    if "mInputShown=true" in state:
        await runner.phone.call("press_key", {"key": "back"})
        await runner.settle()


async def _scroll(runner: FlowRunner, command: FlowCommand, args: dict[str, Any], run: FlowRun) -> None:
    await runner.phone.call("swipe", {"direction": "up"})  # the finger goes up: the content scrolls down
    await runner.settle()


_SCROLL_FINGER = {"DOWN": "up", "UP": "down", "LEFT": "right", "RIGHT": "left"}


async def _scroll_until_visible(
    runner: FlowRunner, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    selector = args["element"]
    direction = str(args.get("direction", "DOWN")).upper()
    if direction not in _SCROLL_FINGER:
        raise StepFailed(f"direction must be one of UP, DOWN, LEFT, RIGHT, not {args['direction']!r}")
    limit = int(args.get("timeout", SCROLL_UNTIL_VISIBLE_MS))
    started = runner.now()
    while True:
        screen = await runner.screen()
        if find(selector, screen):
            return
        if runner.now() - started >= limit or runner.now() >= run.deadline:
            raise StepFailed(
                f"Element not found after scrolling {direction.lower()} for {limit} ms: "
                f"{describe(selector)}. "
                f"The screen shows {screen.summary()}"
            )
        await runner.phone.call("swipe", {"direction": _SCROLL_FINGER[direction]})
        await runner.settle()


async def _swipe(runner: FlowRunner, command: FlowCommand, args: dict[str, Any], run: FlowRun) -> None:
    duration = int(args.get("duration", 400))
    if "direction" in args:
        call: dict[str, Any] = {"direction": str(args["direction"]).lower(), "durationMs": duration}
        if "from" in args:
            node, _ = await runner.element(args["from"], run, command.optional)
            b = node.bounds
            x, y = b.center
            dx = {"left": -1, "right": 1}.get(call["direction"], 0) * max(b.width // 2 - 1, 1)
            dy = {"up": -1, "down": 1}.get(call["direction"], 0) * max(b.height // 2 - 1, 1)
            call = {
                "startX": x,
                "startY": y,
                "endX": max(x + dx, 0),
                "endY": max(y + dy, 0),
                "durationMs": duration,
            }
        await runner.phone.call("swipe", call)
    else:
        screen = await runner.screen()
        x1, y1 = _point(args["start"], screen.width, screen.height)
        x2, y2 = _point(args["end"], screen.width, screen.height)
        await runner.phone.call(
            "swipe", {"startX": x1, "startY": y1, "endX": x2, "endY": y2, "durationMs": duration}
        )
    await runner.settle()


async def _assert(
    runner: FlowRunner, selector: dict[str, Any], visible: bool, limit: int, run: FlowRun
) -> None:
    node, screen = await runner.wait_for(selector, visible, limit, run)
    if (node is not None) != visible:
        verb = "is visible" if visible else "is not visible"
        raise StepFailed(
            f"Assertion is false: {describe(selector)} {verb} (waited {limit} ms). "
            f"The screen shows {screen.summary()}"
        )


async def _assert_visible(
    runner: FlowRunner, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    await _assert(runner, selector_of(args), True, int(args.get("timeout", ASSERT_WAIT_MS)), run)


async def _assert_not_visible(
    runner: FlowRunner, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    await _assert(runner, selector_of(args), False, int(args.get("timeout", ASSERT_WAIT_MS)), run)


async def _extended_wait(
    runner: FlowRunner, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    visible = "visible" in args
    selector = args["visible"] if visible else args["notVisible"]
    await _assert(runner, selector, visible, int(args.get("timeout", EXTENDED_WAIT_MS)), run)


async def _settle_screen(runner: FlowRunner, limit: int, run: FlowRun) -> None:
    started = runner.now()
    last = _fingerprint(await runner.phone.nodes())
    while runner.now() - started < limit and runner.now() < run.deadline:
        await runner.sleep(POLL_S)
        now = _fingerprint(await runner.phone.nodes())
        if now == last:
            return
        last = now


async def _wait_for_animation(
    runner: FlowRunner, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    await _settle_screen(runner, int(args.get("timeout", ANIMATION_WAIT_MS)), run)


async def _open_link(runner: FlowRunner, command: FlowCommand, args: dict[str, Any], run: FlowRun) -> None:
    await runner.phone.call("open_url", {"url": str(args["link"])})
    await runner.settle()


async def _take_screenshot(
    runner: FlowRunner, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    try:
        path = output_path(args["path"])  # a ${NAME} path is known only now
    except OutputPathError as exc:
        raise StepFailed(str(exc)) from None
    path = path if path.lower().endswith(".png") else f"{path}.png"
    png = await runner.phone.screenshot()
    run.screenshots.append({"path": path, "data": base64.b64encode(png).decode("ascii")})


async def _copy_text_from(
    runner: FlowRunner, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    node, _ = await runner.element(selector_of(args), run, command.optional)
    text = ("" if node.password else node.text) or node.content_desc
    if not text:
        raise StepFailed(f"the element {describe(selector_of(args))} has no text to copy")
    run.copied = text


async def _paste_text(runner: FlowRunner, command: FlowCommand, args: dict[str, Any], run: FlowRun) -> None:
    if not run.copied:
        raise StepFailed("nothing was copied: pasteText needs a copyTextFrom before it")
    await runner.phone.call("type_text", {"text": run.copied})
    await runner.settle()


async def _run_flow(runner: FlowRunner, command: FlowCommand, args: dict[str, Any], run: FlowRun) -> None:
    if "when" in command.args and not await runner.condition(command.args["when"], run):
        return
    saved = run.env
    run.env = {**saved, **{key: expand(value, saved, run.copied) for key, value in command.env.items()}}
    try:
        await runner.run_inner(command.commands, run, f"runFlow {args.get('file', '')}".rstrip())
    finally:
        run.env = saved


async def _repeat(runner: FlowRunner, command: FlowCommand, args: dict[str, Any], run: FlowRun) -> None:
    times = int(args["times"]) if "times" in args else None
    if times is not None and not 0 <= times <= MAX_REPEAT:  # a ${NAME} known only now
        raise StepFailed(repeat_bound(times))
    for round_index in range(MAX_REPEAT if times is None else times):
        if "while" in command.args and not await runner.condition(command.args["while"], run):
            return
        if runner.now() >= run.deadline:
            raise StepFailed(f"repeat ran out of time after {round_index} rounds")
        await runner.run_inner(command.commands, run, f"repeat (round {round_index + 1})")
    if times is None:  # the while condition still holds: say so rather than pass
        raise StepFailed(
            f"repeat: the while condition still held after {MAX_REPEAT} rounds (the most a repeat runs)"
        )


ACTIONS: dict[str, Action] = {
    "launchApp": _launch_app,
    "stopApp": _stop_app,
    "clearState": _clear_state,
    "tapOn": _tap_on,
    "longPressOn": _long_press_on,
    "doubleTapOn": _double_tap_on,
    "inputText": _input_text,
    "eraseText": _erase_text,
    "pressKey": _press_key,
    "back": _back,
    "hideKeyboard": _hide_keyboard,
    "scroll": _scroll,
    "scrollUntilVisible": _scroll_until_visible,
    "swipe": _swipe,
    "assertVisible": _assert_visible,
    "assertNotVisible": _assert_not_visible,
    "extendedWaitUntil": _extended_wait,
    "waitForAnimationToEnd": _wait_for_animation,
    "openLink": _open_link,
    "takeScreenshot": _take_screenshot,
    "copyTextFrom": _copy_text_from,
    "pasteText": _paste_text,
    "runFlow": _run_flow,
    "repeat": _repeat,
}
