"""type_secret through the one dispatch, on the simulated phone's Login Demo: the value goes to the
phone's keyboard and nowhere else (answer, activity record, errors); unknown names list the known ones;
the server's secrets are fetched by name only when typed."""

from __future__ import annotations

import json

from phone_agent.tools.dispatch import CallRecord, ToolDispatcher
from phone_agent.tools.named_secrets import SecretBook, placeholder, secrets_from_environ
from phone_agent.tools.spec import Channel
from tests.agent.sim_device import SimDevice

USERNAME = "id=com.phoneagent.login:id/username"
PASSWORD = "id=com.phoneagent.login:id/password"
VALUE = "hunter2"


def demo_book() -> tuple[SecretBook, list[str]]:
    """A page that holds the Login Demo's password, and the values it has typed (none yet)."""
    book = SecretBook()
    book.set_page({"DEMO_PASSWORD": VALUE})
    typed: list[str] = []
    book.on_typed(typed.append)
    return book, typed


def rig(book: SecretBook) -> tuple[ToolDispatcher, SimDevice, list[CallRecord]]:
    context = ToolDispatcher()
    device = SimDevice()
    context.device = device
    context.secrets = book
    records: list[CallRecord] = []
    context.add_call_listener(records.append)
    device.phone.launch("com.phoneagent.login")
    return context, device, records


async def test_the_demo_signs_in_with_a_page_secret_and_the_value_is_nowhere(caplog):
    book, typed = demo_book()
    context, device, records = rig(book)
    user = await context.dispatch("type_text", {"text": "mobium", "target": USERNAME}, Channel.RELAY)
    assert not user.get("isError"), user
    answer = await context.dispatch(
        "type_secret", {"name": "DEMO_PASSWORD", "target": PASSWORD, "submit": True}, Channel.RELAY
    )
    assert not answer.get("isError"), answer
    assert answer["structuredContent"]["secret"] == "DEMO_PASSWORD"
    assert answer["structuredContent"]["submitted"] is True
    assert "the secret DEMO_PASSWORD" in answer["content"][0]["text"]
    assert device.phone.state()["screen"] == "login/welcome"
    elements = await context.dispatch("list_elements", {}, Channel.RELAY)
    assert "Welcome, mobium" in elements["content"][0]["text"]
    everything = json.dumps([answer, elements, [r.result for r in records]]) + repr(book) + caplog.text
    assert VALUE not in everything
    assert typed == ["DEMO_PASSWORD"]
    assert placeholder("DEMO_PASSWORD") == "${secret:DEMO_PASSWORD}"


async def test_spaces_and_shell_characters_are_typed_as_they_are(caplog):
    book = SecretBook()
    book.set_page({"PIN": "p@ss w0rd & $x;"})
    context, device, _ = rig(book)
    answer = await context.dispatch("type_secret", {"name": "PIN", "target": USERNAME}, Channel.WEBMCP)
    assert not answer.get("isError"), answer
    assert device.phone.state()["drafts"]["com.phoneagent.login:id/username"] == "p@ss w0rd & $x;"
    assert "w0rd" not in json.dumps(answer)


async def test_an_unknown_name_is_invalid_argument_listing_the_known_names():
    book = SecretBook()
    book.set_page({"DEMO_PASSWORD": VALUE, "OTP": "123456"})
    book.set_server_names(["SERVER_TOKEN"])
    context, _, _ = rig(book)
    answer = await context.dispatch("type_secret", {"name": "NOPE"}, Channel.RELAY)
    assert answer["isError"] is True
    error = answer["structuredContent"]
    assert error["code"] == "invalid_argument"
    assert error["details"]["known"] == ["DEMO_PASSWORD", "OTP", "SERVER_TOKEN"]
    assert "DEMO_PASSWORD, OTP, SERVER_TOKEN" in error["remedy"]
    assert VALUE not in json.dumps(answer) and "123456" not in json.dumps(answer)
    none = await rig(SecretBook())[0].dispatch("type_secret", {"name": "X"}, Channel.RELAY)
    assert "PHONE_AGENT_SECRET_" in none["structuredContent"]["remedy"]


