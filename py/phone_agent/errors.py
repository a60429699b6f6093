"""Tool failures as data: a code from one documented list, a message a model can act on, a remedy.

Every tool answers a failure as an MCP result with ``isError: true`` (never a thrown error), on both
channels. ``ToolError`` carries what that result needs; ``ToolError.to_result()`` builds it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class ErrorCode(StrEnum):
    """The one list of failure codes. An agent decides by code and reads ``remedy`` for what to do."""

    INVALID_ARGUMENT = "invalid_argument"
    UNKNOWN_TOOL = "unknown_tool"
    NO_DEVICE = "no_device"
    DEVICE_ERROR = "device_error"
    AGENT_BUSY = "agent_busy"
    NO_TASK_RUNNING = "no_task_running"
    TASK_NOT_FOUND = "task_not_found"
    NO_TASKS = "no_tasks"
    NO_MODEL = "no_model"
    BROWSER_NOT_CONNECTED = "browser_not_connected"
    BROWSER_REPLACED = "browser_replaced"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    NO_SUCH_ELEMENT = "no_such_element"
    STALE_REF = "stale_ref"
    OFF_SCREEN = "off_screen"
    APP_NOT_INSTALLED = "app_not_installed"
    FILE_NOT_FOUND = "file_not_found"
    PERMISSION_DENIED = "permission_denied"
    INSTALL_FAILED = "install_failed"
    UNSUPPORTED = "unsupported"
    INTERNAL = "internal_error"
    ASSERTION_FAILED = "assertion_failed"
    INVALID_FLOW = "invalid_flow"
    FLOW_NOT_FOUND = "flow_not_found"


# What each code means, for the docs and for anyone reading a result by hand.
ERROR_CODE_MEANINGS: dict[ErrorCode, str] = {
    ErrorCode.INVALID_ARGUMENT: "an argument is missing, of the wrong type, out of range or unknown",
    ErrorCode.UNKNOWN_TOOL: "no tool of that name exists",
    ErrorCode.NO_DEVICE: "no phone is connected to the page",
    ErrorCode.DEVICE_ERROR: "the phone did not do what was asked (it answered an error or nothing)",
    ErrorCode.AGENT_BUSY: "an agent task is already running; one runs at a time",
    ErrorCode.NO_TASK_RUNNING: "abort_task was called while no task runs",
    ErrorCode.TASK_NOT_FOUND: "no task has the given id in this page",
    ErrorCode.NO_TASKS: "no task has run yet in this page",
    ErrorCode.NO_MODEL: "no model is configured for the agent",
    ErrorCode.BROWSER_NOT_CONNECTED: "no page is connected to the relay",
    ErrorCode.BROWSER_REPLACED: "the page that held the call was replaced by a newer page",
    ErrorCode.TIMEOUT: "the call did not finish within its time limit",
    ErrorCode.CANCELLED: "the caller cancelled the call",
    ErrorCode.NO_SUCH_ELEMENT: "no element of the screen matches the target",
    ErrorCode.STALE_REF: "the ref came from a screen that has changed since",
    ErrorCode.OFF_SCREEN: "the point or element is outside the screen, or under the soft keyboard",
    ErrorCode.APP_NOT_INSTALLED: "no app with that package name is installed on the phone",
    ErrorCode.FILE_NOT_FOUND: "no file or directory at that path on the phone",
    ErrorCode.PERMISSION_DENIED: "the phone's shell user may not read or write that path",
    ErrorCode.INSTALL_FAILED: "the phone refused to install the APK (Android's INSTALL_FAILED_… reason)",
    ErrorCode.UNSUPPORTED: "this phone connection cannot do that (e.g. it needs scrcpy running)",
    ErrorCode.INTERNAL: "a bug: the tool failed in a way it should not have",
    ErrorCode.ASSERTION_FAILED: "the screen did not show (or still showed) what an assertion expected",
    ErrorCode.INVALID_FLOW: "a flow's YAML cannot be run as written (the message names the line and column)",
    ErrorCode.FLOW_NOT_FOUND: "no saved flow has that name",
}


@dataclass
class ToolError(Exception):
    """A tool failure that becomes an ``isError`` result."""

    code: ErrorCode
    message: str
    remedy: str = ""
    retryable: bool = False
    details: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        Exception.__init__(self, self.message)

    def __str__(self) -> str:
        return self.message

    def to_result(self) -> dict[str, Any]:
        """The MCP CallToolResult (wire form, camelCase) for this failure."""
        structured: dict[str, Any] = {
            "code": str(self.code),
            "message": self.message,
            "remedy": self.remedy,
            "retryable": self.retryable,
        }
        if self.details:
            structured["details"] = self.details
        return {
            "content": [{"type": "text", "text": self.message}],
            "structuredContent": structured,
            "isError": True,
        }


# The exact texts of the specification, in one place.
NO_DEVICE_TEXT = "No phone device connected."
AGENT_BUSY_TEXT = "Agent is already running. Please wait or call abort_task first."
NO_TASK_RUNNING_TEXT = "No task is currently running."
TASK_ABORTED_TEXT = "Task aborted."
BROWSER_NOT_CONNECTED_TEXT = "Browser not connected. Open the phone-agent page first."
NO_MODEL_TEXT = "No model configured: open Settings in the page and choose a model provider."


def no_device() -> ToolError:
    return ToolError(
        ErrorCode.NO_DEVICE,
        NO_DEVICE_TEXT,
        remedy="Connect an Android phone in the phone-agent page (USB, network or the simulated phone), "
        "then call get_device_status to check.",
        retryable=True,
    )


def agent_busy() -> ToolError:
    return ToolError(
        ErrorCode.AGENT_BUSY,
        AGENT_BUSY_TEXT,
        remedy="Wait for the running task to finish (get_latest_task shows it) or call abort_task.",
        retryable=True,
    )


def no_task_running() -> ToolError:
    return ToolError(
        ErrorCode.NO_TASK_RUNNING,
        NO_TASK_RUNNING_TEXT,
        remedy="Nothing to abort. Call get_latest_task to see how the last task ended.",
    )


def _open_page(page_url: str | None) -> str:
    """What follows "Open the phone-agent page first.": where that page is, when the server knows."""
    if not page_url:
        return ""
    return f" The page: {page_url} (phone-agent's page; open the link `phone-agent url` prints in Chrome)."


def browser_not_connected(page_url: str | None = None) -> ToolError:
    """No page on the relay: the specification's text, then the page's URL (``page_url``) after it."""
    return ToolError(
        ErrorCode.BROWSER_NOT_CONNECTED,
        BROWSER_NOT_CONNECTED_TEXT + _open_page(page_url),
        remedy="Open the phone-agent page in Chrome (the link `phone-agent url` prints, with its token) and "
        "wait until its MCP Relay badge is green; it reconnects by itself within 30 s, or reload it.",
        retryable=True,
    )


def timed_out(tool: str, ms: int) -> ToolError:
    return ToolError(
        ErrorCode.TIMEOUT,
        f'Tool "{tool}" timed out after {ms}ms',
        remedy="For run_agent_task pass a larger timeoutMs, or split the task; call abort_task to stop "
        "a task still running.",
        retryable=True,
        details={"tool": tool, "timeoutMs": ms},
    )


def cancelled(tool: str) -> ToolError:
    return ToolError(
        ErrorCode.CANCELLED,
        f'Tool "{tool}" was cancelled.',
        remedy="Call it again if you still need the result.",
        retryable=True,
        details={"tool": tool},
    )


def internal(tool: str, exc: BaseException) -> ToolError:
    return ToolError(
        ErrorCode.INTERNAL,
        f'Tool "{tool}" failed unexpectedly: {type(exc).__name__}: {exc}',
        remedy="This is a bug in phone-agent; retry once, then report it with the page's console log.",
        retryable=True,
        details={"tool": tool},
    )


def invalid_argument(tool: str, field: str, problem: str, remedy: str) -> ToolError:
    """A bad argument the schema alone could not catch (a malformed target, a missing pair)."""
    return ToolError(
        ErrorCode.INVALID_ARGUMENT,
        f'Invalid argument for {tool}: "{field}" {problem}.',
        remedy=remedy,
        details={"tool": tool, "field": field},
    )


def no_such_element(target: str, searched: str = "on the current screen") -> ToolError:
    return ToolError(
        ErrorCode.NO_SUCH_ELEMENT,
        f'No element matches "{target}" {searched}.',
        remedy="Call list_elements to see what the screen holds (its refs and texts), or scroll_to the "
        "element if it may be further down a list.",
        retryable=True,
        details={"target": target},
    )


def stale_ref(ref: str) -> ToolError:
    return ToolError(
        ErrorCode.STALE_REF,
        f"The ref {ref} is from a screen that has changed since list_elements gave it.",
        remedy="Call list_elements again and use a ref from its answer (or address the element by a "
        "locator such as text=…, which does not go stale).",
        retryable=True,
        details={"target": ref},
    )


def unknown_ref(ref: str) -> ToolError:
    return ToolError(
        ErrorCode.STALE_REF,
        f"The ref {ref} is not from the latest list_elements answer.",
        remedy="Call list_elements and use one of the refs it lists.",
        retryable=True,
        details={"target": ref},
    )


def off_screen(what: str, width: int, height: int) -> ToolError:
    return ToolError(
        ErrorCode.OFF_SCREEN,
        f"{what} is outside the {width}x{height} screen.",
        remedy="Use device pixels inside the screen (get_screen_info gives its size), or scroll_to the "
        "element first.",
        details={"width": width, "height": height},
    )


def under_keyboard(target: str, keyboard_top: int) -> ToolError:
    """A target the soft keyboard covers: a touch there would land on the keyboard."""
    return ToolError(
        ErrorCode.OFF_SCREEN,
        f'"{target}" is under the soft keyboard (it covers the screen below y={keyboard_top}).',
        remedy="Call press_key with key back to hide the keyboard (the field keeps its text), then call "
        "the tool again.",
        retryable=True,
        details={"target": target, "keyboardTop": keyboard_top, "hint": "press_key back"},
    )


def app_not_installed(package: str) -> ToolError:
    return ToolError(
        ErrorCode.APP_NOT_INSTALLED,
        f"No app {package!r} is installed on the phone.",
        remedy="Call list_apps for the installed package names.",
        details={"packageName": package},
    )


def file_not_found(path: str, tool: str = "") -> ToolError:
    return ToolError(
        ErrorCode.FILE_NOT_FOUND,
        f"No file or directory {path!r} on the phone.",
        remedy="Check the path (list_files lists a directory; shared storage is /sdcard, a writable "
        "scratch place /data/local/tmp).",
        details={"devicePath": path, **({"tool": tool} if tool else {})},
    )


def permission_denied(path: str, why: str = "") -> ToolError:
    return ToolError(
        ErrorCode.PERMISSION_DENIED,
        f"The phone refused access to {path!r}: permission denied{f' ({why})' if why else ''}.",
        remedy="The shell user can read and write /sdcard and /data/local/tmp; an app's private files "
        "(/data/data/…) and the system's are out of reach without root.",
        details={"devicePath": path},
    )


def install_failed(reason: str, output: str, remedy: str) -> ToolError:
    """``pm install`` answered ``Failure [INSTALL_FAILED_…]``; ``reason`` is that code."""
    return ToolError(
        ErrorCode.INSTALL_FAILED,
        f"The phone refused to install the APK: {output}",
        remedy=remedy,
        details={"reason": reason},
    )


def not_an_apk(why: str) -> ToolError:
    """install_app's bytes are no APK (checked before anything is sent)."""
    return ToolError(
        ErrorCode.INVALID_ARGUMENT,
        f"Invalid argument for install_app: the file is not an APK: {why}.",
        remedy="Send the .apk file itself (a zip with AndroidManifest.xml), e.g. app/build/outputs/apk/debug/"
        "app-debug.apk; an .aab bundle must be turned into an APK first (bundletool).",
        details={"tool": "install_app", "field": "contentBase64"},
    )


