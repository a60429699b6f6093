"""The step's resolution: ``StepResolver`` runs one step of a plan as model turns — look at the
screen, ask the model for one action, run it (a device action through its tools/ catalog entry), look
again to verify — until the step ends; it also gives planning its looks and model turns.

A step goes pending → running → success | failed through tasks.py's state tables. Each turn is
screenshot → one model action → the device runs it → a ``ToolCallRecord``, until the model finishes
or fails the step, the step's action budget runs out, or the same action keeps leaving the screen
unchanged. ``finish_task`` and a successful scroll extraction end the task with their conclusion.
The task around the steps (plan, replan, time limit, abort, the report) is task_runner.py's.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..device.interface import Device, settle_screen
from ..errors import DeviceError, ErrorCode, ToolError
from ..flows.recorder import selector_for, selector_locator
from ..flows.selectors import UiScreen
from ..tasks import AgentStep, AgentTask, StepStatus, ToolCallRecord
from ..tools.pipeline.bare import bare_pipeline
from ..tools.pipeline.call import Call, Caller
from ..tools.pipeline.chain import pipeline_here
from ..tools.screen_source import LiveScreen, LookTally
from ..tools.session import DeviceSession, SessionState
from ..tools.spec import Channel
from .config import AgentConfig
from .extract import ExtractionError, extract_scrolling_content
from .model import ChatModel, Message, ModelError, ModelTurn, ToolCall, ToolSchema, collect_turn
from .model_functions import ACTION_TOOLS, CATALOG_ACTIONS, POINT_FIELDS, Action, ActionError, validate_action
from .people import (
    ASK_KINDS,
    DONE,
    YES,
    AgentSettings,
    Person,
    TaskAborted,
    sensitive_kind,
    target_words,
)
from .ports import Clock, ImageCodec
from .progress import ProgressReporter
from .prompts import screen_message, step_context, step_system
from .screen import Observation, observe, screen_changed
from .text_actions import parse_text_action

Sleep = Callable[[float], Awaitable[None]]


@dataclass
class StepOutcome:
    """How a resolved step leaves the task."""

    task_done: bool = False
    conclusion: str | None = None
    # The screen as the step left it: nothing acts on the phone between two steps, so the next step
    # starts from it instead of a new screenshot (on a real phone one screencap and UI dump less).
    last_observation: Observation | None = None
    given_up: str | None = None  # ReAct's give_up: why the goal cannot be reached


# How a step ends: its status, and the error to record (None: the step's own, if any).
_StepEnd = tuple[StepStatus, str | None]


@dataclass
class StepRun:
    """One running step and what its model turns carry from one to the next."""

    step: AgentStep
    observation: Observation  # the screen as the model last saw it
    history: list[Message] = field(default_factory=list)
    note: str = ""  # said with the next screenshot
    last_action: tuple[str, str] | None = None  # (name, arguments) of the last device action
    repeats: int = 0  # how many times in a row that action left the screen unchanged
    outcome: StepOutcome = field(default_factory=StepOutcome)


@dataclass
class _ActionResult:
    """What running one action gave: for the model (``ok``, ``result``), the screen after it when
    the phone was looked at again, and the end of the step when the action ends it."""

    ok: bool
    result: str
    after: Observation | None = None
    ends: StepStatus | None = None
    target: str = ""  # what a tap-like action acted on (a locator) and where (device pixels)
    point: str = ""


class StepResolver:
    """Resolves the steps of one task on one device with one model, and looks and asks for its plans."""

    def __init__(
        self,
        task: AgentTask,
        device: Device,
        model: ChatModel,
        reporter: ProgressReporter,
        codec: ImageCodec,
        config: AgentConfig,
        *,
        clock: Clock,
        sleep: Sleep,
        live: LiveScreen | None = None,
        secrets: Any = None,
        person: Person | None = None,
        settings: AgentSettings | None = None,
    ) -> None:
        self.task = task
        # Whoever sits at the page (take over, confirm) and when the agent asks them (the Setting).
        self.person = person
        self.settings = settings or AgentSettings()
        # The page's SecretBook (tools/named_secrets.py): type_secret types from it by name.
        self.secrets = secrets
        self.device = device
        self.model = model
        self.reporter = reporter
        self.codec = codec
        self.config = config
        self.clock = clock
        self.sleep = sleep
        # The page's scrcpy view: looks come from its latest frame when fresh (screen_source.take_look).
        self.live = live
        self._looks = self._tally()

    # -- looking and asking (planning uses them too) ---------------------------------------------------

    async def look(self, previous: Observation | None = None) -> Observation:
        """The screen now; ``previous`` is the last look, whose scaled image serves again if nothing moved."""
        config = self.config
        observation = await observe(
            self.device,
            self.codec,
            max_side=config.image_max_side,
            mime=config.image_mime,
            quality=config.image_quality,
            with_nodes=config.with_ui_tree,
            with_app=config.with_current_app,
            previous=previous,
            live=self.live,
            redact_nodes=getattr(self.secrets, "redact_nodes", None),
        )
        if self._looks is not None:
            self._looks.add(observation.source, observation.source_reason)
        return observation

    def _tally(self) -> LookTally | None:
        """Counts the task's looks by source into ``task.screen_source`` (only when live frames are
        offered: elsewhere every look is a screenshot and the report stays as it was)."""
        if self.live is None:
            return None
        task = self.task

        def keep(summary: str | None) -> None:
            task.screen_source = summary

        return LookTally(self.reporter.on_screen, keep)

    def secret_names(self) -> list[str]:
        """The names of the secrets the model may type with type_secret (never their values)."""
        names = getattr(self.secrets, "names", None)
        return list(names()) if callable(names) else []

    async def ask(self, messages: list[Message], tools: list[ToolSchema]) -> ModelTurn:
        """One model turn (its text shown as it streams), retried on a retryable model failure."""
        redact = getattr(self.secrets, "redact", None)
        if callable(redact):  # a secret typed into a plain field shows in the screen's text: not to the model
            messages = [_redacted(message, redact) for message in messages]
        attempt = 0
        while True:
            try:
                return await collect_turn(self.model, messages, tools, self.reporter.on_step_text)
            except ModelError as exc:
                if not exc.retryable or attempt >= self.config.model_retries:
                    raise
                attempt += 1
                await self.sleep(self.config.retry_delay_ms / 1000)

    # -- one step ------------------------------------------------------------------------------------

    async def resolve(self, step: AgentStep, observation: Observation | None = None) -> StepOutcome:
        """Run one step: model turns until the step ends or its action budget runs out;
        ``observation`` is the screen as it stands now, when already known."""
        step.move_to(StepStatus.RUNNING, self.clock())
        self.reporter.on_step_start(step)
        if observation is None:
            observation = await self.look()
        if self.config.keep_screenshots:
            step.before_screenshot = observation.data_url()
        run = StepRun(step, observation)
        budget = self.config.max_actions_per_step
        end: _StepEnd = (StepStatus.FAILED, f"the step did not finish within {budget} actions")
        for turn_number in range(budget):
            verdict = await self._take_turn(run, turn_number)
            if verdict is not None:
                end = verdict
                break
        self.end_step(run, *end)
        run.outcome.last_observation = run.observation
        return run.outcome

    def end_step(self, run: StepRun, status: StepStatus, error: str | None) -> None:
        step = run.step
        if error is not None:
            step.error = error
        step.move_to(status, self.clock())
        if self.config.keep_screenshots:
            step.after_screenshot = run.observation.data_url()
        self.reporter.on_step_end(step)

    async def _take_turn(self, run: StepRun, turn_number: int) -> _StepEnd | None:
        """One model turn of the step: ask for an action, run it, record it; how the step ends, or None
        while it goes on."""
        messages = [
            step_system(run.observation),
            {"role": "user", "content": step_context(self.task, run.step, self.secret_names())},
            *run.history,
            screen_message(run.observation, run.observation.current_app, run.note),
        ]
        run.note = ""
        turn = await self.ask(messages, ACTION_TOOLS)
        return await self.play_turn(run, turn, turn_number)

    async def play_turn(self, run: StepRun, turn: ModelTurn, turn_number: int) -> _StepEnd | None:
        """Run the action of one model turn and record it (in the step, the panel and the history); how
        the step ends, or None while it goes on. ReAct (react.py) plays its turns through here too."""
        call = turn.tool_calls[0] if turn.tool_calls else self.text_action(turn.text)
        if call is None:
            self._no_tool_called(run, turn)
            return None
        self.reporter.on_tool_call(call.name, call.arguments)
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

    def _no_tool_called(self, run: StepRun, turn: ModelTurn) -> None:
        message = "Error: you answered without calling a tool. Call exactly one tool."
        run.step.tool_calls.append(ToolCallRecord("(no tool)", {}, message, 0, ok=False))
        self.reporter.on_tool_result("(no tool)", message, ok=False)
        run.history += [
            {"role": "assistant", "content": turn.text or ""},
            {"role": "user", "content": message},
        ]

    def _record_call(
        self,
        run: StepRun,
        turn: ModelTurn,
        call: ToolCall,
        args: dict[str, Any],
        done: _ActionResult,
        duration: int,
        turn_number: int,
    ) -> None:
        """The action in the step's record, the panel and the chat history (calls beyond the first one
        of a turn are answered as not run)."""
        run.step.tool_calls.append(
            ToolCallRecord(call.name, args, done.result, duration, done.ok, done.target, done.point)
        )
        self.reporter.on_tool_result(call.name, done.result, done.ok)
        run.history += exchange(call, turn.text, done.result, turn_number, bool(turn.tool_calls))
        for extra in turn.tool_calls[1:]:
            if extra.id:
                run.history.append(
                    {"role": "tool", "tool_call_id": extra.id, "content": "Not run: one action per answer."}
                )

    def text_action(self, text: str) -> ToolCall | None:
        call = parse_text_action(text)
        if call is not None and call.normalized and self.config.text_coordinates == "pixels":
            call = dataclasses.replace(call, normalized=False)
        return call

    # -- the actions ---------------------------------------------------------------------------------

    async def _act(self, action: Action, run: StepRun) -> _ActionResult:
        """Run a validated action: the step's own actions by name, any other on the phone."""
        handlers = {
            "finish_step": self._finish_step,
            "fail_step": self._fail_step,
            "finish_task": self._finish_task,
            "extract_scrolling_content": self._extract,
            "take_over": self._take_over,
            "give_up": self._give_up,
        }
        return await handlers.get(action.name, self._device_action)(action, run)

    async def _finish_step(self, action: Action, run: StepRun) -> _ActionResult:
        run.step.summary = action.args["summary"]
        return _ActionResult(True, "Step finished.", ends=StepStatus.SUCCESS)

    async def _fail_step(self, action: Action, run: StepRun) -> _ActionResult:
        run.step.error = action.args["reason"]
        return _ActionResult(False, f"Step failed: {run.step.error}", ends=StepStatus.FAILED)

    async def _give_up(self, action: Action, run: StepRun) -> _ActionResult:
        """ReAct's end without the goal: the task fails with the model's reason."""
        run.step.error = action.args["reason"]
        run.outcome = StepOutcome(given_up=action.args["reason"])
        return _ActionResult(False, f"Gave up: {run.step.error}", ends=StepStatus.FAILED)

    async def _finish_task(self, action: Action, run: StepRun) -> _ActionResult:
        run.step.summary = action.args["conclusion"]
        run.outcome = StepOutcome(True, action.args["conclusion"])
        return _ActionResult(True, "Task finished.", ends=StepStatus.SUCCESS)

    async def _extract(self, action: Action, run: StepRun) -> _ActionResult:
        """Scroll and extract; a success ends the task with the extraction as its conclusion."""
        try:
            extraction = await extract_scrolling_content(
                self.device,
                self.codec,
                self.model,
                action.args["instruction"],
                self.task.goal,
                self.config.extract,
                None,  # the extraction arrives as the tool result; no 💭 copy of it
                self.sleep,
            )
        except ExtractionError as exc:
            after = await self.look(run.observation)  # it may have scrolled
            return _ActionResult(False, f"Error: {exc}", after)
        run.step.summary = extraction.summary
        run.outcome = StepOutcome(True, extraction.summary)
        result = f"Extracted ({extraction.describe()}): {extraction.summary}"
        return _ActionResult(True, result, ends=StepStatus.SUCCESS)

    async def _take_over(self, action: Action, run: StepRun) -> _ActionResult:
        """Hand the phone to the person and wait (bounded) for Done: then look again and go on. Cancel,
        or no answer in time, ends the task aborted."""
        reason = action.args["reason"]
        if self.person is None:
            return _ActionResult(False, "Error: no person can take over here; go on yourself or fail.")
        limit_ms = self.task.options.takeover_timeout_ms
        self.reporter.on_person(f"Waiting for you: {reason}")
        try:
            answer = await asyncio.wait_for(self.person.take_over(reason), limit_ms / 1000)
        except TimeoutError:
            raise TaskAborted(f"Nobody took over within {round(limit_ms / 1000)} s") from None
        if answer != DONE:
            raise TaskAborted(f"The person cancelled: {reason}")
        self.reporter.on_person("The person is done; the agent looks again.")
        after = await self.look(run.observation)
        return _ActionResult(
            True, "The person took over and is done: look at the screen again and go on.", after
        )

    async def _confirmed(self, action: Action, args: dict[str, Any], observation: Observation) -> str | None:
        """Ask the person before a sensitive action (the model's flag, or the words of what it acts on,
        of a kind the Setting asks about); None when it may run unasked, "" when the person allowed
        it (the pipeline does not ask again), else why the step fails."""
        if self.person is None or not self.settings.ask:
            return None
        words = target_words(args, observation.snapshot)
        kind = sensitive_kind(words) if action.name in ("tap", "long_press", "type_text") else None
        if kind is not None and kind not in self.settings.ask:
            kind = None
        if kind is None and not action.sensitive:
            return None
        what = f"{action.name} {words or json.dumps(action.args, ensure_ascii=False)}".strip()
        about = ASK_KINDS[kind] if kind else "marked sensitive by the agent"
        question = f"{what} ({about})"
        limit_ms = self.task.options.confirm_timeout_ms
        self.reporter.on_person(f"Waiting for you: allow {question}?")
        try:
            answer = await asyncio.wait_for(self.person.confirm(question), limit_ms / 1000)
        except TimeoutError:
            return f"Not confirmed: nobody answered within {round(limit_ms / 1000)} s"
        if answer != YES:
            return "Not confirmed: the person refused"
        self.reporter.on_person(f"Allowed: {question}")
        return ""

    async def _device_action(self, action: Action, run: StepRun) -> _ActionResult:
        """Act on the phone, let it settle, look again; counts the same action repeated on a screen
        that does not change."""
        target, point = acted_on(action, run.observation)
        refused = None
        if action.name != "wait":
            refused = await self._confirmed(
                action, self._device_args(action, run.observation), run.observation
            )
            if refused:
                run.step.error = refused
                return _ActionResult(False, refused, ends=StepStatus.FAILED)
        ok, result = await self._execute(action, run.observation, confirmed=refused == "")
        if self.config.settle_ms:  # the screen settled (bounded), not a fixed sleep
            await settle_screen(self.device, self.config.settle_ms)
        after = await self.look(run.observation)
        changed = screen_changed(run.observation.thumb, after.thumb)
        signature = (action.name, json.dumps(action.args, sort_keys=True))
        if ok and not changed:
            result += " (the screen did not change)"
            run.note = "Your last action did not change the screen: do not repeat it unchanged."
            run.repeats = run.repeats + 1 if signature == run.last_action else 1
        else:
            run.repeats = 0
        run.last_action = signature
        return _ActionResult(ok, result, after, target=target, point=point)

    @staticmethod
    def _device_args(action: Action, observation: Observation) -> dict[str, Any]:
        """The action's arguments as the device tools take them: screenshot pixels turned into device
        pixels (points and distances)."""
        args = dict(action.args)
        mapping = observation.mapping
        for x_name, y_name in POINT_FIELDS:
            if x_name in args:
                args[x_name], args[y_name] = mapping.to_device(args[x_name], args[y_name])
        if "distance" in args:
            scale = max(
                mapping.device_width / mapping.image_width, mapping.device_height / mapping.image_height
            )
            args["distance"] = max(1, round(args["distance"] * scale))
        return args

    async def _execute(
        self, action: Action, observation: Observation, *, confirmed: bool = False
    ) -> tuple[bool, str]:
        """Run a device action as a call of the agent's (the pipeline every tool call takes: the
        activity log shows it under the task's run_agent_task; the catalog entry's own handler runs),
        with the model's screenshot pixels turned into device pixels and its refs taken from the screen
        it saw. ``confirmed``: the person already allowed it. A refusal goes back to the model; a phone
        that stopped answering raises."""
        args = dict(action.args)
        if action.name == "wait":
            await self.sleep(args["ms"] / 1000)
            return True, f"waited {args['ms']} ms"
        if action.name not in CATALOG_ACTIONS:
            raise AssertionError(f"not a device action: {action.name}")
        mapping = observation.mapping
        args = self._device_args(action, observation)
        state = SessionState(
            snapshot=observation.snapshot, screen_size=(mapping.device_width, mapping.device_height)
        )
        phone = DeviceSession(self.device, state, sleep=self.sleep, verify_refs=False)
        call = Call(
            action.name,
            args,
            Channel.AGENT,
            Caller.AGENT,
            session=phone,
            confirmed=confirmed,
            secrets=self.secrets,
        )
        try:
            result = await pipeline_here(_BARE).run_nested(call)
        except ToolError as exc:
            if exc.code is ErrorCode.NO_DEVICE:
                raise
            if isinstance(exc, DeviceError):
                # A refused action (an unknown package, text the keyboard cannot type) is the model's
                # to handle; a phone that no longer answers ends the task (this raises).
                await self.device.screenshot_png()
                return False, f"Error: the phone refused: {exc.message}"
            return False, f"Error: {exc.message} {exc.remedy}".strip()
        return True, result["content"][0]["text"]


