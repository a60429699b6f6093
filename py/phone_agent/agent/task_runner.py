"""The task's life: PlanAndResolveAgent, the specification's Plan-and-Resolve agent (tools/dispatch.py's
``AgentRunner``) — start, plan, run the steps, replan, the time limit, abort, a phone gone, the report.

A task goes idle → planning → executing → finished | failed | aborted through tasks.py's state tables;
every end goes through ``close_out`` and is reported. Planning asks the model for steps
(``submit_plan``); each step is then resolved by resolve.py's ``StepResolver`` (look, ask, act,
verify). A failed step leads to a new plan (a bounded number of times). A step that finishes the task
(``finish_task``, a successful scroll extraction) ends it with its conclusion.

``abort()``, the time limit and cancelling ``run`` all stop the work within a second: the task keeps
its finished steps and ends aborted. A phone that stops answering fails the task, and so does
``fail(reason)`` (the page lost the phone while the model was still thinking).
"""

from __future__ import annotations

import asyncio
import traceback
from collections.abc import Awaitable, Callable
from typing import Any

from ..device.interface import Device
from ..errors import DeviceError, no_model
from ..tasks import (
    PLAN_MODE,
    REACT_MODE,
    AgentStep,
    AgentTask,
    StepStatus,
    TaskStatus,
    close_out,
    skip_pending,
)
from ..tools.screen_source import LiveScreen
from ..tools.spec import ProgressSink
from .config import AgentConfig
from .model import ChatModel, ModelError
from .model_functions import SUBMIT_PLAN, ActionError, PlannedStep, validate_plan
from .people import AgentSettings, AskingCallerToo, Person, TaskAborted
from .ports import Clock, ImageCodec, wall_clock_ms
from .progress import Listener, Listeners, ProgressReporter
from .prompts import plan_messages, replan_history
from .react import ReActFailure, run_react, start_react
from .resolve import Sleep, StepResolver, exchange
from .screen import Observation
from .text_actions import parse_text_action

ModelSource = ChatModel | Callable[[], "ChatModel | None"] | None


class _TaskFailure(Exception):
    """Ends the task as failed with this message."""


