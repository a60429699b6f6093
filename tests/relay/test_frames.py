"""The page's side of the relay frames, and where the page's relay client connects."""

import json

from phone_agent.relay.frames import (
    BadFrame,
    CallFrame,
    CancelFrame,
    ProgressSequence,
    parse_server_frame,
    relay_settings,
    result_frame,
)


def test_call_and_cancel_frames():
    assert parse_server_frame('{"id":"r1","tool":"take_screenshot","args":{}}') == CallFrame(
        "r1", "take_screenshot", {}
    )
    assert parse_server_frame('{"id":"r1","type":"cancel"}') == CancelFrame("r1")
    assert parse_server_frame('{"id":"r2","tool":"get_device_status"}') == CallFrame(
        "r2", "get_device_status", None
    )


def test_bad_frames_say_why_and_keep_the_id_when_there_is_one():
    assert parse_server_frame("not json").reason.startswith("not JSON")
    assert parse_server_frame("[1,2]") == BadFrame("not a JSON object")
    assert parse_server_frame('{"tool":"x"}') == BadFrame("no string id")
    assert parse_server_frame('{"id":5,"tool":"x"}') == BadFrame("no string id")
    assert parse_server_frame('{"id":"a","tool":7}') == BadFrame("no tool name", "a")
    assert parse_server_frame('{"id":"a","type":"bogus"}') == BadFrame("unknown frame type 'bogus'", "a")


def test_result_frame_round_trips():
    frame = json.loads(result_frame("r1", {"content": [{"type": "text", "text": "見る"}]}))
    assert frame == {"id": "r1", "result": {"content": [{"type": "text", "text": "見る"}]}}


def test_progress_is_numbered_per_request_from_one():
    seq = ProgressSequence()
    frames = [json.loads(seq.frame(i, m)) for i, m in [("a", "x"), ("a", "y"), ("b", "z"), ("a", "w")]]
    assert [(f["id"], f["seq"]) for f in frames] == [("a", 1), ("a", 2), ("b", 1), ("a", 3)]
    assert frames[0] == {"id": "a", "type": "progress", "seq": 1, "message": "x"}
    seq.forget("a")
    assert json.loads(seq.frame("a", "again"))["seq"] == 1


def test_relay_url_resolution():
    served = {"server": "phone-agent", "relay": "/relay"}
    assert relay_settings("http://127.0.0.1:9000/", served).url == "ws://127.0.0.1:9000/relay"
    assert relay_settings("https://example.test/app/", served).url == "wss://example.test/relay"
    assert relay_settings("http://localhost:8000/", None).url == "ws://localhost:7788"
    assert relay_settings("http://localhost:8000/", {"other": 1}).url == "ws://localhost:7788"
    query = "http://127.0.0.1:9000/?relay=ws%3A%2F%2F127.0.0.1%3A9999&relayRetryMs=250"
    settings = relay_settings(query, served)
    assert settings.url == "ws://127.0.0.1:9999" and settings.retry_ms == 250


def test_retry_interval_defaults_to_thirty_seconds_and_has_a_floor():
    assert relay_settings("http://x/", None).retry_ms == 30_000
    assert relay_settings("http://x/?relayRetryMs=1", None).retry_ms == 100
    assert relay_settings("http://x/?relayRetryMs=abc", None).retry_ms == 30_000


def test_a_relay_off_this_machine_is_refused():
    served = {"server": "phone-agent", "relay": "/relay"}
    for hostile in (
        "wss://attacker.example/",
        "ws://10.0.0.5:7788",
        "http://127.0.0.1:7788",
        "ws://127.0.0.1.attacker.example/",
        "javascript:alert(1)",
        "ws://[::1",
    ):
        settings = relay_settings(f"http://127.0.0.1:9000/?relay={hostile}", served)
        assert settings.url == "ws://127.0.0.1:9000/relay", hostile
        assert "is ignored" in settings.refused
    for fine in ("ws://localhost:7788", "ws://[::1]:7788/relay", "wss://127.0.0.1:8443/relay"):
        settings = relay_settings(f"http://127.0.0.1:9000/?relay={fine}", served)
        assert settings.url == fine and settings.refused == ""
