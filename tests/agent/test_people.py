"""People in the loop, in CPython: the agent hands the phone over (Done, Cancel, nobody in time), asks
before sensitive actions (allowed, refused, unanswered), types secrets by name, and reaches the same
goals the ReAct way as the Plan-and-Resolve way. A scripted person answers; the phone's state says
what happened."""

from __future__ import annotations

import asyncio
import json

from phone_agent.agent.people import DONE, NO, YES, AgentSettings, sensitive_kind
from phone_agent.agent.task_runner import WAYS
from phone_agent.tasks import AGENT_MODES, DEFAULT_AGENT_MODE, AgentTask, StepStatus, TaskOptions, TaskStatus
from phone_agent.tools.catalog import TOOLS
from phone_agent.tools.named_secrets import SecretBook
from tests.agent.model_server import Reply, call, plan, tap_on, wifi_script

USERNAME = "id=com.phoneagent.login:id/username"
PASSWORD = "id=com.phoneagent.login:id/password"


class ScriptedPerson:
    """Answers take overs and confirmations from a script (None: never answers); records what it saw."""

    def __init__(self, *, take_over: str | None = DONE, confirm: str | None = YES, act=None) -> None:
        self.take_over_answer, self.confirm_answer, self.act = take_over, confirm, act
        self.asked: list[tuple[str, str]] = []

    async def take_over(self, reason: str) -> str:
        self.asked.append(("take_over", reason))
        if self.take_over_answer is None:
            await asyncio.Event().wait()
        if self.act is not None:
            self.act()
        return self.take_over_answer

    async def confirm(self, action: str) -> str:
        self.asked.append(("confirm", action))
        if self.confirm_answer is None:
            await asyncio.Event().wait()
        return self.confirm_answer


def new_task(goal: str, **options) -> AgentTask:
    return AgentTask(id="task-1", goal=goal, created_at=0, options=TaskOptions(**options))


def sign_in_by_person(device):
    def act() -> None:
        phone = device.phone
        phone.drafts["com.phoneagent.login:id/username"] = "mobium"
        phone.drafts["com.phoneagent.login:id/password"] = "hunter2"
        phone._act("sign_in")

    return act


def take_over_script() -> list:
    return [
        plan("Sign in"),
        call("open_app", packageName="com.phoneagent.login"),
        call("take_over", "I have no password: the person signs in.", reason="Sign in to Login Demo"),
        call("finish_task", conclusion="Signed in"),
    ]


async def test_take_over_done_the_agent_looks_again_and_goes_on(agent, device, model_server):
    person = ScriptedPerson(act=sign_in_by_person(device))
    agent.person = person
    lines: list[str] = []
    model_server.add(*take_over_script())
    task = await agent.run(new_task("Sign in to Login Demo"), device, 30_000, lines.append)
    assert task.status is TaskStatus.FINISHED, task.error
    assert person.asked == [("take_over", "Sign in to Login Demo")]
    assert "Waiting for you: Sign in to Login Demo" in lines
    assert device.phone.state()["screen"] == "login/welcome"
    # The model's next look is the screen the person left.
    assert "Welcome, mobium" in json.dumps(model_server.requests[-1])


async def test_take_over_cancelled_or_unanswered_ends_the_task_aborted(agent, device, model_server):
    agent.person = ScriptedPerson(take_over="cancel")
    model_server.add(*take_over_script())
    task = await agent.run(new_task("Sign in"), device, 30_000, None)
    assert task.status is TaskStatus.ABORTED
    assert task.error == "The person cancelled: Sign in to Login Demo"

    agent.person = ScriptedPerson(take_over=None)
    model_server.add(*take_over_script())
    task = await agent.run(new_task("Sign in", takeover_timeout_ms=1_000), device, 30_000, None)
    assert task.status is TaskStatus.ABORTED and task.error == "Nobody took over within 1 s"


def send_script(sensitive: bool = False) -> list:
    send = tap_on("Send SMS")
    if sensitive:
        send = call("tap", "I send it.", target="desc=Send SMS", sensitive=True)
    return [
        plan("Send the message"),
        call("open_app", packageName="com.google.android.apps.messaging"),
        tap_on("Zhang San"),
        call("type_text", text="see you tomorrow", target="id=compose_message_text"),
        send,
        call("finish_task", conclusion="Sent"),
    ]