def unsupported(what: str, remedy: str) -> ToolError:
    """Something this connection to the phone cannot do (``what`` says what and why)."""
    return ToolError(ErrorCode.UNSUPPORTED, f"{what}.", remedy=remedy, details={"what": what})


def wait_timed_out(target: str, condition: str, ms: int) -> ToolError:
    return ToolError(
        ErrorCode.TIMEOUT,
        f'"{target}" was not {condition} within {ms} ms.',
        remedy="Call wait_for again with a larger timeoutMs, or list_elements to see what the screen "
        "shows instead.",
        retryable=True,
        details={"target": target, "condition": condition, "timeoutMs": ms},
    )


def assertion_failed(target: str, expected: str, screen: str, waited_ms: int) -> ToolError:
    """An assertion tool's failure: what was expected of ``target`` and what the screen showed."""
    return ToolError(
        ErrorCode.ASSERTION_FAILED,
        f'Assertion failed: "{target}" {expected} (waited {waited_ms} ms). The screen shows {screen}.',
        remedy="Check the target against list_elements, or give timeoutMs to wait longer for the screen.",
        retryable=True,
        details={"target": target, "expected": expected, "waitedMs": waited_ms, "screen": screen},
    )


def invalid_flow(message: str, line: int, column: int, source: str = "") -> ToolError:
    """A flow that cannot be run as written; the message names the line and column."""
    details: dict[str, Any] = {"line": line, "column": column}
    if source:
        details["source"] = source
    return ToolError(
        ErrorCode.INVALID_FLOW,
        f"The flow cannot be read: {message}",
        remedy="Fix the flow at that line and column (Maestro's YAML: a header with appId, ---, then one "
        "`- command` a line), then run it again.",
        details=details,
    )


