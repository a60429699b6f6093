"""The tool catalog: the one source of tool names, descriptions, schemas, annotations and timeouts.

``TOOLS`` is the specification's six (declared here, with how each runs on the page's service) and the
phone's device tools (``device_tools``). The page registers its WebMCP tools from it, the MCP server
lists its tools from it, the relay takes its timeouts from it, the agent takes its device actions from
it, and the docs' tool reference is generated from it. ``validate_arguments`` checks a call against the
schema here, because Chrome does not validate WebMCP input and the relay must not trust what arrives.
"""

from __future__ import annotations

import asyncio
from enum import StrEnum
from typing import Any

from .. import errors
from ..tasks import (
    AGENT_MODES,
    DEFAULT_AGENT_MODE,
    DEFAULT_CONFIRM_TIMEOUT_MS,
    DEFAULT_TAKEOVER_TIMEOUT_MS,
    AgentMode,
    TaskOptions,
    TaskStatus,
)
from .device_tools import DEVICE_TOOLS
from .flow_keeping import FLOW_TOOLS
from .groups import GROUPS_TOOL, listed_names
from .results import action_result, format_task_markdown, json_result, png_result, text_result
from .screen_source import live_look, png_size
from .secure import SECURE_TEXT, screen_is_secure
from .spec import (
    BOOLEAN,
    INTEGER,
    INTEGER_OR_NULL,
    MCP_CHANNELS,
    STRING,
    STRING_OR_NULL,
    CallEnv,
    Channel,
    TaskService,
    ToolSpec,
    object_schema,
    result_schema,
)
from .targets import SETTLE_ARGUMENT

__all__ = [
    "DEFAULT_TASK_TIMEOUT_MS",
    "SPEC_TOOL_NAMES",
    "TOOLS",
    "TOOLS_BY_NAME",
    "TOOL_NAMES",
    "ToolProfile",
    "get_tool",
    "listed_tools",
    "tools_for_profile",
]

# run_agent_task's default time budget per channel (the specification's numbers).
DEFAULT_TASK_TIMEOUT_MS = {Channel.RELAY: 1_200_000, Channel.FARM: 1_200_000, Channel.WEBMCP: 120_000}
# The relay waits this much longer than the task's own budget before it gives up on the page.
RELAY_TASK_GRACE_MS = 5_000
MIN_TASK_TIMEOUT_MS = 1_000
MAX_TASK_TIMEOUT_MS = 24 * 3_600_000

_TASK_STATUS = {"type": "string", "enum": [str(status) for status in TaskStatus]}
TASK_SUMMARY_SCHEMA = result_schema(
    {
        "taskId": STRING,
        "status": _TASK_STATUS,
        "conclusion": STRING_OR_NULL,
        "stepsCompleted": INTEGER,
        "totalSteps": INTEGER,
        "durationMs": INTEGER_OR_NULL,
        "error": STRING_OR_NULL,
        # Written only when the page's agent could look at its scrcpy live view (screen_source).
        "screenSource": {
            "type": "string",
            "description": 'Where the agent\'s looks came from, with counts: "scrcpy frame (N looks)" '
            '(the live view\'s latest frame) and/or "screencap (N looks: why not the live view)" (the '
            "phone's own screenshot), e.g. \"scrcpy frame (4 looks), screencap (1 look: scrcpy is not "
            'running)". Absent when the task took no look or its agent had no live view.',
        },
    },
    ["taskId", "status"],
)
TASK_SCHEMA = result_schema(
    {
        **TASK_SUMMARY_SCHEMA["properties"],
        "goal": STRING,
        "createdAt": INTEGER_OR_NULL,
        "startedAt": INTEGER_OR_NULL,
        "finishedAt": INTEGER_OR_NULL,
        "steps": {"type": "array", "items": {"type": "object"}},
    },
    ["taskId", "goal", "status"],
)
# take_screenshot's sources: the phone's own screenshot (screencap, the default) or the live view's
# latest scrcpy frame (screen_source.live_look).
PHONE_SOURCE = "phone"
LIVE_SOURCE = "live"
SCREENSHOT_SOURCES = (PHONE_SOURCE, LIVE_SOURCE)
SCREENSHOT_SCHEMA = result_schema(
    {
        "width": INTEGER,
        "height": INTEGER,
        "format": {"type": "string", "enum": ["png", "jpeg"]},
        "deviceWidth": INTEGER,
        "deviceHeight": INTEGER,
        "scaleX": {"type": "number"},
        "scaleY": {"type": "number"},
        "source": {"type": "string", "enum": list(SCREENSHOT_SOURCES)},
        "settledMs": INTEGER,
        "secure": BOOLEAN,
    },
    ["width", "height", "format", "deviceWidth", "deviceHeight"],
)
DEVICE_STATUS_SCHEMA = result_schema(
    {
        "connected": BOOLEAN,
        "model": STRING,
        "brand": STRING,
        "release": STRING,
        "sdk": STRING,
        "manufacturer": STRING,
        "serial": STRING,
        "screenWidth": INTEGER,
        "screenHeight": INTEGER,
        "transport": STRING,
    },
    ["connected"],
)


