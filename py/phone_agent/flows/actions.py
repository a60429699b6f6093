"""The commands a flow runs, one function each, and ``ACTIONS``, the table the runner dispatches by
(a test pins it to the grammar's commands): taps, typing, keys, scrolls and swipes, assertions, apps,
links, screenshots, the clipboard, and the commands that hold commands (runFlow, repeat, retry) or run
JavaScript (evalScript, runScript, assertTrue). The commands that reach the phone's system — location,
airplane mode, media, recording, random input — are ``device_actions``. Pure.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Awaitable, Callable
from typing import Any

from ..device import shell_args
from ..device.shell_args import ShellValueError, package_name, permission_name
from .device_actions import DEVICE_ACTIONS, launch_with_arguments
from .flow_checks import MAX_REPEAT, MAX_RETRIES, repeat_bound
from .flow_run import (
    ASSERT_WAIT_MS,
    MAX_SETTLE_MS,
    Action,
    FlowPhone,
    FlowRun,
    FlowRunnerBase,
    SkipStep,
    fingerprint,
    point_of,
    selector_of,
    settle_screen,
)
from .keys import maestro_key
from .model import FlowCommand
from .output_paths import OutputPathError, output_path
from .scripts import truthy
from .selectors import describe, find
from .variables import SECRET_TEXT, StepFailed

EXTENDED_WAIT_MS = 10_000
SCROLL_UNTIL_VISIBLE_MS = 20_000  # Maestro's default timeout
ANIMATION_WAIT_MS = 15_000
ERASE_DEFAULT = 50


async def _launch_app(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    """Maestro's launchApp: stop the app (unless ``stopApp: false``), clear its data when asked, set its
    permissions (``permissions``; Maestro allows them all when none are given), then start it — with
    ``arguments`` as the launch intent's extras."""
    package = args["appId"]
    if args.get("stopApp", True):
        await runner.phone.call("stop_app", {"packageName": package})
    if args.get("clearState"):
        await _clear(runner, package)
    await _set_permissions(runner, package, args.get("permissions") or {"all": "allow"})
    if args.get("arguments"):
        await launch_with_arguments(runner.phone, package, args["arguments"])
    else:
        await runner.phone.call("open_app", {"packageName": package})
    await runner.settle()


def checked(check: Callable[[str], str], value: Any, what: str) -> str:
    """A value bound for the phone's shell, of its kind (a package, a permission), else the step fails."""
    try:
        return check(str(value))
    except ShellValueError as exc:
        raise StepFailed(f"{what} {exc.problem}: {exc.remedy}") from None


async def _clear(runner: FlowRunnerBase, package: str) -> None:
    package = checked(package_name, package, "appId")
    answer = await runner.phone.shell(shell_args.command("pm", "clear", package))
    if "Success" not in answer:
        raise StepFailed(f"the phone did not clear {package}'s data: {answer.strip() or 'no answer'}")


async def _set_permissions(runner: FlowRunnerBase, package: str, wanted: dict[str, str]) -> None:
    """launchApp's permissions: ``all`` means every permission the app requests (``dumpsys package``);
    a named one wins over ``all``. allow grants, deny and unset revoke (pm grant / pm revoke)."""
    package = checked(package_name, package, "appId")
    named = {
        name if name == "all" else checked(permission_name, name, "the permission"): state
        for name, state in wanted.items()
    }
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
    explicit = {name for name in named if name != "all"}
    for name, state in states.items():
        verb = "grant" if state == "allow" else "revoke"
        answer = await runner.phone.shell(shell_args.command("pm", verb, package, name))
        failed = "Exception" in answer or "Unknown" in answer
        if failed and name in explicit:  # a permission named in the flow must be set; `all` does its best
            raise StepFailed(f"the phone would not {verb} {name} for {package}: {answer.strip()}")


async def _stop_app(runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun) -> None:
    await runner.phone.call("stop_app", {"packageName": args["appId"]})