async def test_a_sensitive_action_confirmed_refused_and_unanswered(agent, device, model_server):
    person = ScriptedPerson(confirm=YES)
    agent.person = person
    model_server.add(*send_script())
    task = await agent.run(new_task('Send "see you tomorrow" to Zhang San'), device, 30_000, None)
    assert task.status is TaskStatus.FINISHED, task.error
    assert device.phone.state()["sent"] == [{"to": "Zhang San", "text": "see you tomorrow"}]
    assert [kind for kind, _ in person.asked] == ["confirm"] and "sending a message" in person.asked[0][1]

    for answer, options, error in (
        (NO, {}, "Not confirmed: the person refused"),
        (None, {"confirm_timeout_ms": 1_000}, "Not confirmed: nobody answered within 1 s"),
    ):
        device.phone.reset()
        agent.person = ScriptedPerson(confirm=answer)
        model_server.add(
            *send_script(sensitive=True)[:-1], plan("Give up"), call("finish_task", conclusion="Not sent")
        )
        task = await agent.run(new_task("Send it", **options), device, 30_000, None)
        assert device.phone.state()["sent"] == []
        assert task.steps[0].status is StepStatus.FAILED and task.steps[0].error == error
        assert task.steps[0].tool_calls[-1].result == error


class CallerLink:
    """A relayed call's progress sink that can ask the caller (the relay client's CallLink, scripted):
    answers from ``answers`` in turn (None: cannot answer; "never": waits until withdrawn)."""

    def __init__(self, *answers: str | None) -> None:
        self.answers = list(answers)
        self.lines: list[str] = []
        self.asked: list[tuple[str, str]] = []
        self.withdrawn = 0

    def __call__(self, line: str) -> None:
        self.lines.append(line)

    async def ask(self, kind: str, message: str) -> str | None:
        self.asked.append((kind, message))
        answer = self.answers.pop(0)
        if answer == "never":
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                self.withdrawn += 1
                raise
        return answer


async def test_the_caller_is_asked_too_and_the_first_answer_wins(agent, device, model_server):
    # The caller answers the take over (the person at the page never does: their wait is withdrawn).
    agent.person = ScriptedPerson(take_over=None)
    link = CallerLink(DONE)
    model_server.add(*take_over_script())
    task = await agent.run(new_task("Sign in"), device, 30_000, link)
    assert task.status is TaskStatus.FINISHED, task.error
    assert link.asked[0][0] == "takeover" and "Sign in to Login Demo" in link.asked[0][1]
    assert "Waiting for you: Sign in to Login Demo" in link.lines

    # The caller refuses a sensitive action: the person's No.
    agent.person = ScriptedPerson(confirm=None)
    link = CallerLink(NO)
    model_server.add(*send_script()[:-1], plan("Give up"), call("finish_task", conclusion="Not sent"))
    task = await agent.run(new_task("Send it"), device, 30_000, link)
    assert device.phone.state()["sent"] == []
    assert task.steps[0].error == "Not confirmed: the person refused"
    assert link.asked[0][0] == "confirm" and "sending a message" in link.asked[0][1]

    # A caller that cannot be asked (None) leaves the person at the page to answer; a caller that never
    # answers is withdrawn when the person at the page does.
    for caller in (CallerLink(None), CallerLink("never")):
        device.phone.reset()
        agent.person = person = ScriptedPerson(confirm=YES)
        model_server.add(*send_script())
        task = await agent.run(new_task("Send it"), device, 30_000, caller)
        assert task.status is TaskStatus.FINISHED, task.error
        assert device.phone.state()["sent"] == [{"to": "Zhang San", "text": "see you tomorrow"}]
        assert [kind for kind, _ in person.asked] == ["confirm"] and len(caller.asked) == 1
    assert caller.withdrawn == 1

    # Nobody answers anywhere: the agent's bound still ends the wait, and withdraws the caller's question.
    device.phone.reset()
    agent.person = ScriptedPerson(take_over=None)
    link = CallerLink("never")
    model_server.add(*take_over_script())
    task = await agent.run(new_task("Sign in", takeover_timeout_ms=1_000), device, 30_000, link)
    assert task.status is TaskStatus.ABORTED and task.error == "Nobody took over within 1 s"
    assert link.withdrawn == 1


async def test_the_setting_turns_asking_off_and_reads_words():
    assert sensitive_kind("Send SMS") == "message" and sensitive_kind("Buy now") == "payment"
    assert sensitive_kind("Uninstall") == "install" and sensitive_kind("Allow") == "permissions"
    assert sensitive_kind("Sender settings") is None and sensitive_kind("Wi-Fi") is None
    off = AgentSettings.from_json({"mode": "react", "ask": {"message": False}})
    assert off.mode == "react" and "message" not in off.ask and "payment" in off.ask
    assert AgentSettings.from_json(None) == AgentSettings() and AgentSettings().ask == frozenset(
        {"message", "payment", "delete", "install", "permissions"}
    )