# Where the agent's actions run when no page's pipeline runs the agent (the agent driven directly).
_BARE = bare_pipeline(CATALOG_ACTIONS)


def acted_on(action: Action, observation: Observation) -> tuple[str, str]:
    """What a tap-like action acts on, on the screen the agent saw: the element as a locator a flow can
    name it by (found by identity: its node, named as the recorder names it — a row by the label
    inside it) and the point in device pixels; ("", "") for other actions."""
    if action.name not in ("tap", "long_press", "type_text"):
        return "", ""
    args, snapshot = action.args, observation.snapshot
    element, point = None, ""
    target = args.get("target")
    if isinstance(target, str) and target.startswith("@") and snapshot is not None:
        element = snapshot.by_ref.get(target)
    elif isinstance(target, str):
        return target, ""
    elif "x" in args and "y" in args:
        x, y = observation.mapping.to_device(args["x"], args["y"])
        point = f"{x},{y}"
        found = [
            e for e in (snapshot.elements if snapshot is not None else [])
            if e.bounds.contains(x, y) and (e.text or e.desc or e.resource_id)
        ]  # fmt: skip
        element = min(found, key=lambda e: e.bounds.width * e.bounds.height) if found else None
    if element is None or snapshot is None:
        return "", point
    if element.node is not None and snapshot.nodes:
        selector = selector_for(element.node, UiScreen(snapshot.nodes, snapshot.width, snapshot.height))
        named = selector_locator(selector) if selector is not None else ""
        if named:
            return named, point
    if element.text:
        return f"text={element.text}", point
    if element.desc or element.resource_id:
        return (f"desc={element.desc}" if element.desc else f"id={element.resource_id}"), point
    return "", point


def _redacted(message: Message, redact: Callable[[str], str]) -> Message:
    """The message with its text (never its images) passed through ``redact``."""
    content = message.get("content")
    if isinstance(content, str):
        return {**message, "content": redact(content)}
    if isinstance(content, list):
        parts = [
            {**part, "text": redact(part["text"])} if part.get("type") == "text" and "text" in part else part
            for part in content
        ]
        return {**message, "content": parts}
    return message


def exchange(call: ToolCall, text: str, result: str, number: int, native: bool) -> list[Message]:
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
