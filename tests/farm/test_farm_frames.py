"""The farm's pure parts: subjects, farm URLs (credentials never shown), presence, call envelopes, routing
rules."""

from __future__ import annotations

import asyncio
import json
import subprocess

import pytest

from phone_agent.errors import ToolError
from phone_agent.farm.frames import (
    FarmEnvelope,
    FarmUrl,
    Presence,
    farm_envelope,
    farm_page_settings,
    open_farm_envelope,
    page_subject_for_presence,
    parse_farm_url,
    parse_presence,
    presence_from_device_info,
    presence_subject,
    subject_token,
    task_subject,
)
from phone_agent.farm.registry import FarmRegistry
from phone_agent.relay.frames import CallFrame, CancelFrame
from phone_agent.server.farm import _NatsPageLink
from tests.farm.support import FarmBroker
from tests.support import phone_agent_command


def test_a_serial_becomes_one_subject_token_one_to_one():
    assert subject_token("emulator-5554") == "emulator-5554"
    dotted = subject_token("127.0.0.1:5555")
    assert "." not in dotted and ":" not in dotted and dotted.startswith("b32-")
    assert subject_token("a b") != subject_token("a_b")
    assert subject_token("b32-x") != "b32-x"
    assert task_subject("phone1", "10.0.0.2:5555", "task-1").startswith("$KV.phone-farm-tasks.phone1.b32-")


def test_a_presence_subject_names_the_page_it_came_from_and_nothing_else():
    assert page_subject_for_presence(presence_subject("phone1", "abc")) == "farm.page.phone1.abc"
    assert page_subject_for_presence("farm.presence.phone1") is None
    assert page_subject_for_presence("farm.other.phone1.abc") is None


def test_farm_urls_keep_their_credentials_out_of_sight():
    url = parse_farm_url("nats://mcp:s3cret@127.0.0.1:4222")
    assert (url.server, url.user, url.password) == ("nats://127.0.0.1:4222", "mcp", "s3cret")
    assert "s3cret" not in repr(url) and "s3cret" not in url.shown
    assert url.shown == "nats://mcp:***@127.0.0.1:4222"
    token = parse_farm_url("ws://tok3n@localhost:8080")
    assert token.token == "tok3n" and token.user is None and token.subject_user == "token"
    assert "tok3n" not in repr(token) + token.shown
    with pytest.raises(ValueError) as refused:
        parse_farm_url("http://mcp:s3cret@host:1")
    assert "s3cret" not in str(refused.value)
    assert parse_farm_url("nats://u:p%40ss@h:1").password == "p@ss"


def test_a_page_takes_its_farm_from_the_url_before_its_settings():
    settings = farm_page_settings("http://127.0.0.1:7788/?farm=ws://phone1:pw@127.0.0.1:4280&farmHeartbeatMs=200")
    assert settings.url == FarmUrl("ws://127.0.0.1:4280", user="phone1", password="pw")
    assert settings.heartbeat_ms == 200 and settings.from_query
    stored = farm_page_settings("http://127.0.0.1:7788/", "ws://phone2:x@127.0.0.1:4280")
    assert stored.url is not None and stored.url.user == "phone2" and not stored.from_query
    wins = farm_page_settings("http://127.0.0.1:7788/?farm=ws://phone1:pw@h:1", "ws://phone2:x@h:1")
    assert wins.url is not None and wins.url.user == "phone1" and wins.from_query
    assert farm_page_settings("http://127.0.0.1:7788/").url is None
    bad = farm_page_settings("http://127.0.0.1:7788/?farm=nats://phone1:pw@127.0.0.1:4222")
    assert bad.url is None and "pw" not in bad.refused and "ws://" in bad.refused


def test_presence_round_trips_and_junk_is_ignored():
    info = {"connected": True, "serial": "s1", "model": "Pixel", "release": "14", "screenWidth": 1080,
            "screenHeight": 2400}
    presence = presence_from_device_info(info, "host-a", busy=True, since_ms=5, ttl_ms=3000)
    assert presence is not None and parse_presence(presence.message()) == presence
    assert presence.screen == "1080x2400"
    assert presence_from_device_info({"connected": False}, "h", False, 0) is None
    for junk in ("", "[]", "{}", '{"serial": 5}', "{" * 10000):
        assert parse_presence(junk) is None
    assert parse_presence(json.dumps({"serial": "x", "ttlMs": 10**9})).ttl_ms == 60_000


