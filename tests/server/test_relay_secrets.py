"""The relay's half of secrets by name and of ``--confirm always``, against a fake page link: names on
pairing, a value only in the answer to the current page's request, never in a log line."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest

from phone_agent.relay.frames import (
    PolicyFrame,
    SecretNamesFrame,
    SecretRequestFrame,
    SecretValueFrame,
    parse_secret_request,
    parse_server_frame,
)
from tests.server.test_relay import FakeLink, relay

VALUE = "hunter2"


async def test_the_page_learns_the_names_and_gets_a_value_only_when_it_asks(caplog: pytest.LogCaptureFixture):
    caplog.set_level(logging.DEBUG)
    hub = relay()
    hub.secrets = {"DEMO_PASSWORD": VALUE}
    hub.confirm_always = True
    link = FakeLink()
    page = await hub.page_connected(link)
    first = [await link.next_sent(), await link.next_sent()]
    assert {"type": "secrets", "names": ["DEMO_PASSWORD"]} in first
    assert {"type": "policy", "confirm": "always"} in first
    assert VALUE not in json.dumps(first)

    hub.page_frame(page, SecretRequestFrame("secret-1", "DEMO_PASSWORD").to_wire())
    assert await link.next_sent() == {"type": "secret", "id": "secret-1", "value": VALUE}
    hub.page_frame(page, SecretRequestFrame("secret-2", "NOT_THERE").to_wire())
    assert await link.next_sent() == {"type": "secret", "id": "secret-2", "value": None}
    assert VALUE not in caplog.text and "DEMO_PASSWORD" in caplog.text

    # A page that was replaced asks in vain.
    newer = FakeLink()
    await hub.page_connected(newer)
    hub.page_frame(page, SecretRequestFrame("secret-3", "DEMO_PASSWORD").to_wire())
    await asyncio.sleep(0.05)
    sent = []
    while not link.sent.empty():
        sent.append(link.sent.get_nowait())
    assert not any(frame.get("id") == "secret-3" for frame in sent)


async def test_a_server_without_secrets_or_policy_sends_neither():
    hub = relay()
    link = FakeLink()
    await hub.page_connected(link)
    await asyncio.sleep(0.05)
    assert link.sent.empty()


def test_the_frames_read_as_they_are_written():
    assert parse_server_frame('{"type": "secrets", "names": ["A", 3]}') == SecretNamesFrame(["A"])
    assert parse_server_frame('{"type": "secret", "id": "s1", "value": "x"}') == SecretValueFrame("s1", "x")
    assert parse_server_frame('{"type": "secret", "id": "s1", "value": null}') == SecretValueFrame("s1", None)
    assert parse_server_frame('{"type": "policy", "confirm": "always"}') == PolicyFrame("always")
    assert parse_server_frame('{"type": "policy", "confirm": "weird"}') == PolicyFrame("agent")
    assert VALUE not in repr(SecretValueFrame("s1", VALUE))
    request = parse_secret_request(SecretRequestFrame("s9", "OTP").to_wire())
    assert (request.id, request.name) == ("s9", "OTP")
    assert parse_secret_request('{"id": "x", "result": {}}') is None
    assert parse_secret_request("not json") is None