def flow_not_found(name: str, names: list[str]) -> ToolError:
    return ToolError(
        ErrorCode.FLOW_NOT_FOUND,
        f"No saved flow is named {name!r}.",
        remedy="Call list_flows for the saved flows' names"
        + (f" ({', '.join(names[:20])})" if names else " (none is saved yet: save_flow keeps one)")
        + ".",
        details={"name": name},
    )


def tool_not_offered(tool: str, profile: str, offered: tuple[str, ...]) -> ToolError:
    """A tool the catalog has but this server's tool profile (``--tools``) does not offer."""
    return ToolError(
        ErrorCode.UNKNOWN_TOOL,
        f"Unknown tool {tool!r}: this server offers the {profile!r} tools: {', '.join(offered)}.",
        remedy="Call one of the listed tools (tools/list shows them), or start phone-agent with --tools all.",
        details={"tool": tool, "profile": profile},
    )


def no_model() -> ToolError:
    """What run_agent_task answers when no model is configured (the page's agent and the context's)."""
    return ToolError(
        ErrorCode.NO_MODEL,
        NO_MODEL_TEXT,
        remedy="Open the phone-agent page's Settings and choose a model provider, or start "
        "phone-agent with --model-base-url and --model.",
    )


def bad_argument(tool: str, field: str, problem: str, parameters: str) -> ToolError:
    """An argument the tool's schema refuses; ``parameters`` lists them as ``goal: string, ...``."""
    return invalid_argument(
        tool, field, problem, f"Call {tool} again with valid arguments. Its parameters: {parameters}."
    )


