"""The agent in the page: builds the Plan-and-Resolve agent from the browser's adapters (fetch, canvas,
the Prompt API), plugs it into the shared McpServiceContext, and keeps the task history in IndexedDB.

``PageAgentRunner`` is what ``context.agent`` holds (context.py's AgentRunner): it runs each task on
the PlanAndResolveAgent and around it tells the chat panel and stores the task (at its start, after
the plan, each step and each action, and at its end), so get_task_result and get_latest_task still
answer after a reload. Settings decide the model at every task's start; with none configured,
``context.agent`` is None and run_agent_task answers the "No model configured" error.

Hidden page parameters for tests, slow phones and slow models: ``?agentSettleMs=N`` (the wait after
each action and each scroll before the next screenshot; default 500 and 400 ms), ``?modelTimeoutMs=N``
(the longest wait for a model's answer to begin; default 120 000) and ``?modelIdleMs=N`` (the longest
silence inside a streamed answer; default 60 000). The model's two are read at each task's start.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable
from typing import Any

import js  # type: ignore[import-not-found]

from ..agent import AgentConfig, PlanAndResolveAgent, chat_model_for
from ..agent.model import ChatModel
from ..agent.progress import ProgressEvent, ProgressSink
from ..agent.settings import ModelSettings
from ..context import McpServiceContext
from ..device import Device, ScreenshotTap
from ..tasks import AgentTask
from ..tools import DEFAULT_TASK_TIMEOUT_MS, Channel
from .agent_settings import SettingsCard
from .canvas_codec import CanvasImageCodec
from .chat_panel import ChatPanel
from .fetch_http import FetchHttpClient
from .phone import query_param
from .prompt_api import PromptApiModel
from .storage import IndexedDbStore
from .task_history import restore_order, task_record


def _now_ms() -> int:
    return int(time.time() * 1000)


def agent_config(page_url: str) -> AgentConfig:
    """The agent's bounds, with ``?agentSettleMs=`` applied."""
    config = AgentConfig()
    settle = query_param(page_url, "agentSettleMs")
    if settle is not None and settle.isdigit():
        ms = int(settle)
        config = dataclasses.replace(
            config, settle_ms=ms, extract=dataclasses.replace(config.extract, settle_ms=ms)
        )
    return config


def model_limits(settings: ModelSettings | None, page_url: str) -> ModelSettings | None:
    """The settings with ``?modelTimeoutMs=`` and ``?modelIdleMs=`` applied (positive integers only)."""
    if settings is None:
        return None
    for param, name in (("modelTimeoutMs", "request_timeout_ms"), ("modelIdleMs", "idle_timeout_ms")):
        value = query_param(page_url, param)
        if value is not None and value.isdigit() and int(value) > 0:
            settings = dataclasses.replace(settings, **{name: int(value)})
    return settings


class TaskHistory:
    """Tasks in IndexedDB ("tasks" store, by taskId); writes happen one after another, in order."""

    def __init__(self) -> None:
        self._store = IndexedDbStore("tasks")
        self._last: asyncio.Future[None] | None = None

    async def restore(self, context: McpServiceContext, panel: ChatPanel) -> int:
        """Put the stored tasks back into the context (oldest first) and the panel; how many."""
        try:
            records = await asyncio.wait_for(self._store.values(), 10)
        except Exception as exc:  # a broken store loses the history, never the page
            js.console.warn(f"[agent] could not read the task history: {exc}")
            return 0
        unfinished = {
            record.get("taskId")
            for record in records
            if isinstance(record, dict) and record.get("status") not in ("finished", "failed", "aborted")
        }
        tasks, drop = restore_order(records, _now_ms())
        for task in tasks:
            context.remember_task(task)
            panel.show_past(task)
            if task.id in unfinished:
                self.save(task)  # interrupted by the reload: stored as the aborted task it now is
        for task_id in drop:
            self._chain(self._store.delete(task_id))
        return len(tasks)

    def save(self, task: AgentTask) -> None:
        """Store the task as it is now (the record is taken at once; the write follows the others)."""
        self._chain(self._store.put(task.id, task_record(task)))

    def _chain(self, write: Any) -> None:
        previous = self._last

        async def run() -> None:
            if previous is not None:
                await asyncio.wait({previous}, timeout=10)
            try:
                await asyncio.wait_for(write, 10)
            except Exception as exc:
                js.console.warn(f"[agent] could not store a task: {exc}")

        self._last = asyncio.ensure_future(run())

    async def flush(self) -> None:
        if self._last is not None:
            await asyncio.wait({self._last}, timeout=10)


