"""McpServiceContext: what the six tools do, shared by both channels.

The relay client (Channel A) and the WebMCP service (Channel B) both call ``dispatch``; nothing else
decides what a tool answers. The phone and the agent are plugged in behind two small interfaces
(``Device``, ``AgentRunner``) so this module stays pure and is tested in CPython.
"""

from __future__ import annotations

import secrets
import time
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from . import errors
from .device import Device
from .errors import ErrorCode, ToolError
from .results import format_task_markdown, json_result, png_result, text_result
from .tasks import AgentTask, TaskStatus
from .tools import DEFAULT_TASK_TIMEOUT_MS, Channel, get_tool, validate_arguments

ProgressSink = Callable[[str], None]
T = TypeVar("T")


@dataclass(frozen=True)
class CallRecord:
    """One finished tool call, as the page's activity log shows it."""

    channel: Channel
    tool: str
    result: dict[str, Any]
    duration_ms: int


CallListener = Callable[[CallRecord], None]


class AgentRunner(Protocol):
    """Runs one agent task to its end (finished, failed or aborted) and returns it."""

    async def run(
        self, task: AgentTask, device: Device, timeout_ms: int, progress: ProgressSink | None
    ) -> AgentTask: ...

    def abort(self) -> None: ...


def _now_ms() -> int:
    return int(time.time() * 1000)


class McpServiceContext:
    """The seed's McpServiceContext: tasks, the device, the agent, and the one dispatch."""

    def __init__(self, clock_ms: Callable[[], int] = _now_ms) -> None:
        self.device: Device | None = None
        self.agent: AgentRunner | None = None
        self._tasks: dict[str, AgentTask] = {}
        self._running: AgentTask | None = None
        self._clock_ms = clock_ms
        self._listeners: list[CallListener] = []

    def add_call_listener(self, listener: CallListener) -> None:
        """Be told of every finished call, from either channel (a listener's failure is ignored)."""
        self._listeners.append(listener)

    # -- the seed's interface -------------------------------------------------------------------

    def is_connected(self) -> bool:
        return self.device is not None

    def is_running(self) -> bool:
        return self._running is not None

    def get_task(self, task_id: str) -> AgentTask | None:
        return self._tasks.get(task_id)

    def get_all_tasks(self) -> list[AgentTask]:
        return list(self._tasks.values())

    def remember_task(self, task: AgentTask) -> None:
        """Keep a task (one restored from storage, or one just created) in this page's history."""
        self._tasks[task.id] = task

    async def device_info(self) -> dict[str, Any]:
        if self.device is None:
            return {"connected": False}
        try:
            info = await self._on_device(lambda device: device.info())
        except ToolError as exc:
            if exc.code is ErrorCode.NO_DEVICE:
                return {"connected": False}
            raise
        return {"connected": True, **info}

    async def screenshot(self) -> bytes:
        return await self._on_device(lambda device: device.screenshot_png())

    async def _on_device(self, call: Callable[[Device], Awaitable[T]]) -> T:
        """Run ``call`` on the phone; if the phone goes away meanwhile, the answer is "no phone"."""
        device = self.device
        if device is None:
            raise errors.no_device()
        try:
            return await call(device)
        except Exception:
            if self.device is not device:
                raise errors.no_device() from None
            raise

    def abort(self) -> None:
        if self._running is None or self.agent is None:
            raise errors.no_task_running()
        self.agent.abort()

    async def run_agent(self, goal: str, timeout_ms: int, progress: ProgressSink | None = None) -> AgentTask:
        if self.device is None:
            raise errors.no_device()
        if self._running is not None:
            raise errors.agent_busy()
        if self.agent is None:
            raise ToolError(
                ErrorCode.NO_MODEL,
                "No model configured: open Settings in the page and choose a model provider.",
                remedy="Open the phone-agent page's Settings and choose a model provider, or start "
                "phone-agent with --model-base-url and --model.",
            )
        task = AgentTask(id=self._new_task_id(), goal=goal, created_at=self._clock_ms())
        self.remember_task(task)
        self._running = task
        try:
            return await self.agent.run(task, self.device, timeout_ms, progress)
        except ToolError:
            if task.status is TaskStatus.IDLE:  # refused before it began (e.g. no model): not a task
                self._tasks.pop(task.id, None)
            raise
        finally:
            self._running = None

    # -- the one dispatch -----------------------------------------------------------------------

    async def dispatch(
        self, tool_name: Any, args: Any, channel: Channel, progress: ProgressSink | None = None
    ) -> dict[str, Any]:
        """Run one tool call and answer its MCP result; failures are ``isError`` results, never raised.

        Cancellation (``asyncio.CancelledError``) is the one thing that propagates: the channel that
        cancelled decides what to answer.
        """
        name = tool_name if isinstance(tool_name, str) else repr(tool_name)
        started = self._clock_ms()
        try:
            tool = get_tool(tool_name)
            clean = validate_arguments(tool, args)
            result = await self._call(tool.name, clean, channel, progress)
        except ToolError as exc:
            result = exc.to_result()
        except Exception as exc:  # a bug must still reach the caller as a result
            result = errors.internal(name, exc).to_result()
        record = CallRecord(channel, name, result, self._clock_ms() - started)
        for listener in self._listeners:
            try:
                listener(record)
            except Exception:  # the activity log must never break a tool call; say why it failed
                traceback.print_exc()
        return result

    async def _call(
        self, name: str, args: dict[str, Any], channel: Channel, progress: ProgressSink | None
    ) -> dict[str, Any]:
        if name == "get_device_status":
            return json_result(await self.device_info())
        if name == "take_screenshot":
            return png_result(await self.screenshot())
        if name == "abort_task":
            self.abort()
            return text_result(errors.TASK_ABORTED_TEXT)
        if name == "get_task_result":
            task = self.get_task(args["taskId"])
            if task is None:
                raise ToolError(
                    ErrorCode.TASK_NOT_FOUND,
                    f'No task with taskId "{args["taskId"]}" in this page.',
                    remedy="Use the taskId that run_agent_task answered, or call get_latest_task. "
                    "Tasks live in the page that ran them.",
                    details={"taskId": args["taskId"]},
                )
            return json_result(task.to_json(include_steps=args["includeSteps"]))
        if name == "get_latest_task":
            tasks = self.get_all_tasks()
            if not tasks:
                raise ToolError(
                    ErrorCode.NO_TASKS,
                    "No agent task has run in this page yet.",
                    remedy="Call run_agent_task with a goal first.",
                )
            return json_result(tasks[-1].to_json(include_steps=True))
        if name == "run_agent_task":
            timeout_ms = int(args.get("timeoutMs", DEFAULT_TASK_TIMEOUT_MS[channel]))
            task = await self.run_agent(args["goal"], timeout_ms, progress)
            if channel is Channel.RELAY:
                result = text_result(format_task_markdown(task))
            else:
                result = json_result(task.summary_json())
            # A task that ended (even failed or aborted) is an answer, not a tool failure: the report
            # and its status say how it went.
            return result
        raise AssertionError(f"tool {name} is in the catalog but not dispatched")  # pragma: no cover

    def _new_task_id(self) -> str:
        return f"task-{self._clock_ms():x}-{secrets.token_hex(3)}"
