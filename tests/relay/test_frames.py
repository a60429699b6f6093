"""The relay's wire format, both halves: the frames the server and the page build and read, and pairing."""

import json

import pytest

from phone_agent.relay.frames import (
    FIRST_FRAMES,
    PAGE_FRAMES,
    SERVER_FRAMES,
    SERVER_NOTICES,
    AnswerFrame,
    AskFrame,
    BadFrame,
    CallFrame,
    CancelFrame,
    HelloFrame,
    PairedFrame,
    PairFrame,
    PolicyFrame,
    ProgressFrame,
    ProgressSequence,
    RelayFrame,
    ResultFrame,
    SecretNamesFrame,
    SecretRequestFrame,
    SecretValueFrame,
    TaskRecordFrame,
    TransferRef,
    WithdrawFrame,
    parse_first_frame,
    parse_page_frame,
    parse_secret_request,
    parse_server_frame,
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
    frame = json.loads(ResultFrame("r1", {"content": [{"type": "text", "text": "見る"}]}).to_wire())
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
    call = CallFrame("r1", "run_agent_task", {"goal": "開く"}).to_wire()
    assert call == '{"id": "r1", "tool": "run_agent_task", "args": {"goal": "開く"}}'
    assert parse_server_frame(call) == CallFrame("r1", "run_agent_task", {"goal": "開く"})
    assert CancelFrame("r1").to_wire() == '{"id": "r1", "type": "cancel"}'
    assert parse_server_frame(CancelFrame("r1").to_wire()) == CancelFrame("r1")


def test_the_server_answers_pairing_and_the_page_reads_it() -> None:
    assert PairedFrame().to_wire() == '{"type": "paired"}'
    assert PairedFrame("s3cret").to_wire() == '{"type": "paired", "secret": "s3cret"}'
    assert parse_server_frame(PairedFrame().to_wire()) == PairedFrame(None)
    assert parse_server_frame(PairedFrame("s3cret").to_wire()) == PairedFrame("s3cret")


def test_the_first_frame_is_a_hello_or_a_pair_and_nothing_else() -> None:
    assert parse_first_frame(HelloFrame("s3cret").to_wire()) == HelloFrame("s3cret")
    assert parse_first_frame(PairFrame("123 456").to_wire()) == PairFrame("123 456")
    assert parse_first_frame(b'{"type": "hello", "secret": 5}') == HelloFrame(None)
    assert parse_first_frame('{"type": "pair"}') == PairFrame(None)
    for other in (None, "not json", "[1]", "[" * 100_000, '{"id": "x", "tool": "t"}', '{"type": "paired"}'):
        assert parse_first_frame(other) is None


def test_the_server_reads_results_and_progress_from_the_page() -> None:
    answer = {"content": [{"type": "text", "text": "見る"}]}
    assert parse_page_frame(ResultFrame("r1", answer).to_wire()) == ResultFrame("r1", answer)
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


def test_ask_withdraw_and_answer_frames_round_trip_and_bad_ones_are_refused() -> None:
    from phone_agent.relay.frames import MAX_ASK_CHARS

    assert parse_page_frame(AskFrame("c1", "a1", "confirm", "Allow tap Send?").to_wire()) == AskFrame(
        "c1", "a1", "confirm", "Allow tap Send?"
    )
    assert parse_page_frame(WithdrawFrame("c1", "a1").to_wire()) == WithdrawFrame("c1", "a1")
    assert parse_server_frame(AnswerFrame("a1", "done").to_wire()) == AnswerFrame("a1", "done")
    long = parse_page_frame(AskFrame("c1", "a1", "takeover", "x" * (MAX_ASK_CHARS + 50)).to_wire())
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


# -- one class per frame: its text, and the reader that reads it back ------------------------------

UNICODE = "見る é"
# Each frame, the exact text it goes on the wire as (byte for byte what the builders wrote before the
# frames became classes), and who reads it.
WIRE = [
    (HelloFrame("s3cret"), '{"type": "hello", "secret": "s3cret"}', parse_first_frame),
    (PairFrame("123 456"), '{"type": "pair", "code": "123 456"}', parse_first_frame),
    (PairedFrame("é"), '{"type": "paired", "secret": "\\u00e9"}', parse_server_frame),
    (
        CallFrame("r1", "push_file", {"p": "é"}, TransferRef("t1", "upload", 5, "/api/transfers/t1/chunk")),
        '{"id": "r1", "tool": "push_file", "args": {"p": "é"}, "transfer": '
        '{"id": "t1", "direction": "upload", "size": 5, "path": "/api/transfers/t1/chunk"}}',
        parse_server_frame,
    ),
    (CancelFrame("r1"), '{"id": "r1", "type": "cancel"}', parse_server_frame),
    (TaskRecordFrame({"taskId": "t"}), '{"type": "task", "record": {"taskId": "t"}}', parse_server_frame),
    (PolicyFrame("always"), '{"type": "policy", "confirm": "always"}', parse_server_frame),
    (SecretNamesFrame(["A", "B"]), '{"type": "secrets", "names": ["A", "B"]}', parse_server_frame),
    (SecretValueFrame("s1", "é"), '{"type": "secret", "id": "s1", "value": "é"}', parse_server_frame),
    (AnswerFrame("a1", "yes"), '{"type": "answer", "id": "a1", "answer": "yes"}', parse_server_frame),
    (ResultFrame("r1", {"content": []}), '{"id": "r1", "result": {"content": []}}', parse_page_frame),
    (
        ProgressFrame("r1", 2, "é"),
        '{"id": "r1", "type": "progress", "seq": 2, "message": "é"}',
        parse_page_frame,
    ),
    (
        AskFrame("r1", "a1", "confirm", "é?"),
        '{"id": "r1", "type": "ask", "ask": "a1", "kind": "confirm", "message": "é?"}',
        parse_page_frame,
    ),
    (WithdrawFrame("r1", "a1"), '{"id": "r1", "type": "withdraw", "ask": "a1"}', parse_page_frame),
    (SecretRequestFrame("s1", "PIN"), '{"type": "secret", "id": "s1", "name": "PIN"}', parse_secret_request),
]


@pytest.mark.parametrize(("frame", "text", "reader"), WIRE, ids=lambda value: type(value).__name__)
def test_every_frame_writes_its_text_and_its_reader_reads_the_same_frame_back(frame, text, reader) -> None:
    assert frame.to_wire() == text
    assert reader(text) == frame
    assert type(frame).from_wire(json.loads(text)) == frame


def test_every_frame_class_is_listed_and_read_by_its_type() -> None:
    listed = {type(frame) for frame, _, _ in WIRE}
    assert listed == set(RelayFrame.__subclasses__())
    tables = (FIRST_FRAMES, SERVER_NOTICES, SERVER_FRAMES, PAGE_FRAMES)
    for frame_type, frame_class in (item for table in tables for item in table.items()):
        assert frame_class.TYPE == frame_type
    untyped = {cls for cls in listed if cls.TYPE is None}
    assert untyped == {CallFrame, ResultFrame}  # a frame without a type is a call, or its result


def test_text_is_written_as_it_is_where_people_and_models_write_it_and_escaped_elsewhere() -> None:
    assert UNICODE in CallFrame("r", "type_text", {"text": UNICODE}).to_wire()
    assert json.loads(HelloFrame(UNICODE).to_wire())["secret"] == UNICODE
    assert HelloFrame(UNICODE).to_wire().isascii()
    assert SecretNamesFrame(["B", "A"]).to_wire() == '{"type": "secrets", "names": ["A", "B"]}'


def test_a_server_frame_too_deeply_nested_to_read_is_a_bad_frame_not_an_exception() -> None:
    frame = parse_server_frame("[" * 100_000 + "]" * 100_000)
    assert isinstance(frame, BadFrame) and frame.reason.startswith("not JSON")


def test_a_transfer_whose_path_leaves_the_relays_origin_makes_the_call_unreadable() -> None:
    for transfer in ({"id": "t", "direction": "upload", "size": 1, "path": "//evil/x"}, {"id": "t"}, 5):
        text = json.dumps({"id": "r1", "tool": "push_file", "args": {}, "transfer": transfer})
        assert parse_server_frame(text) == BadFrame("a call with an unreadable transfer", "r1")
