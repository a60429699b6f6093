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
    INTERNAL = "internal_error"


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
    ErrorCode.INTERNAL: "a bug: the tool failed in a way it should not have",
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
BROWSER_NOT_CONNECTED_TEXT = "Browser not connected. Open the WebADB page first."


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


def browser_not_connected() -> ToolError:
    return ToolError(
        ErrorCode.BROWSER_NOT_CONNECTED,
        BROWSER_NOT_CONNECTED_TEXT,
        remedy="Open the phone-agent page in Chrome (the URL phone-agent prints) and wait until its "
        "MCP Relay badge is green; it reconnects by itself within 30 s, or reload it.",
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


def tool_not_offered(tool: str, profile: str, offered: tuple[str, ...]) -> ToolError:
    """A tool the catalog has but this server's tool profile (``--tools``) does not offer."""
    return ToolError(
        ErrorCode.UNKNOWN_TOOL,
        f"Unknown tool {tool!r}: this server offers the {profile!r} tools: {', '.join(offered)}.",
        remedy="Call one of the listed tools (tools/list shows them), or start phone-agent with --tools all.",
        details={"tool": tool, "profile": profile},
    )
