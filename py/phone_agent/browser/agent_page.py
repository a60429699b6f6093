"""The agent in the page: builds the Plan-and-Resolve agent from the browser's adapters (fetch, canvas,
the Prompt API), plugs it into the shared ToolDispatcher, and keeps the task history in IndexedDB.

``PageAgentRunner`` is what the dispatcher's ``agent`` holds (tools/dispatch.py's AgentRunner): it
runs each task on the PlanAndResolveAgent and around it tells the chat panel and stores the task (at
its start, after the plan, each step and each action, and at its end), so get_task_result and
get_latest_task still answer after a reload.

Tabs of one browser share the history (IndexedDB) and the phone, so they share one agent too: a task
runs only in the tab that holds the ``AGENT_LOCK`` Web Lock (another tab answers the busy text), that
tab holds the task's own lock until its last record is written, and it posts every record on a
BroadcastChannel. A tab opened meanwhile shows such a task as it stands (not as interrupted), follows
it, and reads its end from storage once the lock is free; only a task whose tab is gone is stopped.
A phone whose link drops while a task runs ends the task at once, failed, with the reason.

Settings decide the model at every task's start; with none configured, the dispatcher's ``agent`` is None and
run_agent_task answers the "No model configured" error.

Hidden page parameters for tests, slow phones and slow models: ``?agentSettleMs=N`` (the longest wait
for the screen to settle after each action and each scroll before the next look; default 2000 ms),
``?modelTimeoutMs=N`` (the longest wait for a model's answer to begin; default 120 000) and
``?modelIdleMs=N`` (the longest silence inside a streamed answer; default 60 000). The model's two are
read at each task's start.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import time
from collections.abc import Callable
from typing import Any

import js  # type: ignore[import-not-found]
from pyodide.ffi import create_proxy  # type: ignore[import-not-found]

from ..agent.config import AgentConfig
from ..agent.model import ChatModel
from ..agent.openai_client import chat_model_for
from ..agent.progress import ProgressEvent
from ..agent.settings import ModelSettings
from ..agent.task_runner import PlanAndResolveAgent
from ..device.interface import Device
from ..device.wrapper import ScreenshotTap
from ..errors import DeviceError, agent_busy
from ..tasks import TASK_STATUS_KEY, AgentTask
from ..tools.catalog import DEFAULT_TASK_TIMEOUT_MS
from ..tools.dispatch import ToolDispatcher
from ..tools.spec import Channel, ProgressSink
from .agent_settings import SettingsCard
from .canvas_codec import CanvasImageCodec
from .chat_panel import ChatPanel
from .fetch_http import FetchHttpClient
from .interop import is_nullish, to_js_json
from .page_device import PageDevice, lost_message, query_param
from .prompt_api import PromptApiModel
from .storage import IndexedDbStore
from .task_history import (
    AGENT_LOCK,
    restore_order,
    task_from_record,
    task_lock_name,
    task_record,
    unfinished_ids,
)

TASKS_CHANNEL = "phone-agent:tasks"


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


class TabLock:
    """A Web Lock this tab holds until ``release()`` (or until the tab goes away)."""

    def __init__(self, release: Any = None, proxy: Any = None) -> None:
        self._release, self._proxy = release, proxy

    def release(self) -> None:
        release, self._release = self._release, None
        if release is not None:
            release()
        if self._proxy is not None:
            self._proxy.destroy()
            self._proxy = None


def _web_locks() -> Any:
    locks = getattr(js.navigator, "locks", None)
    return None if is_nullish(locks) else locks


async def try_lock(name: str) -> TabLock | None:
    """Take the Web Lock ``name`` if no tab holds it; None when one does. Without Web Locks (an old
    browser) every tab decides alone, as before."""
    locks = _web_locks()
    if locks is None:
        return TabLock()
    granted: asyncio.Future[bool] = asyncio.get_event_loop().create_future()
    held = js.Promise.withResolvers()

    def on_grant(lock: Any) -> Any:
        if not granted.done():
            granted.set_result(not is_nullish(lock))
        return held.promise if not is_nullish(lock) else None

    proxy = create_proxy(on_grant)
    locks.request(name, to_js_json({"ifAvailable": True}), proxy)
    if not await asyncio.wait_for(granted, 10):
        proxy.destroy()
        return None
    return TabLock(held.resolve, proxy)


async def until_released(name: str) -> None:
    """Wait until no tab holds the Web Lock ``name`` (take it and give it back at once)."""
    locks = _web_locks()
    if locks is None:
        return
    proxy = create_proxy(lambda _lock: None)
    try:
        await locks.request(name, proxy)
    finally:
        proxy.destroy()


async def held_lock_names() -> frozenset[str]:
    """The Web Locks some tab of this browser holds now."""
    locks = _web_locks()
    if locks is None:
        return frozenset()
    state = await locks.query()
    return frozenset(str(lock.name) for lock in state.held)


class TaskHistory:
    """Tasks in IndexedDB ("tasks" store, by taskId); writes happen one after another, in order, and
    each record is also posted to the other tabs of this browser."""

    def __init__(self) -> None:
        self._store = IndexedDbStore("tasks")
        self._last: asyncio.Future[None] | None = None
        self._channel: Any = None
        self._channel_proxy: Any = None
        self._following: set[asyncio.Future[None]] = set()
        # Hands each stored record on to the server too (task_ledger: one truth across browsers).
        self.on_record: Any = None

    async def restore(self, context: ToolDispatcher, panel: ChatPanel) -> int:
        """Put the stored tasks back into the context (oldest first) and the panel; how many. Tasks
        another tab still runs are followed until they end there."""
        try:
            records = await asyncio.wait_for(self._store.values(), 10)
            held = await asyncio.wait_for(held_lock_names(), 10)
        except Exception as exc:  # a broken store loses the history, never the page
            js.console.warn(f"[agent] could not read the task history: {exc}")
            return 0
        unfinished = unfinished_ids(records)
        elsewhere = frozenset(task_id for task_id in unfinished if task_lock_name(task_id) in held)
        tasks, drop = restore_order(records, _now_ms(), running=elsewhere)
        for task in tasks:
            context.remember_task(task)
            panel.show_past(task)
            if task.id in elsewhere:
                self._follow(task.id, context, panel)
            elif task.id in unfinished:
                self.save(task)  # interrupted by the reload: stored as the aborted task it now is
        for task_id in drop:
            self._chain(self._store.delete(task_id))
        self._listen(context)
        return len(tasks)

    def _follow(self, task_id: str, context: ToolDispatcher, panel: ChatPanel) -> None:
        """Once the tab running ``task_id`` lets go of it, take its last record from storage (a tab
        closed mid-task leaves it unfinished: it is stopped there, and stored so)."""

        async def follow() -> None:
            await until_released(task_lock_name(task_id))
            try:
                record = await asyncio.wait_for(self._store.get(task_id), 10)
            except Exception as exc:  # a broken store: the task stays as last posted
                js.console.warn(f"[agent] could not read task {task_id}: {exc}")
                return
            if not isinstance(record, dict):
                return
            task = task_from_record(record, _now_ms())
            context.remember_task(task)
            for item in js.document.querySelectorAll(f'.chat-task[data-task-id="{task_id}"]'):
                item.remove()
            panel.show_past(task)
            if record.get(TASK_STATUS_KEY) != str(task.status):  # it was closed out just now
                self.save(task)

        future = asyncio.ensure_future(follow())
        self._following.add(future)
        future.add_done_callback(self._following.discard)

    def _listen(self, context: ToolDispatcher) -> None:
        """Keep the other tabs' tasks current in this tab's context (their records as they are posted)."""
        if is_nullish(getattr(js, "BroadcastChannel", None)) or self._channel is not None:
            return

        def on_message(event: Any) -> None:
            try:
                record = json.loads(str(event.data))
                context.remember_task(task_from_record(record, _now_ms(), keep_running=True))
            except Exception as exc:
                js.console.warn(f"[agent] ignored a task record from another tab: {exc}")

        self._channel = js.BroadcastChannel.new(TASKS_CHANNEL)
        self._channel_proxy = create_proxy(on_message)
        self._channel.addEventListener("message", self._channel_proxy)

    def save(self, task: AgentTask) -> None:
        """Store the task as it is now (the record is taken at once; the write follows the others)."""
        record = task_record(task)
        self._chain(self._store.put(task.id, record))
        if self.on_record is not None:
            try:
                self.on_record(record)
            except Exception as exc:
                js.console.warn(f"[agent] could not hand a task to the server: {exc}")
        if self._channel is not None:
            try:
                self._channel.postMessage(json.dumps(record))
            except Exception as exc:
                js.console.warn(f"[agent] could not tell the other tabs about a task: {exc}")

    def merge(self, record: dict[str, Any], context: ToolDispatcher, panel: ChatPanel) -> bool:
        """A record the server kept (another page stored it, maybe in another browser): this tab's
        history takes it unless this tab runs that task, or knows it ended while the record says not.
        Whether it was taken."""
        try:
            incoming = task_from_record(record, _now_ms(), keep_running=True)
        except (KeyError, TypeError, ValueError) as exc:
            js.console.warn(f"[agent] ignored a task record from the server: {exc}")
            return False
        known = context.get_task(incoming.id)
        running_here = known is not None and context.running_task is known
        if running_here or (known is not None and known.done and not incoming.done):
            return False
        if known is not None and task_record(known) == record:
            return False
        context.remember_task(incoming)
        for item in js.document.querySelectorAll(f'.chat-task[data-task-id="{incoming.id}"]'):
            item.remove()
        panel.show_past(incoming)
        self._chain(self._store.put(incoming.id, record))  # kept across reloads (not posted again)
        return True

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
    """The dispatcher's AgentRunner for the page: the PlanAndResolveAgent, the panel and the history."""

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
        self._releasing: asyncio.Future[None] | None = None
        agent.subscribe(self._on_event)

    def abort(self) -> None:
        self.agent.abort()

    async def run(
        self, task: AgentTask, device: Device, timeout_ms: int, progress: ProgressSink | None
    ) -> AgentTask:
        origin = "this page" if self.from_page else ("MCP client" if progress is not None else "WebMCP")
        self.from_page = False
        if isinstance(device, PageDevice) and device.lost_reason is not None:
            raise DeviceError(f"{lost_message(device.lost_reason)} The page is reconnecting by itself.")
        # One agent on the phone across this browser's tabs; refused here, the task never began.
        agent_lock = await try_lock(AGENT_LOCK)
        if agent_lock is None:
            raise agent_busy()
        task_lock = await try_lock(task_lock_name(task.id))
        unwatch = None
        if isinstance(device, PageDevice):
            unwatch = device.watch(
                lambda reason: self.agent.fail(f"The phone stopped answering: {lost_message(reason)}")
            )
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
            if unwatch is not None:
                unwatch()
            if self.on_running is not None:
                self.on_running(False)
            self._task = None
            self.history.save(task)
            self.panel.task_ended(task)
            agent_lock.release()
            # Other tabs read the task's end once its lock is free: free it once the end is stored.
            self._releasing = asyncio.ensure_future(self._release_after_flush(task_lock))
            if self.on_ended is not None:
                # After the context has let the task go: settings changed meanwhile apply now.
                asyncio.get_event_loop().call_soon(self.on_ended)

    async def _release_after_flush(self, lock: TabLock | None) -> None:
        try:
            await self.history.flush()
        finally:
            if lock is not None:
                lock.release()

    def _on_event(self, event: ProgressEvent) -> None:
        self.panel.on_event(event)
        if self._task is not None and event.kind in ("planned", "step_start", "tool_result", "step_end"):
            self.history.save(self._task)


class AgentPage:
    """Everything the agent adds to the page, wired to the context."""

    def __init__(self, context: ToolDispatcher, server_config: dict[str, Any] | None) -> None:
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