def unknown_tool(name: Any, where: str, names: str) -> ToolError:
    """No tool ``name`` (in the profile ``where`` describes); ``names`` lists the tools there are."""
    return ToolError(
        ErrorCode.UNKNOWN_TOOL,
        f"Unknown tool {name!r}{where}. The tools are: {names}.",
        remedy="Call one of the listed tools (tools/list shows their parameters).",
        details={"tool": name if isinstance(name, str) else repr(name)},
    )


def task_not_found(task_id: str) -> ToolError:
    return ToolError(
        ErrorCode.TASK_NOT_FOUND,
        f'No task with taskId "{task_id}" in this page.',
        remedy="Use the taskId that run_agent_task answered, or call get_latest_task. "
        "Tasks live in the page that ran them.",
        details={"taskId": task_id},
    )


def no_tasks() -> ToolError:
    return ToolError(
        ErrorCode.NO_TASKS,
        "No agent task has run in this page yet.",
        remedy="Call run_agent_task with a goal first.",
    )


def cannot_transcode() -> ToolError:
    """take_screenshot asked to scale or re-encode in a page without an image codec."""
    return ToolError(
        ErrorCode.INTERNAL,
        "This page cannot scale or re-encode images.",
        remedy="Call take_screenshot without maxSide and format for the phone's own PNG.",
    )