class PageAgentRunner:
    """context.py's AgentRunner for the page: the PlanAndResolveAgent plus the panel and the history."""

    def __init__(
        self,
        agent: PlanAndResolveAgent,
        panel: ChatPanel,
        history: TaskHistory,
        on_ended: Callable[[], None] | None = None,
    ) -> None:
        self.on_ended = on_ended
        self.agent = agent
        self.panel = panel
        self.history = history
        self.from_page = False  # set by the panel's own Run, for the task's origin label
        # The phone card's live view: told when a task runs, and shown the agent's screenshots.
        self.on_running: Callable[[bool], None] | None = None
        self.on_frame: Callable[[bytes], None] | None = None
        self._task: AgentTask | None = None
        agent.subscribe(self._on_event)

    def abort(self) -> None:
        self.agent.abort()

    async def run(
        self, task: AgentTask, device: Device, timeout_ms: int, progress: ProgressSink | None
    ) -> AgentTask:
        origin = "this page" if self.from_page else ("MCP client" if progress is not None else "WebMCP")
        self.from_page = False
        self._task = task
        self.panel.task_started(task, origin)
        self.history.save(task)
        if self.on_frame is not None:
            device = ScreenshotTap(device, self.on_frame)
        if self.on_running is not None:
            self.on_running(True)
        try:
            return await self.agent.run(task, device, timeout_ms, progress)
        finally:
            if self.on_running is not None:
                self.on_running(False)
            self._task = None
            self.history.save(task)
            self.panel.task_ended(task)
            if self.on_ended is not None:
                # After the context has let the task go: settings changed meanwhile apply now.
                asyncio.get_event_loop().call_soon(self.on_ended)

    def _on_event(self, event: ProgressEvent) -> None:
        self.panel.on_event(event)
        if self._task is not None and event.kind in ("planned", "step_start", "tool_result", "step_end"):
            self.history.save(self._task)


class AgentPage:
    """Everything the agent adds to the page, wired to the context."""

    def __init__(self, context: McpServiceContext, server_config: dict[str, Any] | None) -> None:
        self.context = context
        self.origin = str(js.location.origin)
        self.http = FetchHttpClient()
        self.codec = CanvasImageCodec()
        context.image_codec = self.codec  # take_screenshot's maxSide and format use the same canvas
        self.settings = SettingsCard((server_config or {}).get("model"), self.refresh)
        self.history = TaskHistory()
        self.panel = ChatPanel(self.run_from_panel, context.abort)
        config = agent_config(str(js.location.href))
        self.agent = PlanAndResolveAgent(self.current_model, self.codec, config=config)
        self.runner = PageAgentRunner(self.agent, self.panel, self.history, on_ended=self.refresh)

    async def start(self) -> None:
        restored = await self.history.restore(self.context, self.panel)
        if restored:
            js.console.log(f"[agent] restored {restored} task(s) from this browser's history")
        await self.settings.load()
        self.refresh()

    def current_model(self) -> ChatModel | None:
        """The model the settings name now (asked at each task's start)."""
        settings = model_limits(self.settings.resolved(), str(js.location.href))
        return chat_model_for(settings, self.http, self.origin, builtin=self._builtin)

    @staticmethod
    def _builtin(_settings: ModelSettings) -> ChatModel:
        return PromptApiModel()

    def refresh(self) -> None:
        """Plug the agent in when a model is configured, else leave ``context.agent`` empty (the tools
        then answer "No model configured"). A running task keeps its agent until it ends."""
        if self.context.is_running():
            return
        self.context.agent = self.runner if self.settings.resolved() is not None else None

    async def run_from_panel(self, goal: str) -> AgentTask:
        self.refresh()
        self.runner.from_page = True
        try:
            return await self.context.run_agent(goal, DEFAULT_TASK_TIMEOUT_MS[Channel.RELAY], None)
        finally:
            self.runner.from_page = False