async def _clear_state(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    await _clear(runner, args["appId"])


async def _target_point(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> tuple[int, int]:
    selector = selector_of(args)
    if not selector:
        if "point" not in args:
            raise StepFailed(f"{command.name} needs a selector (text, id …) or a point")
        screen = await runner.screen()
        return point_of(args["point"], screen.width, screen.height)
    node, screen = await runner.element(selector, run, command.optional)
    if "point" in args:
        b = node.bounds
        return point_of(args["point"], screen.width, screen.height, (b.left, b.top, b.right, b.bottom))
    return node.bounds.center


async def _tap_on(runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun) -> None:
    x, y = await _target_point(runner, command, args, run)
    watch = args.get("retryTapIfNoChange") or args.get("waitUntilVisible")
    before = fingerprint(await runner.phone.nodes()) if watch else None
    for time_index in range(max(1, int(args.get("repeat", 1)))):
        if time_index:
            await runner.sleep(max(int(args.get("delay", 100)), 0) / 1000)
        await runner.phone.call("tap", {"x": x, "y": y})
    await runner.settle()
    if before is not None and fingerprint(await runner.phone.nodes()) == before:
        if args.get("waitUntilVisible") and selector_of(args):
            # Maestro: nothing changed and the element is gone: wait until it shows, then tap it again
            node, _ = await runner.element(selector_of(args), run, command.optional)
            x, y = node.bounds.center
        await runner.phone.call("tap", {"x": x, "y": y})  # nothing changed: Maestro taps once more
        await runner.settle()
    if "waitToSettleTimeoutMs" in args:
        await settle_screen(runner, min(int(args["waitToSettleTimeoutMs"]), MAX_SETTLE_MS), run)


async def _long_press_on(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    x, y = await _target_point(runner, command, args, run)
    await runner.phone.call("long_press", {"x": x, "y": y})
    await runner.settle()


async def _double_tap_on(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    x, y = await _target_point(runner, command, args, run)
    if int(args.get("delay", 100)) > 100:  # Maestro's delay between the two taps
        for time_index in range(2):
            if time_index:
                await runner.sleep(int(args["delay"]) / 1000)
            await runner.phone.call("tap", {"x": x, "y": y})
    else:
        await runner.phone.call("tap", {"x": x, "y": y, "double": True})
    await runner.settle()


async def _input_text(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    if not str(args["text"]):
        return  # Maestro types nothing for an empty text (an env left empty, say)
    secret = SECRET_TEXT.fullmatch(str(args["text"]))  # a recorded type_secret: typed by name again
    if secret is not None:
        await runner.phone.call("type_secret", {"name": secret[1]})
    else:
        await runner.phone.call("type_text", {"text": str(args["text"])})
    await runner.settle()


async def _erase_text(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    await runner.phone.delete_chars(int(args.get("charactersToErase", ERASE_DEFAULT)))


async def _press_key(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    key = maestro_key(str(args["key"]))
    if key is None:
        raise StepFailed(f"unknown key {args['key']!r}")
    await runner.phone.call("press_key", {"key": key})
    await runner.settle()


async def _back(runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun) -> None:
    await runner.phone.call("press_key", {"key": "back"})
    await runner.settle()


async def _hide_keyboard(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    state = await runner.phone.shell("dumpsys input_method")
    if "mInputShown=true" in state:
        await runner.phone.call("press_key", {"key": "back"})
        await runner.settle()


async def _scroll(runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun) -> None:
    await runner.phone.call("swipe", {"direction": "up"})  # the finger goes up: the content scrolls down
    await runner.settle()


_SCROLL_FINGER = {"DOWN": "up", "UP": "down", "LEFT": "right", "RIGHT": "left"}


def _number(value: Any, what: str) -> int:
    """A Maestro number given as text (``timeout: ${T}``, evaluated): its integer value."""
    try:
        return int(float(str(value).strip()))
    except ValueError:
        raise StepFailed(f"{what} must be a number, not {value!r}") from None


def _visible_enough(node: Any, screen: Any, percentage: int) -> bool:
    """At least ``percentage`` of the node's area is on the screen (scrollUntilVisible's visibility)."""
    b = node.bounds
    if percentage <= 0 or b.width <= 0 or b.height <= 0:
        return True
    width = max(0, min(b.right, screen.width or b.right) - max(b.left, 0))
    height = max(0, min(b.bottom, screen.height or b.bottom) - max(b.top, 0))
    return width * height * 100 >= percentage * b.width * b.height


async def _scroll_until_visible(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    """Scroll (the content toward ``direction``) until the element shows, at least ``visibilityPercentage``
    of it (default 100), within ``timeout``; ``speed`` 0-100 sets how fast each scroll is (Maestro's 40 by
    default); ``centerElement`` brings it to the middle."""
    selector = args["element"]
    direction = str(args.get("direction", "DOWN")).upper()
    limit = _number(args.get("timeout", SCROLL_UNTIL_VISIBLE_MS), "timeout")
    speed = min(max(_number(args.get("speed", 40), "speed"), 0), 100)
    duration = int(1000 * (100 - speed) / 100) + 100
    percentage = int(args.get("visibilityPercentage", 100))
    started = runner.now()
    while True:
        screen = await runner.screen()
        found = [node for node in find(selector, screen) if _visible_enough(node, screen, percentage)]
        if found:
            if args.get("centerElement"):
                await _center(runner, found[0], screen, direction)
            return
        if runner.now() - started >= limit or runner.now() >= run.deadline:
            raise StepFailed(
                f"Element not found after scrolling {direction.lower()} for {limit} ms: "
                f"{describe(selector)}. The screen shows {screen.summary()}"
            )
        await runner.phone.call("swipe", {"direction": _SCROLL_FINGER[direction], "durationMs": duration})
        await runner.settle()


async def _center(runner: FlowRunnerBase, node: Any, screen: Any, direction: str) -> None:
    x, y = node.bounds.center
    cx, cy = screen.width // 2, screen.height // 2
    vertical = direction in ("UP", "DOWN")
    offset = (y - cy) if vertical else (x - cx)
    if abs(offset) < (screen.height if vertical else screen.width) // 10:
        return
    start = (cx, cy + offset // 2) if vertical else (cx + offset // 2, cy)
    end = (cx, cy - offset // 2) if vertical else (cx - offset // 2, cy)
    call = {"startX": start[0], "startY": start[1], "endX": end[0], "endY": end[1], "durationMs": 600}
    await runner.phone.call("swipe", call)
    await runner.settle()


async def _swipe(runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun) -> None:
    duration = _number(args.get("duration", 400), "duration")
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
        x1, y1 = point_of(args["start"], screen.width, screen.height)
        x2, y2 = point_of(args["end"], screen.width, screen.height)
        await runner.phone.call(
            "swipe", {"startX": x1, "startY": y1, "endX": x2, "endY": y2, "durationMs": duration}
        )
    await runner.settle()
    if "waitToSettleTimeoutMs" in args:
        await settle_screen(
            runner, min(_number(args["waitToSettleTimeoutMs"], "waitToSettleTimeoutMs"), MAX_SETTLE_MS), run
        )


async def _assert(
    runner: FlowRunnerBase, selector: dict[str, Any], visible: bool, limit: int, run: FlowRun
) -> None:
    node, screen = await runner.wait_for(selector, visible, limit, run)
    if (node is not None) != visible:
        verb = "is visible" if visible else "is not visible"
        raise StepFailed(
            f"Assertion is false: {describe(selector)} {verb} (waited {limit} ms). "
            f"The screen shows {screen.summary()}"
        )


async def _assert_visible(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    await _assert(runner, selector_of(args), True, int(args.get("timeout", ASSERT_WAIT_MS)), run)


async def _assert_not_visible(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    await _assert(runner, selector_of(args), False, int(args.get("timeout", ASSERT_WAIT_MS)), run)


async def _extended_wait(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    visible = "visible" in args
    selector = args["visible"] if visible else args["notVisible"]
    await _assert(runner, selector, visible, _number(args.get("timeout", EXTENDED_WAIT_MS), "timeout"), run)


async def _wait_for_animation(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    await settle_screen(runner, int(args.get("timeout", ANIMATION_WAIT_MS)), run)


async def _open_link(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    await runner.phone.call("open_url", {"url": str(args["link"])})
    await runner.settle()


async def _take_screenshot(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    try:
        path = output_path(args["path"])  # a ${NAME} path is known only now
    except OutputPathError as exc:
        raise StepFailed(str(exc)) from None
    path = path if path.lower().endswith(".png") else f"{path}.png"
    png = await runner.phone.screenshot()
    run.screenshots.append({"path": path, "data": base64.b64encode(png).decode("ascii")})


async def _copy_text_from(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    node, _ = await runner.element(selector_of(args), run, command.optional)
    text = ("" if node.password else node.text) or node.content_desc
    if not text:
        raise StepFailed(f"the element {describe(selector_of(args))} has no text to copy")
    run.variables.copied = text


async def _paste_text(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    if not run.copied:
        raise StepFailed("nothing was copied: pasteText needs a copyTextFrom before it")
    await runner.phone.call("type_text", {"text": run.copied})
    await runner.settle()


# -- commands that hold commands ------------------------------------------------------------------


async def _scoped(run: FlowRun, env: dict[str, str], command: FlowCommand) -> dict[str, str]:
    """The env inside a runFlow/retry (its own, evaluated, over the outer one); the outer one to restore."""
    saved = run.variables.env
    inner = {
        key: await run.variables.expand(value, command.source, command.line) for key, value in env.items()
    }
    run.variables.env = {**saved, **inner}
    return saved


async def _run_flow(runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun) -> None:
    if not await runner.condition(command.condition, run, command):
        raise SkipStep
    saved = await _scoped(run, command.env, command)
    try:
        where = f"runFlow {args.get('file', '')}".rstrip()
        await runner.run_inner(command.commands, run, where, command.on_start, command.on_complete)
    finally:
        run.variables.env = saved


async def _repeat(runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun) -> None:
    """Maestro's repeat: ``times`` rounds and/or while its condition holds; past MAX_REPEAT rounds with the
    condition still true it stops with an error (a repeat never runs away)."""
    times = _number(args["times"], "times") if "times" in args else None
    if times is not None and not 0 <= times <= MAX_REPEAT:  # a ${NAME} known only now
        raise StepFailed(repeat_bound(times))
    rounds = 0
    while times is None or rounds < times:
        if not await runner.condition(command.condition, run, command):
            break
        if rounds >= MAX_REPEAT:
            raise StepFailed(
                f"repeat: the while condition still held after {MAX_REPEAT} rounds (the most a repeat runs)"
            )
        if runner.now() >= run.deadline:
            raise StepFailed(f"repeat ran out of time after {rounds} rounds")
        await runner.run_inner(command.commands, run, f"repeat (round {rounds + 1})")
        rounds += 1
    if rounds == 0:
        raise SkipStep


async def _retry(runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun) -> None:
    """Maestro's retry: its commands again after a failure, up to ``maxRetries`` more times (at most 3)."""
    retries = min(max(_number(args.get("maxRetries", 1), "maxRetries"), 0), MAX_RETRIES)
    saved = await _scoped(run, command.env, command)
    try:
        for attempt in range(retries + 1):
            try:
                where = f"retry (attempt {attempt + 1} of {retries + 1})"
                await runner.run_inner(command.commands, run, where, command.on_start, command.on_complete)
                return
            except StepFailed:
                if attempt == retries or runner.now() >= run.deadline:
                    raise
    finally:
        run.variables.env = saved


# -- JavaScript ---------------------------------------------------------------------------------


async def _eval_script(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    """evalScript: its ``${…}`` were evaluated when the command's arguments were (Maestro's way)."""


async def _run_script(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    if not await runner.condition(command.condition, run, command):
        raise SkipStep
    env = {
        key: await run.variables.expand(value, command.source, command.line)
        for key, value in command.env.items()
    }
    await run.variables.run(command.script, "script", str(args.get("path") or args["file"]), 1, env)


async def _assert_true(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    value = str(args.get("condition", ""))
    if not truthy(value):
        raise StepFailed(f"Assertion is false: {command.args.get('condition', '')!r} is {value!r}")


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
    "retry": _retry,
    "evalScript": _eval_script,
    "runScript": _run_script,
    "assertTrue": _assert_true,
    **DEVICE_ACTIONS,
}


def flow_runner(
    phone: FlowPhone,
    progress: Callable[[str], None] | None = None,
    sleep: Callable[[float], Awaitable[None]] | None = None,
    monotonic_ms: Callable[[], float] | None = None,
    screen_size: Callable[[], Awaitable[tuple[int, int]]] | None = None,
) -> FlowRunnerBase:
    """A runner with every command of the table."""
    extra: dict[str, Any] = {"screen_size": screen_size}
    if sleep is not None:
        extra["sleep"] = sleep
    if monotonic_ms is not None:
        extra["monotonic_ms"] = monotonic_ms
    return FlowRunnerBase(phone, ACTIONS, progress, **extra)