class PlanAndResolveAgent:
    """Runs one task at a time on a Device with a ChatModel; implements tools/dispatch.py's AgentRunner."""

    def __init__(
        self,
        model: ModelSource,
        codec: ImageCodec,
        *,
        config: AgentConfig | None = None,
        clock: Clock = wall_clock_ms,
        sleep: Sleep = asyncio.sleep,
        live: LiveScreen | None = None,
    ) -> None:
        self.model_source = model
        # The page's scrcpy view: looks come from its latest frame when fresh (screen_source.take_look),
        # and the task's report says which source its looks came from.
        self.live = live
        self.codec = codec
        self.config = config or AgentConfig()
        self.clock = clock
        self.sleep = sleep
        self._listeners = Listeners()
        self._inner: asyncio.Future[None] | None = None
        self._abort_reason: str | None = None
        self._fail_reason: str | None = None
        # The secrets the agent may type by name (tools/named_secrets.SecretBook); its prompt lists them.
        self.secrets: Any = None
        # Whoever sits at the page (take over, confirm: people.Person) and the page's Setting (the way,
        # plan or react, and the kinds of action the agent asks before); None: nobody to ask.
        self.person: Person | None = None
        self.settings: AgentSettings = AgentSettings()

    # -- the AgentRunner interface ---------------------------------------------------------------

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Receive the progress events of every task (the chat panel); returns an unsubscribe function."""
        return self._listeners.subscribe(listener)

    def abort(self) -> None:
        """Stop the running task (it ends aborted); nothing happens when none runs."""
        if self._inner is not None and not self._inner.done():
            self._abort_reason = "Aborted by abort_task."
            self._inner.cancel()

    def fail(self, reason: str) -> None:
        """End the running task at once as failed with ``reason`` (the phone went away: nothing the
        model is still thinking about can be done); nothing happens when none runs."""
        if self._inner is not None and not self._inner.done():
            self._fail_reason = reason
            self._inner.cancel()

    def current_model(self) -> ChatModel | None:
        source = self.model_source
        if source is None:
            return None
        if callable(source) and not hasattr(source, "stream"):
            return source()
        return source  # type: ignore[return-value]

    async def run(
        self, task: AgentTask, device: Device, timeout_ms: int, progress: ProgressSink | None = None
    ) -> AgentTask:
        model = self.current_model()
        if model is None:
            raise no_model()
        reporter = ProgressReporter(progress)
        for listener in self._listeners:
            reporter.subscribe(listener)
        self._abort_reason = self._fail_reason = None
        steps = StepResolver(
            task,
            device,
            model,
            reporter,
            self.codec,
            self.config,
            clock=self.clock,
            sleep=self.sleep,
            live=self.live,
            secrets=self.secrets,
            person=_with_caller(self.person, progress),
            settings=self.settings,
        )
        inner = asyncio.ensure_future(self._drive(task, steps, reporter))
        self._inner = inner
        try:
            done, _ = await asyncio.wait({inner}, timeout=timeout_ms / 1000)
            if not done:
                await self._stop(inner)
                self._end(task, reporter, TaskStatus.ABORTED, error=f"Timed out after {timeout_ms} ms.")
            elif inner.cancelled() and self._fail_reason is not None:
                self._end(task, reporter, TaskStatus.FAILED, error=self._fail_reason)
            elif inner.cancelled():
                self._end(task, reporter, TaskStatus.ABORTED, error=self._abort_reason or "Aborted.")
            else:
                inner.result()
        except asyncio.CancelledError:
            await self._stop(inner)
            self._end(task, reporter, TaskStatus.ABORTED, error="Cancelled by the caller.")
            raise
        finally:
            self._inner = None
        return task

    async def _stop(self, inner: asyncio.Future[None]) -> None:
        inner.cancel()
        await asyncio.wait({inner}, timeout=self.config.stop_grace_ms / 1000)

    # -- ending a task -----------------------------------------------------------------------------

    def _end(
        self,
        task: AgentTask,
        reporter: ProgressReporter,
        status: TaskStatus,
        *,
        error: str | None = None,
        conclusion: str | None = None,
    ) -> None:
        """Close the task out as ``status`` (``close_out``) and report it: the steps it interrupted,
        the error of a failed or aborted task, the end."""
        if task.done:
            return
        for step in close_out(task, status, self.clock(), error=error, conclusion=conclusion):
            reporter.on_step_end(step)
        if error is not None:
            reporter.on_error(f"Task aborted: {error}" if status is TaskStatus.ABORTED else error)
        reporter.on_done(str(task.status), task.conclusion, task.error)

    # -- the task ------------------------------------------------------------------------------------

    async def _drive(self, task: AgentTask, steps: StepResolver, reporter: ProgressReporter) -> None:
        try:
            way = WAYS[task.options.mode or self.settings.mode]
            await way(self, task, steps, reporter)
        except (_TaskFailure, ReActFailure) as exc:
            self._end(task, reporter, TaskStatus.FAILED, error=str(exc))
        except TaskAborted as exc:  # the person cancelled a take over, or nobody took over in time
            self._end(task, reporter, TaskStatus.ABORTED, error=str(exc))
        except ModelError as exc:
            self._end(task, reporter, TaskStatus.FAILED, error=f"Model error: {exc}")
        except DeviceError as exc:
            self._end(task, reporter, TaskStatus.FAILED, error=f"The phone stopped answering: {exc.message}")
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug must end the task with a reason, not leave it running
            traceback.print_exc()
            self._end(task, reporter, TaskStatus.FAILED, error=f"Internal error: {type(exc).__name__}: {exc}")

    async def _react(self, task: AgentTask, steps: StepResolver, reporter: ProgressReporter) -> None:
        start_react(task, self.clock)
        outcome = await run_react(task, steps, self.clock, self.config.max_react_actions)
        self._end(task, reporter, TaskStatus.FINISHED, conclusion=outcome.conclusion)

    async def _plan_and_resolve(
        self, task: AgentTask, steps: StepResolver, reporter: ProgressReporter
    ) -> None:
        task.move_to(TaskStatus.PLANNING, self.clock())
        observation = await steps.look()
        planned = await self._plan(task, observation, steps, "")
        self._add_steps(task, planned)
        reporter.on_planned(task.steps)
        task.move_to(TaskStatus.EXECUTING, self.clock())
        replans = 0
        index = 0
        while index < len(task.steps):
            step = task.steps[index]
            index += 1
            if step.status is not StepStatus.PENDING:
                continue
            outcome = await steps.resolve(step, observation)
            observation = outcome.last_observation
            if outcome.task_done:
                self._end(task, reporter, TaskStatus.FINISHED, conclusion=outcome.conclusion)
                return
            if step.status is StepStatus.FAILED:
                if replans >= self.config.max_replans:
                    raise _TaskFailure(f"Step {step.index} ({step.title}) failed: {step.error}")
                replans += 1
                skip_pending(task.steps[index:], self.clock())
                observation = await steps.look(observation)
                planned = await self._plan(task, observation, steps, replan_history(task, step))
                new_steps = self._add_steps(task, planned)
                reporter.on_planned(new_steps, replanned=True)
        done = [s for s in task.steps if s.status is StepStatus.SUCCESS]
        self._end(task, reporter, TaskStatus.FINISHED, conclusion=done[-1].summary if done else None)

    def _add_steps(self, task: AgentTask, planned: list[PlannedStep]) -> list[AgentStep]:
        first = len(task.steps) + 1
        steps = [
            AgentStep(
                id=f"{task.id}-s{first + offset}",
                index=first + offset,
                title=p.title,
                description=p.description,
            )
            for offset, p in enumerate(planned)
        ]
        task.steps.extend(steps)
        return steps

    async def _plan(
        self, task: AgentTask, observation: Observation, steps: StepResolver, history: str
    ) -> list[PlannedStep]:
        messages = plan_messages(task, observation, self.config.max_plan_steps, history, steps.secret_names())
        problem = "no answer"
        for _ in range(self.config.plan_attempts):
            turn = await steps.ask(messages, [SUBMIT_PLAN])
            call = turn.tool_calls[0] if turn.tool_calls else parse_text_action(turn.text)
            if call is None:
                problem = "the model answered without calling submit_plan"
                messages = [*messages, {"role": "assistant", "content": turn.text or ""}]
                messages.append(
                    {"role": "user", "content": f"Error: {problem}. Call submit_plan with the steps."}
                )
                continue
            try:
                return validate_plan(call, self.config.max_plan_steps)
            except ActionError as exc:
                problem = str(exc)
                messages = [
                    *messages,
                    *exchange(call, turn.text, f"Error: {problem}", 0, bool(turn.tool_calls)),
                ]
        raise _TaskFailure(
            f"The model gave no usable plan after {self.config.plan_attempts} tries: {problem}"
        )


def _with_caller(person: Person | None, progress: ProgressSink | None) -> Person | None:
    """The person at the page, and the task's caller too when its progress sink can ask it (``ask``: the
    relay's link to an MCP client)."""
    ask = getattr(progress, "ask", None)
    if person is None or ask is None:
        return person
    return AskingCallerToo(person, ask)


# How each of the agent's ways (``tasks.AGENT_MODES``) runs a task: a method of the agent.
Way = Callable[[PlanAndResolveAgent, AgentTask, StepResolver, ProgressReporter], Awaitable[None]]
WAYS: dict[str, Way] = {
    PLAN_MODE.name: PlanAndResolveAgent._plan_and_resolve,
    REACT_MODE.name: PlanAndResolveAgent._react,
}
