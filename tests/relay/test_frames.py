"""The relay's wire format, both halves: the frames the server and the page build and read, pairing,
and where the page's relay client connects and how it retries."""

import json

import pytest

from phone_agent.relay.frames import (
    BadFrame,
    CallFrame,
    CancelFrame,
    HelloFrame,
    PairedFrame,
    PairFrame,
    ProgressFrame,
    ProgressSequence,
    ResultFrame,
    call_frame,
    cancel_frame,
    hello_frame,
    pair_frame,
    paired_frame,
    parse_first_frame,
    parse_page_frame,
    parse_server_frame,
    relay_settings,
    result_frame,
    retry_delay_ms,
)

# -- the page's half: what the server sends, what the page answers --------------------------------


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


def test_paired_frames_parse_with_or_without_a_secret() -> None:
    assert parse_server_frame('{"type": "paired"}') == PairedFrame(None)
    assert parse_server_frame('{"type": "paired", "secret": "x"}') == PairedFrame("x")


# -- the server's half: what the server sends, what it reads from the page -----------------------


def test_call_and_cancel_frames_are_the_bytes_the_page_reads() -> None:
    call = call_frame("r1", "run_agent_task", {"goal": "開く"})
    assert call == '{"id": "r1", "tool": "run_agent_task", "args": {"goal": "開く"}}'
    assert parse_server_frame(call) == CallFrame("r1", "run_agent_task", {"goal": "開く"})
    assert cancel_frame("r1") == '{"id": "r1", "type": "cancel"}'
    assert parse_server_frame(cancel_frame("r1")) == CancelFrame("r1")


def test_the_server_answers_pairing_and_the_page_reads_it() -> None:
    assert paired_frame() == '{"type": "paired"}'
    assert paired_frame("s3cret") == '{"type": "paired", "secret": "s3cret"}'
    assert parse_server_frame(paired_frame()) == PairedFrame(None)
    assert parse_server_frame(paired_frame("s3cret")) == PairedFrame("s3cret")


def test_the_first_frame_is_a_hello_or_a_pair_and_nothing_else() -> None:
    assert parse_first_frame(hello_frame("s3cret")) == HelloFrame("s3cret")
    assert parse_first_frame(pair_frame("123 456")) == PairFrame("123 456")
    assert parse_first_frame(b'{"type": "hello", "secret": 5}') == HelloFrame(None)
    assert parse_first_frame('{"type": "pair"}') == PairFrame(None)
    for other in (None, "not json", "[1]", "[" * 100_000, '{"id": "x", "tool": "t"}', '{"type": "paired"}'):
        assert parse_first_frame(other) is None


def test_the_server_reads_results_and_progress_from_the_page() -> None:
    answer = {"content": [{"type": "text", "text": "見る"}]}
    assert parse_page_frame(result_frame("r1", answer)) == ResultFrame("r1", answer)
    assert parse_page_frame(ProgressSequence().frame("r1", "step")) == ProgressFrame("r1", 1, "step")
    assert parse_page_frame(b'{"id": "r1", "type": null, "result": {}}') == ResultFrame("r1", {})


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("not json", BadFrame("not JSON")),
        (b"\xff\xfe", BadFrame("not JSON")),
        ("[" * 100_000 + "]" * 100_000, BadFrame("not JSON")),
        ("[1, 2]", BadFrame("not a JSON object but list")),
        ('{"result": {}}', BadFrame("no string id")),
        ('{"id": 7, "result": {}}', BadFrame("no string id")),
        ('{"id": "a"}', BadFrame("frame for 'a' has neither result nor type", "a")),
        ('{"id": "a", "result": [1]}', BadFrame("result for 'a' is not an object but list", "a")),
        ('{"id": "a", "type": "cancel"}', BadFrame("unknown frame type 'cancel' for 'a'", "a")),
        (
            '{"id": "a", "type": "progress", "seq": true, "message": "x"}',
            BadFrame("progress for 'a' without a positive integer seq", "a"),
        ),
        (
            '{"id": "a", "type": "progress", "seq": 0, "message": "x"}',
            BadFrame("progress for 'a' without a positive integer seq", "a"),
        ),
        (
            '{"id": "a", "type": "progress", "seq": 1, "message": 5}',
            BadFrame("progress for 'a' without a string message", "a"),
        ),
    ],
)
def test_page_frames_the_server_cannot_act_on_say_why(text: str | bytes, expected: BadFrame) -> None:
    assert parse_page_frame(text) == expected


def test_the_page_retries_at_once_then_backs_off_to_its_retry_interval() -> None:
    assert [retry_delay_ms(n, 30_000) for n in range(8)] == [0, 1000, 2000, 4000, 8000, 16000, 30000, 30000]
    assert [retry_delay_ms(n, 300) for n in range(3)] == [0, 300, 300]  # tests' short interval
    assert retry_delay_ms(10_000, 30_000) == 30_000


# -- where the page connects ----------------------------------------------------------------------


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


def test_ask_withdraw_and_answer_frames_round_trip_and_bad_ones_are_refused() -> None:
    from phone_agent.relay.frames import (
        MAX_ASK_CHARS,
        AnswerFrame,
        AskFrame,
        WithdrawFrame,
        answer_frame,
        ask_frame,
        withdraw_frame,
    )

    assert parse_page_frame(ask_frame("c1", "a1", "confirm", "Allow tap Send?")) == AskFrame(
        "c1", "a1", "confirm", "Allow tap Send?"
    )
    assert parse_page_frame(withdraw_frame("c1", "a1")) == WithdrawFrame("c1", "a1")
    assert parse_server_frame(answer_frame("a1", "done")) == AnswerFrame("a1", "done")
    long = parse_page_frame(ask_frame("c1", "a1", "takeover", "x" * (MAX_ASK_CHARS + 50)))
    assert isinstance(long, AskFrame) and len(long.message) == MAX_ASK_CHARS
    for bad in (
        {"id": "c1", "type": "ask", "ask": "a1", "kind": "pay", "message": "m"},
        {"id": "c1", "type": "ask", "ask": "a1", "kind": "confirm", "message": ""},
        {"id": "c1", "type": "ask", "kind": "confirm", "message": "m"},
        {"id": "c1", "type": "withdraw", "ask": 3},
    ):
        refused = parse_page_frame(json.dumps(bad))
        assert isinstance(refused, BadFrame) and refused.id == "c1", bad
    unknown = json.dumps({"type": "answer", "id": "a1", "answer": "ok"})
    assert isinstance(parse_server_frame(unknown), BadFrame)