async def test_a_server_secret_is_asked_for_by_name_only_when_typed():
    asked: list[str] = []

    async def fetch(name: str) -> str | None:
        asked.append(name)
        return {"DEMO_PASSWORD": VALUE}.get(name)

    book = SecretBook()
    book.set_server_names(["DEMO_PASSWORD", "GONE"])
    book.fetch_server = fetch
    assert book.names() == ["DEMO_PASSWORD", "GONE"] and asked == []
    context, device, _ = rig(book)
    await context.dispatch("type_text", {"text": "mobium", "target": USERNAME}, Channel.RELAY)
    answer = await context.dispatch(
        "type_secret", {"name": "DEMO_PASSWORD", "target": PASSWORD, "submit": True}, Channel.RELAY
    )
    assert not answer.get("isError") and asked == ["DEMO_PASSWORD"]
    assert device.phone.state()["screen"] == "login/welcome"
    gone = await context.dispatch("type_secret", {"name": "GONE"}, Channel.RELAY)
    assert (
        gone["structuredContent"]["code"] == "browser_not_connected"
        and gone["structuredContent"]["retryable"]
    )


def test_the_server_reads_its_secrets_from_the_environment():
    found = secrets_from_environ(
        {
            "PHONE_AGENT_SECRET_DEMO_PASSWORD": VALUE,
            "PHONE_AGENT_SECRET_": "x",
            "PHONE_AGENT_SECRET_BAD-NAME": "y",
            "PHONE_AGENT_SECRET_EMPTY": "",
            "OTHER": "z",
        }
    )
    assert found == {"DEMO_PASSWORD": VALUE}


async def test_a_secret_typed_into_a_plain_field_is_never_read_back():
    book = SecretBook()
    book.set_page({"ONE_TIME_CODE": "842913"})
    context, device, records = rig(book)
    answer = await context.dispatch(
        "type_secret", {"name": "ONE_TIME_CODE", "target": USERNAME}, Channel.RELAY
    )
    assert not answer.get("isError"), answer
    assert device.phone.state()["drafts"]["com.phoneagent.login:id/username"] == "842913"
    elements = await context.dispatch("list_elements", {}, Channel.RELAY)
    assert "${secret:ONE_TIME_CODE}" in elements["content"][0]["text"]
    assert "842913" not in json.dumps(elements) and "842913" not in json.dumps([r.result for r in records])


async def test_a_recorded_secret_is_written_by_name_and_replays_through_type_secret(caplog):
    book, typed = demo_book()
    context, device, _ = rig(book)
    started = await context.dispatch("start_flow_recording", {}, Channel.RELAY)
    assert not started.get("isError"), started
    await context.dispatch("type_text", {"text": "mobium", "target": USERNAME}, Channel.RELAY)
    await context.dispatch("type_secret", {"name": "DEMO_PASSWORD", "target": PASSWORD}, Channel.WEBMCP)
    stopped = await context.dispatch("stop_flow_recording", {}, Channel.RELAY)
    flow = stopped["structuredContent"]["yaml"]
    assert 'inputText: "${secret:DEMO_PASSWORD}"' in flow and VALUE not in flow
    # Replayed on a fresh phone: the secret is typed by name (the value never enters the flow's run).
    context, device, _ = rig(book)
    replay = await context.dispatch("run_flow", {"yaml": flow + "- tapOn: Sign in\n"}, Channel.RELAY)
    assert replay["structuredContent"]["passed"] is True, replay["structuredContent"]
    assert device.phone.state()["screen"] == "login/welcome"
    assert typed == ["DEMO_PASSWORD", "DEMO_PASSWORD"]
    assert VALUE not in json.dumps(replay) + caplog.text
