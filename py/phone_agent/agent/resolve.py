"""PlanAndResolveAgent: the specification's Plan-and-Resolve agent (context.py's ``AgentRunner``).

A task goes idle → planning → executing → finished | failed | aborted, and each step pending → running →
success | failed (or skipped), through tasks.py's state tables; every end goes through ``close_out``.
Planning asks the model for steps (``submit_plan``); resolving runs each step as a loop of
screenshot → one model action → the device runs it → a ``ToolCallRecord``, until the model finishes
or fails the step, the step's action budget runs out, or the same action keeps leaving the screen
unchanged. A failed step leads to a new plan (a bounded number of times). A successful scroll
extraction ends the task with its summary as the conclusion.

``abort()``, the time limit and cancelling ``run`` all stop the work within a second: the task keeps
its finished steps and ends aborted. A phone that stops answering fails the task, and so does
``fail(reason)`` (the page lost the phone while the model was still thinking).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..device.interface import Device
from ..errors import DeviceError, ErrorCode, ToolError, no_model
from ..tasks import AgentStep, AgentTask, StepStatus, TaskStatus, ToolCallRecord, close_out, skip_pending
from ..tools.screen_source import LiveScreen, LookTally
from ..tools.session import DeviceSession, SessionState
from ..tools.spec import CallEnv, Channel, validate_arguments
from .extract import ExtractConfig, ExtractionError, extract_scrolling_content
from .model import ChatModel, Message, ModelError, ModelTurn, ToolCall, ToolSchema, collect_turn
from .model_functions import (
    ACTION_TOOLS,
    CATALOG_ACTIONS,
    POINT_FIELDS,
    SUBMIT_PLAN,
    Action,
    ActionError,
    PlannedStep,
    validate_action,
    validate_plan,
)
from .ports import Clock, ImageCodec, wall_clock_ms
from .progress import Listener, Listeners, ProgressReporter, ProgressSink
from .prompts import plan_messages, replan_history, screen_message, step_context, step_system
from .screen import Observation, observe, screen_changed
from .text_actions import parse_text_action

Sleep = Callable[[float], Awaitable[None]]
ModelSource = ChatModel | Callable[[], "ChatModel | None"] | None


@dataclass(frozen=True)
class AgentConfig:
    """Bounds and tuning of the agent; every loop has a limit here."""

    max_plan_steps: int = 10
    plan_attempts: int = 3  # model answers without a usable plan before the task fails
    max_actions_per_step: int = 15  # model turns per step, invalid ones included
    max_repeats: int = 3  # the same action leaving the screen unchanged this many times fails the step
    max_replans: int = 2
    image_max_side: int = 1024
    image_mime: str = "image/jpeg"
    image_quality: float = 0.8
    settle_ms: int = 500  # after an action, before the next screenshot
    model_retries: int = 1  # for retryable model failures (429, 5xx, a stalled stream)
    retry_delay_ms: int = 1_000
    stop_grace_ms: int = 1_000  # how long a cancelled run may take to unwind
    keep_screenshots: bool = True  # before/after per step, as data URLs of the model's image
    with_current_app: bool = True
    with_ui_tree: bool = True  # uiautomator dump: 1–3 s per look on some real phones
    # Coordinates in text actions (UI-TARS, AutoGLM): "normalized" 0–1000 of the image, or "pixels"
    # of the image (some UI-TARS builds answer in the pixels of the image they were sent).
    text_coordinates: str = "normalized"
    extract: ExtractConfig = field(default_factory=ExtractConfig)


class _TaskFailure(Exception):
    """Ends the task as failed with this message."""


@dataclass
class _StepOutcome:
    task_done: bool = False
    conclusion: str | None = None
    # The screen as the step left it: nothing acts on the phone between two steps, so the next step
    # starts from it instead of a new screenshot (on a real phone one screencap and UI dump less).
    last_observation: Observation | None = None


# How a step ends: its status, and the error to record (None: the step's own, if any).
_StepEnd = tuple[StepStatus, str | None]


@dataclass
class _StepRun:
    """One running step and what its model turns carry from one to the next."""

    task: AgentTask
    step: AgentStep
    device: Device
    model: ChatModel
    reporter: ProgressReporter
    observation: Observation  # the screen as the model last saw it
    history: list[Message] = field(default_factory=list)
    note: str = ""  # said with the next screenshot
    last_action: tuple[str, str] | None = None  # (name, arguments) of the last device action
    repeats: int = 0  # how many times in a row that action left the screen unchanged
    outcome: _StepOutcome = field(default_factory=_StepOutcome)


@dataclass
class _ActionResult:
    """What running one action gave: for the model (``ok``, ``result``), the screen after it when
    the phone was looked at again, and the end of the step when the action ends it."""

    ok: bool
    result: str
    after: Observation | None = None
    ends: StepStatus | None = None


class PlanAndResolveAgent:
    """Runs one task at a time on a Device with a ChatModel; implements context.py's AgentRunner."""

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
        # The page's scrcpy view: looks come from its latest frame when fresh (looks.take_look), and
        # the task's report says which source its looks came from.
        self.live = live
        self._looks: LookTally | None = None
        self.codec = codec
        self.config = config or AgentConfig()
        self.clock = clock
        self.sleep = sleep
        self._listeners = Listeners()
        self._inner: asyncio.Future[None] | None = None
        self._abort_reason: str | None = None
        self._fail_reason: str | None = None

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
        self._looks = self._tally(task, reporter)
        inner = asyncio.ensure_future(self._drive(task, device, model, reporter))
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

    async def _drive(
        self, task: AgentTask, device: Device, model: ChatModel, reporter: ProgressReporter
    ) -> None:
        try:
            task.move_to(TaskStatus.PLANNING, self.clock())
            observation = await self._observe(device)
            planned = await self._plan(task, observation, model, reporter, "")
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
                outcome = await self._run_step(task, step, device, model, reporter, observation)
                observation = outcome.last_observation
                if outcome.task_done:
                    self._end(task, reporter, TaskStatus.FINISHED, conclusion=outcome.conclusion)
                    return
                if step.status is StepStatus.FAILED:
                    if replans >= self.config.max_replans:
                        raise _TaskFailure(f"Step {step.index} ({step.title}) failed: {step.error}")
                    replans += 1
                    skip_pending(task.steps[index:], self.clock())
                    observation = await self._observe(device, observation)
                    planned = await self._plan(task, observation, model, reporter, replan_history(task, step))
                    new_steps = self._add_steps(task, planned)
                    reporter.on_planned(new_steps, replanned=True)
            done = [s for s in task.steps if s.status is StepStatus.SUCCESS]
            self._end(task, reporter, TaskStatus.FINISHED, conclusion=done[-1].summary if done else None)
        except _TaskFailure as exc:
            self._end(task, reporter, TaskStatus.FAILED, error=str(exc))
        except ModelError as exc:
            self._end(task, reporter, TaskStatus.FAILED, error=f"Model error: {exc}")
        except DeviceError as exc:
            self._end(task, reporter, TaskStatus.FAILED, error=f"The phone stopped answering: {exc.message}")
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # a bug must end the task with a reason, not leave it running
            traceback.print_exc()
            self._end(task, reporter, TaskStatus.FAILED, error=f"Internal error: {type(exc).__name__}: {exc}")

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

    async def _observe(self, device: Device, previous: Observation | None = None) -> Observation:
        """The screen now; ``previous`` is the last look, whose scaled image serves again if nothing moved."""
        config = self.config
        observation = await observe(
            device,
            self.codec,
            max_side=config.image_max_side,
            mime=config.image_mime,
            quality=config.image_quality,
            with_nodes=config.with_ui_tree,
            with_app=config.with_current_app,
            previous=previous,
            live=self.live,
        )
        if self._looks is not None:
            self._looks.add(observation.source, observation.source_reason)
        return observation

    def _tally(self, task: AgentTask, reporter: ProgressReporter) -> LookTally | None:
        """Counts the task's looks by source into ``task.screen_source`` (only when live frames are
        offered: elsewhere every look is a screenshot and the report stays as it was)."""
        if self.live is None:
            return None

        def keep(summary: str | None) -> None:
            task.screen_source = summary

        return LookTally(reporter.on_screen, keep)

    async def _ask(
        self,
        model: ChatModel,
        messages: list[Message],
        tools: list[ToolSchema],
        on_text: Callable[[str], None],
    ) -> ModelTurn:
        attempt = 0
        while True:
            try:
                return await collect_turn(model, messages, tools, on_text)
            except ModelError as exc:
                if not exc.retryable or attempt >= self.config.model_retries:
                    raise
                attempt += 1
                await self.sleep(self.config.retry_delay_ms / 1000)

    async def _plan(
        self,
        task: AgentTask,
        observation: Observation,
        model: ChatModel,
        reporter: ProgressReporter,
        history: str,
    ) -> list[PlannedStep]:
        messages = plan_messages(task, observation, self.config.max_plan_steps, history)
        problem = "no answer"
        for _ in range(self.config.plan_attempts):
            turn = await self._ask(model, messages, [SUBMIT_PLAN], reporter.on_step_text)
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
                    *_exchange(call, turn.text, f"Error: {problem}", 0, bool(turn.tool_calls)),
                ]
        raise _TaskFailure(
            f"The model gave no usable plan after {self.config.plan_attempts} tries: {problem}"
        )

    # -- one step ------------------------------------------------------------------------------------

    async def _run_step(
        self,
        task: AgentTask,
        step: AgentStep,
        device: Device,
        model: ChatModel,
        reporter: ProgressReporter,
        observation: Observation | None = None,
    ) -> _StepOutcome:
        """Run one step: model turns until the step ends or its action budget runs out;
        ``observation`` is the screen as it stands now, when already known."""
        step.move_to(StepStatus.RUNNING, self.clock())
        reporter.on_step_start(step)
        if observation is None:
            observation = await self._observe(device)
        if self.config.keep_screenshots:
            step.before_screenshot = observation.data_url()
        run = _StepRun(task, step, device, model, reporter, observation)
        budget = self.config.max_actions_per_step
        end: _StepEnd = (StepStatus.FAILED, f"the step did not finish within {budget} actions")
        for turn_number in range(budget):
            verdict = await self._take_turn(run, turn_number)
            if verdict is not None:
                end = verdict
                break
        self._end_step(run, *end)
        run.outcome.last_observation = run.observation
        return run.outcome

    def _end_step(self, run: _StepRun, status: StepStatus, error: str | None) -> None:
        step = run.step
        if error is not None:
            step.error = error
        step.move_to(status, self.clock())
        if self.config.keep_screenshots:
            step.after_screenshot = run.observation.data_url()
        run.reporter.on_step_end(step)

    async def _take_turn(self, run: _StepRun, turn_number: int) -> _StepEnd | None:
        """One model turn of the step: ask for an action, run it, record it; how the step ends, or None
        while it goes on."""
        messages = [
            step_system(run.observation),
            {"role": "user", "content": step_context(run.task, run.step)},
            *run.history,
            screen_message(run.observation, run.observation.current_app, run.note),
        ]
        run.note = ""
        turn = await self._ask(run.model, messages, ACTION_TOOLS, run.reporter.on_step_text)
        call = turn.tool_calls[0] if turn.tool_calls else self._text_action(turn.text)
        if call is None:
            self._no_tool_called(run, turn)
            return None
        run.reporter.on_tool_call(call.name, call.arguments)
        started = self.clock()
        mapping = run.observation.mapping
        action: Action | None = None
        try:
            action = validate_action(call, mapping.image_width, mapping.image_height)
        except ActionError as exc:
            done = _ActionResult(False, f"Error: {exc}")
        else:
            done = await self._act(action, run)
        args = action.args if action is not None else call.arguments
        self._record_call(run, turn, call, args, done, self.clock() - started, turn_number)
        if done.after is not None:
            run.observation = done.after
        if done.ends is not None:
            return done.ends, None
        if run.repeats >= self.config.max_repeats:
            repeated = f"{call.name} was repeated {run.repeats} times without changing the screen"
            return StepStatus.FAILED, repeated
        return None

    def _no_tool_called(self, run: _StepRun, turn: ModelTurn) -> None:
        message = "Error: you answered without calling a tool. Call exactly one tool."
        run.step.tool_calls.append(ToolCallRecord("(no tool)", {}, message, 0, ok=False))
        run.reporter.on_tool_result("(no tool)", message, ok=False)
        run.history += [
            {"role": "assistant", "content": turn.text or ""},
            {"role": "user", "content": message},
        ]

    def _record_call(
        self,
        run: _StepRun,
        turn: ModelTurn,
        call: ToolCall,
        args: dict[str, Any],
        done: _ActionResult,
        duration: int,
        turn_number: int,
    ) -> None:
        """The action in the step's record, the panel and the chat history (calls beyond the first one
        of a turn are answered as not run)."""
        run.step.tool_calls.append(ToolCallRecord(call.name, args, done.result, duration, done.ok))
        run.reporter.on_tool_result(call.name, done.result, done.ok)
        run.history += _exchange(call, turn.text, done.result, turn_number, bool(turn.tool_calls))
        for extra in turn.tool_calls[1:]:
            if extra.id:
                run.history.append(
                    {"role": "tool", "tool_call_id": extra.id, "content": "Not run: one action per answer."}
                )

    async def _act(self, action: Action, run: _StepRun) -> _ActionResult:
        """Run a validated action: the step's own actions by name, any other on the phone."""
        handlers = {
            "finish_step": self._finish_step,
            "fail_step": self._fail_step,
            "finish_task": self._finish_task,
            "extract_scrolling_content": self._extract,
        }
        return await handlers.get(action.name, self._device_action)(action, run)

    async def _finish_step(self, action: Action, run: _StepRun) -> _ActionResult:
        run.step.summary = action.args["summary"]
        return _ActionResult(True, "Step finished.", ends=StepStatus.SUCCESS)

    async def _fail_step(self, action: Action, run: _StepRun) -> _ActionResult:
        run.step.error = action.args["reason"]
        return _ActionResult(False, f"Step failed: {run.step.error}", ends=StepStatus.FAILED)

    async def _finish_task(self, action: Action, run: _StepRun) -> _ActionResult:
        run.step.summary = action.args["conclusion"]
        run.outcome = _StepOutcome(True, action.args["conclusion"])
        return _ActionResult(True, "Task finished.", ends=StepStatus.SUCCESS)

    async def _extract(self, action: Action, run: _StepRun) -> _ActionResult:
        """Scroll and extract; a success ends the task with the extraction as its conclusion."""
        try:
            extraction = await extract_scrolling_content(
                run.device,
                self.codec,
                run.model,
                action.args["instruction"],
                run.task.goal,
                self.config.extract,
                None,  # the extraction arrives as the tool result; no 💭 copy of it
                self.sleep,
            )
        except ExtractionError as exc:
            after = await self._observe(run.device, run.observation)  # it may have scrolled
            return _ActionResult(False, f"Error: {exc}", after)
        run.step.summary = extraction.summary
        run.outcome = _StepOutcome(True, extraction.summary)
        result = f"Extracted ({extraction.describe()}): {extraction.summary}"
        return _ActionResult(True, result, ends=StepStatus.SUCCESS)

    async def _device_action(self, action: Action, run: _StepRun) -> _ActionResult:
        """Act on the phone, let it settle, look again; counts the same action repeated on a screen
        that does not change."""
        ok, result = await self._execute(run.device, action, run.observation)
        if self.config.settle_ms:
            await self.sleep(self.config.settle_ms / 1000)
        after = await self._observe(run.device, run.observation)
        changed = screen_changed(run.observation.thumb, after.thumb)
        signature = (action.name, json.dumps(action.args, sort_keys=True))
        if ok and not changed:
            result += " (the screen did not change)"
            run.note = "Your last action did not change the screen: do not repeat it unchanged."
            run.repeats = run.repeats + 1 if signature == run.last_action else 1
        else:
            run.repeats = 0
        run.last_action = signature
        return _ActionResult(ok, result, after)

    def _text_action(self, text: str) -> ToolCall | None:
        call = parse_text_action(text)
        if call is not None and call.normalized and self.config.text_coordinates == "pixels":
            call = dataclasses.replace(call, normalized=False)
        return call

    async def _execute(self, device: Device, action: Action, observation: Observation) -> tuple[bool, str]:
        """Run a device action through its catalog entry (the same handler the tools run), with the
        model's screenshot pixels turned into device pixels and its refs taken from the screen it saw.
        A refusal goes back to the model; a phone that stopped answering raises."""
        args = dict(action.args)
        if action.name == "wait":
            await self.sleep(args["ms"] / 1000)
            return True, f"waited {args['ms']} ms"
        spec = CATALOG_ACTIONS.get(action.name)
        if spec is None or spec.run is None:
            raise AssertionError(f"not a device action: {action.name}")
        mapping = observation.mapping
        for x_name, y_name in POINT_FIELDS:
            if x_name in args:
                args[x_name], args[y_name] = mapping.to_device(args[x_name], args[y_name])
        if "distance" in args:
            scale = max(
                mapping.device_width / mapping.image_width, mapping.device_height / mapping.image_height
            )
            args["distance"] = max(1, round(args["distance"] * scale))
        state = SessionState(
            snapshot=observation.snapshot, screen_size=(mapping.device_width, mapping.device_height)
        )
        phone = DeviceSession(device, state, sleep=self.sleep, verify_refs=False)
        try:
            call = CallEnv(Channel.AGENT, device_session=phone)
            result = await spec.run(call, validate_arguments(spec, args))
        except ToolError as exc:
            if exc.code is ErrorCode.NO_DEVICE:
                raise
            if isinstance(exc, DeviceError):
                # A refused action (an unknown package, text the keyboard cannot type) is the model's
                # to handle; a phone that no longer answers ends the task (this raises).
                await device.screenshot_png()
                return False, f"Error: the phone refused: {exc.message}"
            return False, f"Error: {exc.message} {exc.remedy}".strip()
        return True, result["content"][0]["text"]


def _exchange(call: ToolCall, text: str, result: str, number: int, native: bool) -> list[Message]:
    """The assistant's call and its result as chat history: a tool message for a function call, a
    user message for an action the model wrote as text."""
    if not native:
        return [
            {"role": "assistant", "content": text},
            {"role": "user", "content": f"Result of {call.name}: {result}"},
        ]
    call_id = call.id or f"call_{number}"
    return [
        {
            "role": "assistant",
            "content": text or None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": call.raw_arguments or "{}"},
                }
            ],
        },
        {"role": "tool", "tool_call_id": call_id, "content": result},
    ]