# take_screenshot's source "live" where no live view exists (a CPython client, an agent outside the page).
NO_LIVE_VIEW_REASON = "there is no live view here (scrcpy runs in the phone-agent page)"


def no_live_frame(reason: str, retryable: bool) -> ToolError:
    """take_screenshot with source "live" while the live view has no fresh scrcpy frame (``reason``
    says why: scrcpy off or not running, no frame yet, the stream stalled); ``retryable`` when scrcpy
    runs and a frame may come."""
    return ToolError(
        ErrorCode.INVALID_ARGUMENT,
        f'take_screenshot cannot answer source "live": {reason}.',
        remedy='Call take_screenshot with source "phone" (the phone\'s own screenshot), or turn on "Live '
        "view through scrcpy\" in the page's Settings and call again once the live view shows the phone.",
        retryable=retryable,
        details={"tool": "take_screenshot", "field": "source", "reason": reason},
    )


def unreadable_frame(channel: str, reason: str) -> ToolError:
    """A frame the page could not read; ``channel`` is ``relay`` or ``farm``."""
    return ToolError(
        ErrorCode.INVALID_ARGUMENT,
        f"The page could not read the {channel} frame: {reason}.",
        remedy="Upgrade phone-agent so that server and page match.",
    )


# -- the relay (server side of Channel A) and phone-agent mcp's front -------------------------------


def page_replaced(tool: str) -> ToolError:
    return ToolError(
        ErrorCode.BROWSER_REPLACED,
        f'Tool "{tool}" was interrupted: a newer phone-agent page connected and replaced the page that '
        "was handling the call.",
        remedy="Keep only one phone-agent page open, then call the tool again. For run_agent_task, call "
        "get_latest_task in the page that is open now to see what ran.",
        retryable=True,
        details={"tool": tool},
    )


def page_disconnected(tool: str, page_url: str | None = None) -> ToolError:
    return ToolError(
        ErrorCode.BROWSER_NOT_CONNECTED,
        f'Browser disconnected before tool "{tool}" answered. Open the phone-agent page first.'
        + _open_page(page_url),
        remedy="Reopen or reload the phone-agent page (it reconnects by itself within 30 s), then call the "
        "tool again. For run_agent_task, call get_latest_task once the page is back to see what ran.",
        retryable=True,
        details={"tool": tool},
    )


def malformed_result(tool: str, problem: str) -> ToolError:
    return ToolError(
        ErrorCode.INTERNAL,
        f'Tool "{tool}" failed unexpectedly: the page answered a malformed result ({problem}).',
        remedy="This is a bug in the phone-agent page; retry once, then report it with the page's "
        "console log.",
        retryable=True,
        details={"tool": tool},
    )


def server_gone(tool: str, reason: str) -> ToolError:
    """phone-agent mcp lost the shared server in the middle of a call."""
    return ToolError(
        ErrorCode.BROWSER_NOT_CONNECTED,
        f'The phone-agent server went away before tool "{tool}" answered ({reason}).',
        remedy="Call the tool again: phone-agent mcp finds or starts the server again. For "
        "run_agent_task, call get_latest_task first to see what ran.",
        retryable=True,
        details={"tool": tool},
    )