def _mode_words(mode: AgentMode) -> str:
    steps = f"; {mode.steps}" if mode.steps else ""
    return f'"{mode.name}" ({mode.title}: {mode.summary}{steps})'


# run_agent_task's ``mode``, written from the table of the agent's ways.
_MODE_DESCRIPTION = (
    f"The agent's way: {' or '.join(_mode_words(mode) for mode in AGENT_MODES.values())}. "
    f"Default: the page's Setting ({DEFAULT_AGENT_MODE})."
)


def _service(env: CallEnv) -> TaskService:
    if env.service is None:  # pragma: no cover - the six are called through the page's service only
        raise errors.internal("service", RuntimeError("no service for this call"))
    return env.service


async def run_agent_task(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    channel = env.channel if env.channel in DEFAULT_TASK_TIMEOUT_MS else Channel.WEBMCP
    timeout_ms = int(args.get("timeoutMs", DEFAULT_TASK_TIMEOUT_MS[channel]))
    options = TaskOptions(
        mode=args.get("mode"),
        takeover_timeout_ms=int(args.get("takeoverTimeoutMs", DEFAULT_TAKEOVER_TIMEOUT_MS)),
        confirm_timeout_ms=int(args.get("confirmTimeoutMs", DEFAULT_CONFIRM_TIMEOUT_MS)),
    )
    task = await _service(env).run_agent(args["goal"], timeout_ms, env.progress, options)
    # A task that ended (even failed or aborted) is an answer, not a tool failure: the report and its
    # status say how it went. Channel A reads the Markdown report; Channel B the JSON.
    if env.channel in MCP_CHANNELS:
        return {**text_result(format_task_markdown(task)), "structuredContent": task.summary_json()}
    return json_result(task.summary_json())


async def abort_task(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    task_id = _service(env).abort()
    structured: dict[str, Any] = {"aborted": True}
    if task_id:
        structured["taskId"] = task_id
    return {**text_result(errors.TASK_ABORTED_TEXT), "structuredContent": structured}


async def get_task_result(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    task = _service(env).get_task(args["taskId"])
    if task is None:
        raise errors.task_not_found(args["taskId"])
    return json_result(task.to_json(include_steps=args["includeSteps"]))


async def get_latest_task(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    tasks = _service(env).get_all_tasks()
    if not tasks:
        raise errors.no_tasks()
    return json_result(tasks[-1].to_json(include_steps=True))


async def take_screenshot(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:

    phone = env.session()
    args = {**args, "settledMs": await phone.settle(args.get("settle", True))}
    if args.get("source", PHONE_SOURCE) == LIVE_SOURCE:
        # The live view's latest scrcpy frame (at the stream's size), or why there is none.
        look = await live_look(phone.live_screen)
        return await _screenshot_answer(
            phone, look.png, png_size(look.png), (look.device_width, look.device_height), args, LIVE_SOURCE
        )
    # Beside the capture, whether the window in front is secure (FLAG_SECURE: captured black).
    png, secure = await asyncio.gather(phone.device.screenshot_png(), screen_is_secure(phone.device))
    try:
        size = png_size(png)
    except ValueError:
        if args.get("maxSide") is None and args.get("format", "png") == "png":
            return png_result(png)  # the phone's own bytes, as the specification answers
        raise errors.screenshot_not_png() from None
    answer = await _screenshot_answer(phone, png, size, size, args, PHONE_SOURCE)
    if secure:  # said, not a silent black image
        answer["structuredContent"]["secure"] = True
        answer["content"].append({"type": "text", "text": SECURE_TEXT})
    return answer


async def _screenshot_answer(
    phone: Any,
    png: bytes,
    size: tuple[int, int],
    device_size: tuple[int, int],
    args: dict[str, Any],
    source: str,
) -> dict[str, Any]:
    """``png`` (``size`` pixels, covering a ``device_size`` screen) as take_screenshot answers it: as
    it is when it is the device's size and no scaling or JPEG is asked, else scaled to ``maxSide`` in
    the asked format with a note on mapping image pixels to device pixels."""
    wanted = args.get("format", "png")
    max_side = args.get("maxSide")
    width, height = size
    device_w, device_h = device_size
    scale = 1.0 if max_side is None else min(1.0, max_side / max(width, height))
    if scale >= 1.0 and wanted == "png" and size == device_size:
        structured = {
            "width": width,
            "height": height,
            "format": "png",
            "deviceWidth": width,
            "deviceHeight": height,
            "scaleX": 1.0,
            "scaleY": 1.0,
            "source": source,
            "settledMs": args.get("settledMs", 0),
        }
        return {**png_result(png), "structuredContent": structured}
    if scale >= 1.0 and wanted == "png":  # a live frame at the stream's size: as it is
        image, image_w, image_h, mime = png, width, height, "image/png"
    else:
        if phone.image_codec is None:
            raise errors.cannot_transcode()
        image_w, image_h = max(1, round(width * scale)), max(1, round(height * scale))
        mime = "image/jpeg" if wanted == "jpeg" else "image/png"
        image = await phone.image_codec.scale(png, image_w, image_h, mime, 0.85)
    scale_x, scale_y = device_w / image_w, device_h / image_h
    structured = {
        "width": image_w,
        "height": image_h,
        "format": wanted,
        "deviceWidth": device_w,
        "deviceHeight": device_h,
        "scaleX": round(scale_x, 6),
        "scaleY": round(scale_y, 6),
        "source": source,
        "settledMs": args.get("settledMs", 0),
    }
    note = (
        f"The image is {image_w}x{image_h} pixels of a {device_w}x{device_h} screen. Device pixels (what "
        f"tap, long_press and swipe take) = image pixels x {scale_x:.4f} horizontally and x "
        f"{scale_y:.4f} vertically; e.g. image (100, 200) is device ({round(100 * scale_x)}, "
        f"{round(200 * scale_y)})."
    )
    if source == LIVE_SOURCE:
        note += " It is the live view's latest scrcpy frame, not the phone's own screenshot."
    import base64

    result = action_result(note, structured)
    result["content"].insert(
        0, {"type": "image", "data": base64.b64encode(image).decode("ascii"), "mimeType": mime}
    )
    return result


async def get_device_status(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    return json_result(await _service(env).device_info())


SPEC_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        name="run_agent_task",
        title="Run a phone agent task",
        description=(
            "Run an AI agent automation task on the connected Android phone. The agent plans the goal "
            "into steps, then carries each out by looking at the screen and tapping, swiping and typing "
            "(Plan-and-Resolve). Blocks until the task ends and answers a report of every step. One task "
            "runs at a time; call abort_task to stop it early."
        ),
        input_schema=object_schema(
            {
                "goal": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 4000,
                    "description": "The task in natural language, e.g. "
                    '"Open Messages and send Zhang San: see you tomorrow".',
                },
                "timeoutMs": {
                    "type": "number",
                    "minimum": MIN_TASK_TIMEOUT_MS,
                    "maximum": MAX_TASK_TIMEOUT_MS,
                    "description": "Longest the task may run, in ms. Default 1200000 (20 min) through "
                    "phone-agent mcp, 120000 (2 min) through WebMCP.",
                },
                "mode": {
                    "type": "string",
                    "enum": list(AGENT_MODES),
                    "description": _MODE_DESCRIPTION,
                },
                "takeoverTimeoutMs": {
                    "type": "number",
                    "minimum": 1_000,
                    "maximum": MAX_TASK_TIMEOUT_MS,
                    "description": "When the agent hands the phone to the person (a login, a captcha), how "
                    "long it waits for Done or Cancel in the page before the task ends aborted, in ms. "
                    "Default 300000 (5 min).",
                },
                "confirmTimeoutMs": {
                    "type": "number",
                    "minimum": 1_000,
                    "maximum": MAX_TASK_TIMEOUT_MS,
                    "description": "How long the page waits for the person to allow a sensitive action "
                    '(sending, paying, deleting, installing, permissions) before the step fails "Not '
                    'confirmed", in ms. Default 120000 (2 min).',
                },
            },
            required=["goal"],
        ),
        read_only=False,
        consequential=True,
        relay_timeout_ms=DEFAULT_TASK_TIMEOUT_MS[Channel.RELAY] + RELAY_TASK_GRACE_MS,
        timeout_arg="timeoutMs",
        timeout_grace_ms=RELAY_TASK_GRACE_MS,
        output_schema=TASK_SUMMARY_SCHEMA,
        untrusted_content=True,
        run=run_agent_task,
    ),
    ToolSpec(
        name="abort_task",
        title="Abort the running task",
        description="Abort the agent task that is running now. Its finished steps are kept and it is "
        "marked aborted. Answers an error when no task is running.",
        input_schema=object_schema({}),
        read_only=False,
        consequential=False,
        relay_timeout_ms=10_000,
        output_schema=result_schema({"aborted": BOOLEAN, "taskId": STRING}, ["aborted"]),
        run=abort_task,
    ),
    ToolSpec(
        name="get_task_result",
        title="Get a task's result",
        description="The detailed result of one agent task by its taskId (from run_agent_task), as JSON: "
        "goal, status, conclusion, error, duration and, unless includeSteps is false, every step.",
        input_schema=object_schema(
            {
                "taskId": {
                    "type": "string",
                    "minLength": 1,
                    "maxLength": 200,
                    "description": "The taskId run_agent_task answered.",
                },
                "includeSteps": {
                    "type": "boolean",
                    "default": True,
                    "description": "Include the per-step records (default true).",
                },
            },
            required=["taskId"],
        ),
        read_only=True,
        consequential=False,
        relay_timeout_ms=10_000,
        output_schema=TASK_SCHEMA,
        untrusted_content=True,
        run=get_task_result,
    ),
    ToolSpec(
        name="get_latest_task",
        title="Get the latest task",
        description="The full result, steps included, of the most recent agent task in this page, in "
        "the same JSON as get_task_result.",
        input_schema=object_schema({}),
        read_only=True,
        consequential=False,
        relay_timeout_ms=10_000,
        output_schema=TASK_SCHEMA,
        untrusted_content=True,
        run=get_latest_task,
    ),
    ToolSpec(
        name="take_screenshot",
        title="Take a screenshot",
        description="A screenshot of the connected phone's screen, as a PNG image at the screen's own "
        "size; maxSide scales it down (e.g. 1024) and format=jpeg makes it smaller, and the answer then "
        "says how to map image pixels to device pixels (which tap and swipe take). source=live answers "
        "the page's scrcpy live view's latest frame instead of asking the phone. A secure screen "
        "(FLAG_SECURE: the phone captures it black) answers secure: true and says so.",
        input_schema=object_schema(
            {
                "maxSide": {
                    "type": "integer",
                    "minimum": 64,
                    "maximum": 8192,
                    "description": "Scale the image so its longer side is at most this many pixels.",
                },
                "format": {"type": "string", "enum": ["png", "jpeg"], "description": "Default png."},
                "source": {
                    "type": "string",
                    "enum": list(SCREENSHOT_SOURCES),
                    "description": 'Default "phone": the phone\'s own screenshot (screencap). "live": the '
                    "page's live view's latest scrcpy frame (at the stream's size, fast), answered only "
                    "while scrcpy runs and its last frame is fresh; otherwise an error says why.",
                },
                "settle": SETTLE_ARGUMENT,
            }
        ),
        read_only=True,
        consequential=False,
        relay_timeout_ms=30_000,
        output_schema=SCREENSHOT_SCHEMA,
        untrusted_content=True,
        run=take_screenshot,
    ),
    ToolSpec(
        name="get_device_status",
        title="Get device status",
        description="Whether a phone is connected and, if so, its model, brand, Android release, SDK "
        'level, serial and screen size, as JSON. Answers {"connected": false} when none is.',
        input_schema=object_schema({}),
        read_only=True,
        consequential=False,
        relay_timeout_ms=15_000,
        output_schema=DEVICE_STATUS_SCHEMA,
        run=get_device_status,
    ),
)

TOOLS: tuple[ToolSpec, ...] = SPEC_TOOLS + DEVICE_TOOLS + FLOW_TOOLS
TOOLS_BY_NAME: dict[str, ToolSpec] = {tool.name: tool for tool in TOOLS}
TOOL_NAMES: tuple[str, ...] = tuple(tool.name for tool in TOOLS)
# The specification's six tools, in its order.
SPEC_TOOL_NAMES: tuple[str, ...] = tuple(tool.name for tool in SPEC_TOOLS)
# The device actions the page's agent may call (the same entries as the tools).
AGENT_ACTION_TOOLS: tuple[ToolSpec, ...] = tuple(tool for tool in DEVICE_TOOLS if tool.agent_action)


class ToolProfile(StrEnum):
    """Which tools a server offers (``--tools``): the core tools listed and the rest by group (compact,
    the default), every tool listed, the specification's six, or read-only ones."""

    COMPACT = "compact"
    ALL = "all"
    AGENT = "agent"
    READ_ONLY = "read-only"


DEFAULT_TOOL_PROFILE = ToolProfile.COMPACT


def tools_for_profile(profile: str | ToolProfile = DEFAULT_TOOL_PROFILE) -> tuple[ToolSpec, ...]:
    """The catalog's tools a profile offers (callable), in catalog order; ValueError for an unknown
    profile. Compact offers every tool and tool_groups, but lists fewer (``listed_tools``)."""
    chosen = ToolProfile(profile)
    if chosen is ToolProfile.AGENT:
        return SPEC_TOOLS
    if chosen is ToolProfile.READ_ONLY:
        return tuple(tool for tool in TOOLS if tool.read_only)
    if chosen is ToolProfile.COMPACT:
        return (*TOOLS, GROUPS_TOOL)
    return TOOLS


def listed_tools(
    profile: str | ToolProfile = DEFAULT_TOOL_PROFILE, enabled: frozenset[str] = frozenset()
) -> tuple[ToolSpec, ...]:
    """The tools a profile lists with these groups enabled: under compact, the core group's, the
    enabled groups' and tool_groups; under the others, every tool they offer."""
    offered = tools_for_profile(profile)
    if ToolProfile(profile) is not ToolProfile.COMPACT:
        return offered
    shown = listed_names(enabled)
    return tuple(tool for tool in offered if tool.name in shown)


def get_tool(name: Any, profile: str | ToolProfile = DEFAULT_TOOL_PROFILE) -> ToolSpec:
    """The spec of the tool ``name`` within ``profile``, or a ToolError naming the tools it offers."""
    offered = tools_for_profile(profile)
    if isinstance(name, str):
        for tool in offered:
            if tool.name == name:
                return tool
    names = ", ".join(tool.name for tool in offered)
    where = (
        ""
        if ToolProfile(profile) in (ToolProfile.ALL, ToolProfile.COMPACT)
        else f" (tool profile {ToolProfile(profile)})"
    )
    raise errors.unknown_tool(name, where, names)
