"""The flow commands that reach the phone's system rather than its screen, as Maestro does them on
Android, through the phone's own shell: ``killApp`` (``am kill``), ``setLocation`` and ``travel``
(Android's test location providers: ``cmd location providers …``, with the shell allowed to mock
locations), ``setAirplaneMode``/``toggleAirplaneMode`` (``cmd connectivity airplane-mode``, else the
``airplane_mode_on`` setting and its broadcast), ``addMedia`` (the file pushed into Pictures or Movies and
shown to the media scanner), ``startRecording``/``stopRecording`` (the catalog's screen recording),
``inputRandom…``, ``clearKeychain`` (iOS's keychain; Android has none, as Maestro's Android driver says),
and launchApp's ``arguments`` (extras of the launch intent).

Every value that reaches the shell is checked by its kind and quoted (``device/shell_args``). Pure: the
phone is the runner's ``FlowPhone``.
"""

from __future__ import annotations

import itertools
import math
import random
import re
import string
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..device import shell_args
from ..device.shell_args import ShellValueError, package_name
from .output_paths import OutputPathError, output_path
from .variables import StepFailed

if TYPE_CHECKING:  # the runner's types, for the signatures below; runner.py never imports this module
    from .flow_run import FlowPhone, FlowRun, FlowRunnerBase
    from .model import FlowCommand

TRAVEL_STEPS = 50  # Maestro's: each leg of a travel in 50 location updates
DEFAULT_TRAVEL_SPEED = 4.0  # metres a second, Maestro's default
_EXTRA_KEY = re.compile(r"[A-Za-z0-9_.:-]{1,200}")
_MEDIA_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.,()+-]{0,150}")
_TEST_PROVIDERS = ("gps", "network")
_FIRST = ("Ada", "Alan", "Grace", "Linus", "Zoë", "Chen", "Amara", "Mateo", "Priya", "Olga", "Kenji", "Nia")
_LAST = ("Lovelace", "Turing", "Hopper", "Okafor", "Novak", "Silva", "Tanaka", "Haddad", "Moreau", "Kowalski")
_DOMAINS = ("example.com", "example.org", "example.net")
_random = random.Random()


def _package(value: Any) -> str:
    try:
        return package_name(str(value))
    except ShellValueError as exc:
        raise StepFailed(f"appId {exc.problem}: {exc.remedy}") from None


def _failed(answer: str) -> bool:
    lowered = answer.lower()
    return any(word in lowered for word in ("exception", "unknown command", "error:", "not found", "usage:"))


async def _kill_app(runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun) -> None:
    """Maestro's killApp: ``am kill`` (the system's way to end an app's process, as Android's low-memory
    killer would, so the app restores its state when opened again)."""
    answer = await runner.phone.shell(shell_args.command("am", "kill", _package(args["appId"])))
    if _failed(answer):
        raise StepFailed(f"the phone would not kill {args['appId']}: {answer.strip()}")


async def _clear_keychain(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    """The keychain is iOS's; on Android there is none to clear (Maestro's Android driver does nothing)."""


def _coordinates(latitude: Any, longitude: Any) -> tuple[float, float]:
    try:
        lat, lng = float(str(latitude)), float(str(longitude))
    except ValueError:
        raise StepFailed(f"{latitude!r}, {longitude!r} is not a location (latitude, longitude)") from None
    if not (math.isfinite(lat) and math.isfinite(lng) and -90 <= lat <= 90 and -180 <= lng <= 180):
        raise StepFailed(f"{lat}, {lng} is not on Earth (latitude -90 to 90, longitude -180 to 180)")
    return lat, lng


async def set_location(phone: FlowPhone, lat: float, lng: float, prepared: set[str]) -> None:
    """Android's test providers report ``lat, lng`` (prepared once a run: the shell may mock locations,
    the providers exist and are on)."""
    if not prepared:
        answer = await phone.shell("appops set com.android.shell android:mock_location allow")
        if _failed(answer):
            raise StepFailed(f"the phone would not let the shell mock locations: {answer.strip()}")
        for provider in _TEST_PROVIDERS:
            await phone.shell(f"cmd location providers add-test-provider {provider}")  # may already exist
            answer = await phone.shell(f"cmd location providers set-test-provider-enabled {provider} true")
            if _failed(answer):
                raise StepFailed(
                    "the phone has no test location providers "
                    "(`cmd location providers`, Android 12 and newer): " + answer.strip()
                )
        prepared.add("done")
    for provider in _TEST_PROVIDERS:
        answer = await phone.shell(
            f"cmd location providers set-test-provider-location {provider} --location {lat:.7f},{lng:.7f}"
        )
        if _failed(answer):
            raise StepFailed(f"the phone did not take the location {lat}, {lng}: {answer.strip()}")


def _prepared(run: FlowRun) -> set[str]:
    return run.prepared


async def _set_location(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    lat, lng = _coordinates(args["latitude"], args["longitude"])
    await set_location(runner.phone, lat, lng, _prepared(run))


def _metres(a: tuple[float, float], b: tuple[float, float]) -> float:
    """The great-circle distance between two (latitude, longitude) points."""
    lat1, lng1, lat2, lng2 = map(math.radians, (*a, *b))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lng2 - lng1) / 2) ** 2
    return 2 * 6_371_000 * math.asin(min(1.0, math.sqrt(h)))


