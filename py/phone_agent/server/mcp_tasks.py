"""Agent tasks as MCP tasks: the Tasks extension (``io.modelcontextprotocol/tasks``) of MCP 2026-07-28.

A client that declares the extension in a request's ``_meta`` client capabilities gets, for a tool of
``TASK_TOOLS`` (``run_agent_task``), a task handle at once (``resultType: "task"``) instead of a call that
answers when the agent ends. ``tasks/get`` reports the task: ``working`` with the seed's latest
progress text as ``statusMessage`` (all of them, in order, in ``_meta``), then ``completed`` with the
tool's result — the seed's report — or ``cancelled``. ``tasks/cancel`` aborts the agent the way
``abort_task`` does (the tool's canceller in ``TASK_TOOLS``, called through the same channel), and the
task ends ``cancelled``. When the agent needs the person (a take over, a confirmation), the task is
``input_required`` with the question in ``inputRequests`` (a form-mode ``elicitation/create``), answered
by ``tasks/update`` with ``inputResponses``; whoever answers first wins (the person at the page, the
task view, the caller): the page's answer withdraws the question and the task is ``working`` again, a
late response is ignored. A client without the extension gets today's call; one that asks ``tasks/*``
without declaring it is answered -32021 (Missing Required Client Capability), an unknown task -32602.

Tasks live in the memory of the process that made them (the server for ``/mcp``, the front for stdio)
for ``TASK_TTL_MS`` after they end; the pure parts (the store, the wire shapes) take a clock for tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import mcp.types as types
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from .mcp_ask import ask_with

log = logging.getLogger("phone_agent.mcp_tasks")

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
CLIENT_CAPABILITIES_META_KEY = "io.modelcontextprotocol/clientCapabilities"
MISSING_CLIENT_CAPABILITY = -32021
# The tools that become a task for a client that declared the extension, and the tool that cancels one.
TASK_TOOLS: Mapping[str, str] = {"run_agent_task": "abort_task"}
TASK_TTL_MS = 60 * 60 * 1000
POLL_INTERVAL_MS = 1000
# Progress texts kept per task (a long task's narration is bounded like the relay's queue).
MAX_PROGRESS_TEXTS = 500
PROGRESS_META_KEY = "io.github.phone-agent/progress"

# Runs the tool: (where its progress goes) -> its result in wire form (a CallToolResult's dump).
ToolRun = Callable[[Callable[[int, str], Awaitable[None]]], Awaitable[dict[str, Any]]]
# Cancels it (abort_task through the same channel).
ToolCancel = Callable[[], Awaitable[Any]]


def declares_tasks(meta: Mapping[str, Any] | None) -> bool:
    """Whether a request's ``_meta`` declares the Tasks extension in its client capabilities."""
    capabilities = (meta or {}).get(CLIENT_CAPABILITIES_META_KEY)
    extensions = capabilities.get("extensions") if isinstance(capabilities, Mapping) else None
    return isinstance(extensions, Mapping) and TASKS_EXTENSION in extensions


