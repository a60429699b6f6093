"""ToolDispatcher: the page's state behind every tool (tasks, the phone, the agent) and the one
dispatch both channels use.

The relay client (Channel A), the WebMCP service (Channel B) and the page's live view all call
``dispatch``, which looks the tool up in the catalog (``tools.TOOLS``), validates its arguments and runs
the entry's own handler: a table, not a chain of names. The phone and the agent are plugged in behind
two small interfaces (``Device``, ``AgentRunner``) so this module stays pure and is tested in CPython.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Protocol

from .. import errors
from ..device.interface import Device
from ..errors import ToolError
from ..flows.library import FlowLibrary, MemoryFlowLibrary
from ..flows.recorder import FlowRecorder
from ..flows.scripts import ScriptEngine
from ..tasks import AgentTask, TaskOptions, TaskStatus
from .catalog import DEFAULT_TOOL_PROFILE, ToolProfile, get_tool
from .groups import GroupSwitch
from .named_secrets import SecretBook
from .phone_holder import PhoneHolder
from .pipeline.activity import Activity
from .pipeline.call import (
    CHANNEL_CALLERS,
    Call,
    Caller,
    CallListener,
    CallRecord,
    Scope,
    current,
    enter,
    leave,
)
from .pipeline.chain import CallPipeline
from .pipeline.confirmation import Confirm, Confirmation
from .pipeline.steps import page_steps
from .screen_source import LiveScreen
from .session import DeviceSession, ScreenshotScaler
from .spec import Channel, ProgressSink, ToolSpec
from .task_keeper import TASKS_KEPT, TaskKeeper

__all__ = [
    "TASKS_KEPT",
    "AgentRunner",
    "CallListener",
    "CallRecord",
    "Caller",
    "ProgressSink",
    "ToolDispatcher",
]


class AgentRunner(Protocol):
    """Runs one agent task to its end (finished, failed or aborted) and returns it."""

    async def run(
        self, task: AgentTask, device: Device, timeout_ms: int, progress: ProgressSink | None
    ) -> AgentTask: ...

    def abort(self) -> None: ...


def _now_ms() -> int:
    return int(time.time() * 1000)


class ToolDispatcher:
    """The page's service behind every tool: what it holds (the phone, the tasks, flow keeping, the
    secrets, the pipeline), each a typed field, and the one dispatch."""

    def __init__(self, clock_ms: Callable[[], int] = _now_ms) -> None:
        self.phone = PhoneHolder()
        self.tasks = TaskKeeper(clock_ms)
        self.agent: AgentRunner | None = None
        # Which tools this page serves (the server's --tools, from /api/config).
        self.profile: ToolProfile = DEFAULT_TOOL_PROFILE
        self._clock_ms = clock_ms
        # Saved flows (the page: IndexedDB) and the flow recording every channel's calls feed.
        self.flow_library: FlowLibrary = MemoryFlowLibrary()
        self.flow_recorder = FlowRecorder()
        # Where flows run their JavaScript (flows.scripts.ScriptEngine: the page's QuickJS Worker; in
        # CPython the same engine through Node); None: a flow with scripts fails saying so.
        self.script_engine: ScriptEngine | None = None
        # The secrets type_secret types (tools.named_secrets.SecretBook: the page's own and the server's).
        self._secrets: SecretBook | None = None
        # The one road every call takes (tools.pipeline): its activity and confirmation steps are
        # held here so the page can listen to the one and answer the other.
        self.activity = Activity()
        self.confirmation = Confirmation()
        steps = page_steps(self, self._tool, self.activity, self.confirmation, clock_ms)
        self.pipeline = CallPipeline(steps, self)
        # The tool groups WebMCP registers (tools.groups.GroupSwitch: the page's WebMCP service); None:
        # tool_groups answers every group listed.
        self.groups: GroupSwitch | None = None

    @property
    def secrets(self) -> SecretBook | None:
        return self._secrets

    @secrets.setter
    def secrets(self, book: SecretBook | None) -> None:
        self._secrets = book
        self.phone.redact_nodes = book.redact_nodes if book is not None else None

    @property
    def before_call(self) -> Confirm | None:
        """Asked before every call runs (after its arguments are checked), whoever made it; raises
        ToolError to refuse it (the page's ``--confirm always``)."""
        return self.confirmation.check

    @before_call.setter
    def before_call(self, check: Confirm | None) -> None:
        self.confirmation.check = check

    def add_call_listener(self, listener: CallListener) -> None:
        """Be told of every finished call, from every caller (a listener's failure is ignored)."""
        self.activity.listeners.append(listener)

    def remove_call_listener(self, listener: CallListener) -> None:
        """Stop telling ``listener`` (a page leaving its farm); nothing when it was not listening."""
        if listener in self.activity.listeners:
            self.activity.listeners.remove(listener)

    def _tool(self, name: object) -> ToolSpec:
        """The tool ``name`` within this page's profile (ToolError unknown_tool naming the others)."""
        return get_tool(name, self.profile)

    def now_ms(self) -> int:
        return self._clock_ms()

    # -- the phone (PhoneHolder) ----------------------------------------------------------------

    @property
    def device(self) -> Device | None:
        return self.phone.device

    @device.setter
    def device(self, device: Device | None) -> None:
        self.phone.device = device

    @property
    def image_codec(self) -> ScreenshotScaler | None:
        return self.phone.image_codec

    @image_codec.setter
    def image_codec(self, codec: ScreenshotScaler | None) -> None:
        self.phone.image_codec = codec

    @property
    def live_screen(self) -> LiveScreen | None:
        return self.phone.live_screen

    @live_screen.setter
    def live_screen(self, screen: LiveScreen | None) -> None:
        self.phone.live_screen = screen

    def current_session(self) -> DeviceSession | None:
        """The session with the connected phone if one is open (no new one is made)."""
        return self.phone.current_session()

    def session(self) -> DeviceSession:
        """The connected phone as the device tools use it; ToolError no_device when none is."""
        return self.phone.session()

    def is_connected(self) -> bool:
        return self.phone.device is not None

    async def device_info(self) -> dict[str, Any]:
        return await self.phone.info()

    # -- the tasks (TaskKeeper) -----------------------------------------------------------------

    def is_running(self) -> bool:
        return self.tasks.running is not None

    @property
    def running_task(self) -> AgentTask | None:
        """The task this page's agent runs now, if any."""
        return self.tasks.running

    def get_task(self, task_id: str) -> AgentTask | None:
        return self.tasks.get(task_id)

    def get_all_tasks(self) -> list[AgentTask]:
        return self.tasks.all()

    def remember_task(self, task: AgentTask) -> None:
        """Keep a task (one restored from storage, or one just created) in this page's history; past
        TASKS_KEPT, the oldest finished ones are forgotten."""
        self.tasks.remember(task)

    def abort(self) -> str:
        """Abort the running task; its id (ToolError no_task_running when none runs)."""
        running = self.tasks.running
        if running is None or self.agent is None:
            raise errors.no_task_running()
        self.agent.abort()
        return running.id

    async def run_agent(
        self,
        goal: str,
        timeout_ms: int,
        progress: ProgressSink | None = None,
        options: TaskOptions | None = None,
    ) -> AgentTask:
        device = self.device
        if device is None:
            raise errors.no_device()
        if self.tasks.running is not None:
            raise errors.agent_busy()
        if self.agent is None:
            raise errors.no_model()
        task = self.tasks.start(goal, options)
        # The agent's actions enter this pipeline: under run_agent_task's call when a tool started the
        # task, as calls of their own when the page's panel did.
        scope = current()
        token = enter(Scope(self.pipeline, scope.call if scope is not None else None))
        refused = False
        try:
            return await self.agent.run(task, device, timeout_ms, progress)
        except ToolError:
            refused = task.status is TaskStatus.IDLE  # refused before it began (e.g. no model)
            raise
        finally:
            leave(token)
            self.tasks.stop(task, forget=refused)

    # -- the one dispatch -----------------------------------------------------------------------

    async def dispatch(
        self,
        tool_name: Any,
        args: Any,
        channel: Channel,
        progress: ProgressSink | None = None,
        transfer: Any = None,
        caller: Caller | None = None,
    ) -> dict[str, Any]:
        """Run one call from the page's edge (a channel, the live view, a panel) through the pipeline
        and answer its MCP result; failures are ``isError`` results, never raised. ``caller``: who
        made it, when the channel's own caller is not it (an MCP App view).

        Cancellation (``asyncio.CancelledError``) is the one thing that propagates: the channel that
        cancelled decides what to answer.
        """
        name = tool_name if isinstance(tool_name, str) else repr(tool_name)
        call = Call(
            name, args, channel, caller or CHANNEL_CALLERS[channel], progress=progress, transfer=transfer
        )
        scope = current()
        return await self.pipeline.run(call.under(scope.call if scope is not None else None))