async def _travel(runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun) -> None:
    """Maestro's travel: from point to point at ``speed`` m/s, the location moved in 50 steps a leg."""
    points = [_coordinates(*str(point).split(",", 1)) for point in args["points"]]
    speed = float(args.get("speed") or DEFAULT_TRAVEL_SPEED)
    prepared = _prepared(run)
    await set_location(runner.phone, *points[0], prepared)
    for start, end in itertools.pairwise(points):
        pause = _metres(start, end) / speed / TRAVEL_STEPS
        for step in range(1, TRAVEL_STEPS + 1):
            if runner.now() + pause * 1000 >= run.deadline:
                raise StepFailed("travel ran out of the flow's time (timeoutMs): raise it or the speed")
            lat = start[0] + (end[0] - start[0]) * step / TRAVEL_STEPS
            lng = start[1] + (end[1] - start[1]) * step / TRAVEL_STEPS
            await set_location(runner.phone, lat, lng, prepared)
            await runner.sleep(pause)


async def airplane_mode(phone: FlowPhone) -> bool:
    """Whether airplane mode is on (``cmd connectivity airplane-mode``, else the setting)."""
    answer = (await phone.shell("cmd connectivity airplane-mode")).strip()
    if answer in ("enabled", "disabled"):
        return answer == "enabled"
    setting = (await phone.shell("settings get global airplane_mode_on")).strip()
    if setting not in ("0", "1"):
        raise StepFailed(f"the phone did not say whether airplane mode is on: {answer or setting!r}")
    return setting == "1"


async def set_airplane_mode(phone: FlowPhone, enabled: bool) -> None:
    answer = await phone.shell(f"cmd connectivity airplane-mode {'enable' if enabled else 'disable'}")
    if not _failed(answer) and "No shell command" not in answer:
        return
    # Before Android 9: the setting, then the broadcast that makes the radios follow it.
    await phone.shell(f"settings put global airplane_mode_on {1 if enabled else 0}")
    answer = await phone.shell(
        f"am broadcast -a android.intent.action.AIRPLANE_MODE --ez state {'true' if enabled else 'false'}"
    )
    if "Permission Denial" in answer:
        raise StepFailed("the phone would not switch airplane mode (Android before 9 needs root for it)")