def missing_capability() -> MCPError:
    return MCPError(
        code=MISSING_CLIENT_CAPABILITY,
        message=f"Missing required client capability: declare the {TASKS_EXTENSION} extension",
        data={"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
    )


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class McpTask:
    """One task: its state as ``tasks/get`` shows it, and the asyncio task that runs the tool."""

    task_id: str
    tool: str
    created: float
    updated: float
    status: str = "working"
    progress: list[str] = field(default_factory=list)
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    cancel_requested: bool = False
    ended: float | None = None
    runner: asyncio.Task[None] | None = None
    # The questions waiting for the person (input request id: the elicitation, its answer to be).
    questions: dict[str, tuple[types.ElicitRequestFormParams, asyncio.Future[types.ElicitResult]]] = field(
        default_factory=dict
    )

    def wire(self) -> dict[str, Any]:
        """The task as the extension's ``DetailedTask`` (without ``resultType``)."""
        shown: dict[str, Any] = {
            "taskId": self.task_id,
            "status": self.status,
            "createdAt": _iso(self.created),
            "lastUpdatedAt": _iso(self.updated),
            "ttlMs": TASK_TTL_MS,
            "pollIntervalMs": POLL_INTERVAL_MS,
        }
        message = self.status_message()
        if message:
            shown["statusMessage"] = message
        if self.status == "completed" and self.result is not None:
            shown["result"] = self.result
        if self.status == "failed" and self.error is not None:
            shown["error"] = self.error
        if self.status == "input_required":
            shown["inputRequests"] = {
                key: types.ElicitRequest(params=form).model_dump(
                    by_alias=True, mode="json", exclude_none=True
                )
                for key, (form, _) in self.questions.items()
            }
        if self.progress:
            shown["_meta"] = {PROGRESS_META_KEY: list(self.progress)}
        return shown

    def status_message(self) -> str | None:
        if self.status == "input_required":
            return "Waiting for you: " + next(iter(self.questions.values()))[0].message
        if self.status == "working":
            return self.progress[-1] if self.progress else f"{self.tool} started"
        if self.status == "cancelled":
            return _text_of(self.result) or "cancelled by tasks/cancel (abort_task)"
        if self.status == "completed":
            return _text_of(self.result)
        if self.status == "failed" and self.error is not None:
            return str(self.error.get("message", ""))
        return None


def _text_of(result: dict[str, Any] | None) -> str | None:
    """The first text of a tool result, shortened: a task's summary."""
    for item in (result or {}).get("content") or []:
        if isinstance(item, dict) and item.get("type") == "text":
            text = str(item.get("text", ""))
            return text if len(text) <= 500 else text[:499] + "…"
    return None


class McpTaskStore:
    """The tasks of one process; every method is called on its event loop."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._tasks: dict[str, McpTask] = {}
        self._cancellers: dict[str, ToolCancel] = {}

    def __len__(self) -> int:
        return len(self._tasks)

    def start(self, tool: str, run: ToolRun, cancel: ToolCancel) -> dict[str, Any]:
        """A new task running ``run``; its ``CreateTaskResult`` (it is in the store before this returns)."""
        self._forget_expired()
        now = self._clock()
        task = McpTask(task_id=str(uuid.uuid4()), tool=tool, created=now, updated=now)
        self._tasks[task.task_id] = task
        task.runner = asyncio.ensure_future(self._run(task, run))
        self._cancellers[task.task_id] = cancel
        log.info("%s runs as MCP task %s", tool, task.task_id)
        return {"resultType": "task", **task.wire()}

    def get(self, task_id: str) -> dict[str, Any]:
        """``tasks/get``: the task's detailed state, or -32602 for an unknown (or expired) task."""
        return {"resultType": "complete", **self._task(task_id).wire()}

    async def cancel(self, task_id: str) -> dict[str, Any]:
        """``tasks/cancel``: abort the tool as ``abort_task`` does; the task ends ``cancelled``."""
        task = self._task(task_id)
        if task.status == "working" and not task.cancel_requested:
            task.cancel_requested = True
            task.updated = self._clock()
            canceller = self._cancellers.get(task_id)
            if canceller is not None:
                try:
                    await canceller()
                except Exception as exc:  # the abort failed: stop waiting for the tool instead
                    log.warning("could not abort MCP task %s: %s", task_id, exc)
                    if task.runner is not None:
                        task.runner.cancel()
        return {"resultType": "complete"}

    def update(self, task_id: str, responses: Mapping[str, Any] | None) -> dict[str, Any]:
        """``tasks/update``: answer the task's open questions (``inputResponses`` by input request id);
        a response to a question no longer open (answered at the page first) is ignored."""
        task = self._task(task_id)
        for key, response in (responses or {}).items():
            _form, answer = task.questions.get(key, (None, None))
            if answer is None or answer.done():
                continue
            try:
                answer.set_result(types.ElicitResult.model_validate(response))
            except ValueError as exc:
                raise MCPError(code=INVALID_PARAMS, message=f"inputResponses[{key!r}]: {exc}") from None
        return {"resultType": "complete"}

    async def elicit(self, task: McpTask, form: types.ElicitRequestFormParams) -> types.ElicitResult:
        """Put ``form`` to the task's client as an input request and wait for its answer (the relay
        cancels the wait when the person at the page answers first)."""
        key = f"ask-{uuid.uuid4().hex[:8]}"
        answer: asyncio.Future[types.ElicitResult] = asyncio.get_running_loop().create_future()
        task.questions[key] = (form, answer)
        task.status, task.updated = "input_required", self._clock()
        try:
            return await answer
        finally:
            task.questions.pop(key, None)
            if task.status == "input_required" and not task.questions:
                task.status = "working"
            task.updated = self._clock()

    def _task(self, task_id: object) -> McpTask:
        self._forget_expired()
        task = self._tasks.get(task_id) if isinstance(task_id, str) else None
        if task is None:
            raise MCPError(code=INVALID_PARAMS, message=f"Failed to retrieve task: no task {task_id!r}")
        return task

    async def _run(self, task: McpTask, run: ToolRun) -> None:
        try:
            result = await run(_TaskProgress(self, task))
        except asyncio.CancelledError:
            self._end(task, "cancelled", None)
            raise
        except MCPError as exc:
            task.error = {"code": exc.error.code, "message": exc.error.message}
            self._end(task, "failed", None)
            return
        except Exception as exc:
            log.exception("MCP task %s failed", task.task_id)
            task.error = {"code": -32603, "message": f"{type(exc).__name__}: {exc}"}
            self._end(task, "failed", None)
            return
        self._end(task, "cancelled" if task.cancel_requested else "completed", result)

    def _end(self, task: McpTask, status: str, result: dict[str, Any] | None) -> None:
        for _, answer in task.questions.values():
            answer.cancel()
        task.status = status
        task.result = result
        task.updated = task.ended = self._clock()
        self._cancellers.pop(task.task_id, None)

    def _forget_expired(self) -> None:
        now = self._clock()
        for task_id, task in list(self._tasks.items()):
            if task.ended is not None and now - task.ended > TASK_TTL_MS / 1000:
                del self._tasks[task_id]

    async def close(self) -> None:
        """Stop every task still running (the process is stopping)."""
        for task in self._tasks.values():
            if task.runner is not None and not task.runner.done():
                task.runner.cancel()
                with contextlib.suppress(BaseException):
                    await task.runner


class _TaskProgress:
    """Where a task's tool reports (its progress texts) and asks (its questions become input requests)."""

    def __init__(self, store: McpTaskStore, task: McpTask) -> None:
        self.store, self.task = store, task

    async def __call__(self, _seq: int, message: str) -> None:
        if len(self.task.progress) < MAX_PROGRESS_TEXTS:
            self.task.progress.append(message)
        self.task.updated = self.store._clock()

    async def elicit(self, form: types.ElicitRequestFormParams) -> types.ElicitResult | None:
        return await self.store.elicit(self.task, form)

    async def ask(self, kind: str, message: str) -> str | None:
        """A take over or a confirmation, asked as the task's input request (``mcp_ask``)."""
        return await ask_with(self.elicit, kind, message)