def test_an_envelope_carries_the_relay_frame_byte_for_byte():
    frames = [
        CallFrame("r1", "run_agent_task", {"goal": "開く \"Settings\"\n", "timeoutMs": 60_000}).to_wire(),
        CancelFrame("r1").to_wire(),
        '{"id":"r2","tool":"take_screenshot","args":{"x":"\\u00e9"}}',  # any text, spacing and escapes kept
    ]
    serial = "10.0.0.2:5555"
    for frame in frames:
        assert open_farm_envelope(farm_envelope(serial, frame)) == FarmEnvelope(serial, frame)
    cancel = CancelFrame("r1").to_wire()
    assert json.loads(farm_envelope("s1", cancel)) == {"device": "s1", "frame": cancel}


def test_a_body_that_is_no_envelope_is_a_bare_frame_meant_for_no_phone():
    call = CallFrame("r1", "get_device_status", {}).to_wire()
    for body in (call, "not json", "[]", '{"frame": 5}', "{" * 10000):
        assert open_farm_envelope(body) == FarmEnvelope(None, body)
    assert open_farm_envelope('{"device": 5, "frame": "x"}') == FarmEnvelope(None, "x")


def test_the_farm_link_publishes_each_relay_frame_in_its_envelope_untouched():
    sent = []

    class Broker:
        async def publish(self, subject, payload, reply=""):
            sent.append((subject, payload, reply))

    link = _NatsPageLink(Broker(), "farm.page.phone1.p1", "_INBOX.x.0", "s1")
    frames = [CallFrame("r1", "take_screenshot", {}).to_wire(), CancelFrame("r1").to_wire()]
    for frame in frames:
        asyncio.run(link.send_text(frame))
    assert [(subject, reply) for subject, _, reply in sent] == [("farm.page.phone1.p1", "_INBOX.x.0")] * 2
    assert [open_farm_envelope(payload.decode()) for _, payload, _ in sent] == [
        FarmEnvelope("s1", frame) for frame in frames
    ]


def test_routing_rules():
    registry = FarmRegistry()
    with pytest.raises(ToolError) as empty:
        registry.route(None, 0)
    assert empty.value.code == "no_device"
    registry.heard(presence_subject("phone1", "p1"), Presence("a", ttl_ms=1000), 0)
    assert registry.route(None, 10).serial == "a"
    registry.heard(presence_subject("phone2", "p2"), Presence("b", busy=True, ttl_ms=1000), 0)
    registry.heard(presence_subject("phone3", "p3"), Presence("c", ttl_ms=1000), 0)
    with pytest.raises(ToolError) as which:
        registry.route(None, 10)
    assert which.value.code == "invalid_argument" and which.value.details["devices"] == ["a", "b", "c"]
    assert registry.route("b", 10).subject == "farm.page.phone2.p2"
    assert {registry.route("any", 10).serial for _ in range(4)} == {"a", "c"}  # idle ones, in turn
    with pytest.raises(ToolError) as gone:
        registry.route("z", 10)
    assert gone.value.code == "no_device" and "list_devices" in gone.value.remedy
    registry.heard(presence_subject("phone1", "p1"), Presence("a", ttl_ms=1000), 900)
    assert [phone.serial for phone in registry.expire(1500)] == ["b", "c"]
    left = registry.heard(presence_subject("phone1", "p1"), Presence("a", leaving=True), 1600)
    assert left is not None and registry.phones(1600) == []


def test_wrong_farm_credentials_stop_the_mcp_server_without_showing_them(broker: FarmBroker):
    wrong = broker.nats_url("mcp", "wrong-password-123")
    done = subprocess.run(
        [phone_agent_command(), "mcp", "--farm", wrong], stdin=subprocess.DEVNULL, capture_output=True,
        text=True, timeout=30,
    )
    assert done.returncode == 1
    assert "refused the credentials" in done.stderr and "wrong-password-123" not in done.stderr + done.stdout
    assert done.stdout == ""