async def _set_airplane(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    await set_airplane_mode(runner.phone, str(args["value"]) == "enabled")
    await runner.settle()


async def _toggle_airplane(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    await set_airplane_mode(runner.phone, not await airplane_mode(runner.phone))
    await runner.settle()


async def _add_media(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    """Each file pushed into the shared storage's Pictures (images) or Movies (videos), then shown to the
    media scanner, so galleries and pickers list it."""
    for path, data in command.media:
        name = path.rsplit("/", 1)[-1]
        if not _MEDIA_NAME.fullmatch(name):
            raise StepFailed(
                f"{name!r}: a media file's name may hold letters, digits, spaces and . _ - , ( ) +"
            )
        folder = "Movies" if name.lower().endswith(".mp4") else "Pictures"
        device_path = f"/sdcard/{folder}/{name}"
        await runner.phone.call("push_file", {"devicePath": device_path, "contentBase64": data})
        answer = await runner.phone.shell(
            shell_args.command(
                "am",
                "broadcast",
                "-a",
                "android.intent.action.MEDIA_SCANNER_SCAN_FILE",
                "-d",
                f"file://{device_path}",
            )
        )
        if "Broadcast completed" not in answer:
            raise StepFailed(f"the media scanner was not told of {device_path}: {answer.strip()}")


async def _start_recording(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    if run.recording:
        raise StepFailed(f"a recording ({run.recording}) is already running: stopRecording first")
    try:
        path = output_path(args["path"])  # a ${NAME} path is known only now
    except OutputPathError as exc:
        raise StepFailed(str(exc)) from None
    await runner.phone.call("start_recording", {})
    run.recording = path if path.lower().endswith(".mp4") else f"{path}.mp4"


async def stop_recording(runner: FlowRunnerBase, run: FlowRun) -> None:
    """The running recording's MP4, kept with the run's recordings under its path."""
    answer = await runner.phone.call("stop_recording", {})
    run.recordings.append({"path": run.recording, "data": str(answer.get("contentBase64", ""))})
    run.recording = ""


async def _stop_recording(
    runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
) -> None:
    if run.recording:  # Maestro's stopRecording does nothing when no recording runs
        await stop_recording(runner, run)


def random_text(kind: str, length: int = 8) -> str:
    """What Maestro's inputRandom… types: letters, digits, an email address or a person's name."""
    length = length if length > 0 else 8
    if kind == "number":
        return str(_random.randint(1, 9)) + "".join(_random.choices(string.digits, k=length - 1))
    if kind == "email":
        user = f"{_random.choice(_FIRST)}.{_random.choice(_LAST)}{_random.randint(1, 999)}".lower()
        return user.replace("ë", "e") + "@" + _random.choice(_DOMAINS)
    if kind == "name":
        return f"{_random.choice(_FIRST)} {_random.choice(_LAST)}"
    return "".join(_random.choices(string.ascii_letters, k=length))


def _input_random(
    kind: str,
) -> Callable[[FlowRunnerBase, FlowCommand, dict[str, Any], FlowRun], Awaitable[None]]:
    async def action(
        runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
    ) -> None:
        await runner.phone.call("type_text", {"text": random_text(kind, int(args.get("length", 8)))})
        await runner.settle()

    return action


def _needs_ai(name: str) -> Callable[[FlowRunnerBase, FlowCommand, dict[str, Any], FlowRun], Awaitable[None]]:
    async def action(
        runner: FlowRunnerBase, command: FlowCommand, args: dict[str, Any], run: FlowRun
    ) -> None:
        raise StepFailed(
            f"{name} asks Maestro's cloud AI, which phone-agent does not call (the step is optional unless "
            "the flow says optional: false)"
        )

    return action


async def launch_with_arguments(phone: FlowPhone, package: str, arguments: dict[str, Any]) -> None:
    """Start ``package``'s launcher activity with ``arguments`` as the intent's extras (text, integer,
    decimal or boolean extras, as Maestro types them)."""
    package = _package(package)
    found = await phone.shell(
        shell_args.command(
            "cmd", "package", "resolve-activity", "--brief", "-c", "android.intent.category.LAUNCHER", package
        )
    )
    component = found.strip().splitlines()[-1].strip() if found.strip() else ""
    if "/" not in component:
        raise StepFailed(f"{package} has no launcher activity to start with arguments ({found.strip()!r})")
    words = ["am start -W -n", shell_args.quote(component)]
    for key, value in arguments.items():
        if not _EXTRA_KEY.fullmatch(str(key)):
            raise StepFailed(f"{key!r} is not a launch argument's name (letters, digits, _ . : -)")
        if isinstance(value, bool):
            kind, text = "--ez", "true" if value else "false"
        elif isinstance(value, int):
            kind, text = ("--ei" if -(2**31) <= value < 2**31 else "--el"), str(value)
        elif isinstance(value, float):
            kind, text = "--ef", repr(value)
        else:
            kind, text = "--es", str(value)
        words += [kind, shell_args.quote(str(key)), shell_args.quote(text)]
    answer = await phone.shell(" ".join(words))
    if "Error" in answer or "Exception" in answer:
        raise StepFailed(f"the phone did not start {package}: {answer.strip()}")


DEVICE_ACTIONS: dict[
    str, Callable[[FlowRunnerBase, FlowCommand, dict[str, Any], FlowRun], Awaitable[None]]
] = {
    "killApp": _kill_app,
    "clearKeychain": _clear_keychain,
    "setLocation": _set_location,
    "travel": _travel,
    "setAirplaneMode": _set_airplane,
    "toggleAirplaneMode": _toggle_airplane,
    "addMedia": _add_media,
    "startRecording": _start_recording,
    "stopRecording": _stop_recording,
    "inputRandomText": _input_random("text"),
    "inputRandomNumber": _input_random("number"),
    "inputRandomEmail": _input_random("email"),
    "inputRandomPersonName": _input_random("name"),
    "assertWithAI": _needs_ai("assertWithAI"),
    "assertNoDefectsWithAI": _needs_ai("assertNoDefectsWithAI"),
    "extractTextWithAI": _needs_ai("extractTextWithAI"),
}