def transfer_broken(tool: str, reason: str) -> ToolError:
    """A file streamed between the caller's machine and the page stopped half-way (the page, the server or
    phone-agent mcp went away, or stalled): nothing half-written is kept."""
    return ToolError(
        ErrorCode.BROWSER_NOT_CONNECTED,
        f'The file transfer of tool "{tool}" broke off: {reason}. No partial file was kept.',
        remedy="Check that the phone-agent page is open with the phone connected, then call the tool again.",
        retryable=True,
        details={"tool": tool},
    )


def server_unreachable(tool: str, reason: str) -> ToolError:
    """phone-agent mcp could not reach (or start) the shared server for a call."""
    return ToolError(
        ErrorCode.BROWSER_NOT_CONNECTED,
        f'Tool "{tool}" could not reach the phone-agent server: {reason}',
        remedy="Run `phone-agent serve` in a terminal to see why, or `phone-agent stop` and call again.",
        retryable=True,
        details={"tool": tool},
    )


# -- the phone ------------------------------------------------------------------------------------


class DeviceError(ToolError):
    """The phone failed or did not answer in time; carried to tool results as ``device_error``."""

    def __init__(self, message: str, remedy: str = "", retryable: bool = True) -> None:
        super().__init__(
            ErrorCode.DEVICE_ERROR,
            message,
            remedy
            or "Check the phone's connection and screen (unlocked, no dialog in the way), then try again.",
            retryable,
        )


def screenshot_not_png() -> DeviceError:
    """The phone's screenshot bytes are not a PNG (the tools and the agent both read its size)."""
    return DeviceError("the phone's screenshot is not a PNG image")


def command_exited(command: str, exit_code: int, output: bytes) -> DeviceError:
    """A phone command that ended with a failing exit code; ``output``: what it wrote (stderr first)."""
    detail = output.decode("utf-8", "replace").strip()
    return DeviceError(f"`{command}` exited with {exit_code}: {detail[:300]}")


class PhoneDisconnectedError(DeviceError):
    """The connection to the phone is gone: "No phone device connected." (code ``no_device``), still a
    ``DeviceError`` so the agent's handlers catch it."""

    def __init__(self, reason: str = "") -> None:
        gone = no_device()
        ToolError.__init__(
            self, gone.code, gone.message, gone.remedy, gone.retryable, {"reason": reason} if reason else {}
        )


def unknown_secret(tool: str, name: str, known: list[str]) -> ToolError:
    """type_secret named a secret that neither the page nor its server holds."""
    if known:
        remedy = f"Use one of the known secrets: {', '.join(known)}."
    else:
        remedy = (
            "No secret is set: add one in the page's Settings → Secrets, or start the server with "
            "PHONE_AGENT_SECRET_<NAME>=value in its environment."
        )
    failure = invalid_argument(
        tool, "name", f"is not a known secret ({name!r}); known: {', '.join(known) or 'none'}", remedy
    )
    failure.details["known"] = list(known)
    return failure


def not_confirmed(tool: str, why: str) -> ToolError:
    """The person at the page did not allow a sensitive call (``--confirm always``)."""
    return ToolError(
        ErrorCode.CANCELLED,
        f"Not confirmed: {why}.",
        remedy="The person at the phone-agent page decides on sensitive actions (sending, paying, deleting, "
        "installing, permissions); do not repeat the call unless they ask you to.",
        details={"tool": tool},
    )


def secret_unavailable(tool: str, name: str) -> ToolError:
    """The secret is the server's, and the server did not hand it over (relay down, secret gone)."""
    return ToolError(
        ErrorCode.BROWSER_NOT_CONNECTED,
        f'The secret "{name}" is the server\'s and the server did not hand it over.',
        remedy="Check that the page's MCP relay is connected (the badge is green) and that the server still "
        f"has PHONE_AGENT_SECRET_{name} in its environment, then try again.",
        retryable=True,
        details={"tool": tool, "field": "name"},
    )