def test_every_way_of_the_agent_runs_and_the_tool_and_the_setting_offer_each() -> None:
    assert set(WAYS) == set(AGENT_MODES)
    assert AgentSettings().mode == DEFAULT_AGENT_MODE == next(iter(AGENT_MODES))
    mode_argument = next(t for t in TOOLS if t.name == "run_agent_task").input_schema["properties"]["mode"]
    assert mode_argument["enum"] == list(AGENT_MODES)
    for mode in AGENT_MODES.values():
        assert f'"{mode.name}" ({mode.title}: {mode.summary}' in mode_argument["description"]
        assert AgentSettings.from_json({"mode": mode.name}).mode == mode.name
    assert AgentSettings.from_json({"mode": "telepathy"}).mode == DEFAULT_AGENT_MODE


async def test_the_agent_types_a_secret_by_name_and_never_sees_it(agent, device, model_server):
    book = SecretBook()
    book.set_page({"DEMO_PASSWORD": "hunter2"})
    agent.secrets = book
    model_server.add(
        plan("Sign in"),
        call("open_app", packageName="com.phoneagent.login"),
        call("type_text", text="mobium", target=USERNAME),
        Reply("tool", name="type_secret", args={"name": "DEMO_PASSWORD", "target": PASSWORD, "submit": True}),
        call("finish_task", conclusion="Signed in"),
    )
    task = await agent.run(new_task("Sign in as mobium using the secret DEMO_PASSWORD"), device, 30_000, None)
    assert task.status is TaskStatus.FINISHED, task.error
    assert device.phone.state()["screen"] == "login/welcome"
    requests = json.dumps(model_server.requests)
    assert "DEMO_PASSWORD" in requests and "hunter2" not in requests
    assert "hunter2" not in json.dumps(task.to_json())


async def test_react_reaches_the_goals_plan_and_resolve_reaches(agent, device, model_server):
    device.phone.set_wifi(False)
    model_server.add(*wifi_script("Settings is on the home screen."))
    planned = await agent.run(new_task("Turn Wi-Fi on"), device, 30_000, None)
    assert planned.status is TaskStatus.FINISHED and device.phone.state()["wifi"] is True

    device.phone.reset()
    device.phone.set_wifi(False)
    model_server.requests.clear()
    model_server.add(
        tap_on("Settings", "Settings first."),
        tap_on("Network & internet"),
        tap_on("Wi-Fi"),
        call("finish_task", conclusion="Wi-Fi is on"),
    )
    lines: list[str] = []
    task = await agent.run(new_task("Turn Wi-Fi on", mode="react"), device, 30_000, lines.append)
    assert task.status is TaskStatus.FINISHED, task.error
    assert task.conclusion == "Wi-Fi is on" and device.phone.state()["wifi"] is True
    assert [step.status for step in task.steps] == [StepStatus.SUCCESS] * 4
    assert [step.tool_calls[0].name for step in task.steps] == ["tap", "tap", "tap", "finish_task"]
    assert all("submit_plan" not in json.dumps(r.get("tools")) for r in model_server.requests)
    assert any(line.startswith("▶️ Step 1: tap") for line in lines)

    model_server.add(call("give_up", reason="No such app"))
    gave_up = await agent.run(new_task("Open the Moon app", mode="react"), device, 30_000, None)
    assert gave_up.status is TaskStatus.FAILED and gave_up.error == "The agent gave up: No such app"


async def test_a_secret_typed_into_a_plain_field_never_reaches_the_model(agent, device, model_server):
    book = SecretBook()
    book.set_page({"DEMO_USER": "mobium", "DEMO_PASSWORD": "hunter2"})
    agent.secrets = book
    model_server.add(
        plan("Sign in"),
        call("open_app", packageName="com.phoneagent.login"),
        Reply("tool", name="type_secret", args={"name": "DEMO_USER", "target": USERNAME}),
        Reply("tool", name="type_secret", args={"name": "DEMO_PASSWORD", "target": PASSWORD, "submit": True}),
        call("finish_task", conclusion="Signed in"),
    )
    task = await agent.run(new_task("Sign in using DEMO_USER and DEMO_PASSWORD"), device, 30_000, None)
    assert task.status is TaskStatus.FINISHED, task.error
    assert device.phone.state()["screen"] == "login/welcome"
    requests = json.dumps(model_server.requests, ensure_ascii=False)
    assert "mobium" not in requests and "hunter2" not in requests
    assert "${secret:DEMO_USER}" in requests  # the field showed it: the model reads the name instead
