"""SSE parsing and chat-completion chunk assembly: split anywhere, assembled the same."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from phone_agent.agent.model import TextDelta, ToolCall, TurnEnd
from phone_agent.agent.sse import ChatChunkAssembler, SseEvent, SseParser

STREAM = (
    ": keep-alive comment\r\n"
    'data: {"choices":[{"index":0,"delta":{"role":"assistant","content":"I see "}}]}\r\n\r\n'
    'data: {"choices":[{"index":0,"delta":{"content":"the Wi‑Fi row 📶"}}]}\n\n'
    'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"c1","type":"function",'
    '"function":{"name":"tap","arguments":""}}]}}]}\r\r'
    'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,'
    '"function":{"arguments":"{\\"x\\": 1"}}]}}]}\n\n'
    'data: {"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,'
    '"function":{"arguments":"2, \\"y\\": 34}"}}]}}]}\n\n'
    'data: {"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n'
    "data: [DONE]\n\n"
).encode()


def events_of(chunks: list[bytes]) -> list[SseEvent]:
    parser = SseParser()
    events = []
    for chunk in chunks:
        events += parser.feed(chunk)
    return events + parser.finish()


def test_every_byte_split_gives_the_same_events():
    whole = events_of([STREAM])
    assert len(whole) == 7 and whole[-1].data == "[DONE]"
    assert events_of([bytes([b]) for b in STREAM]) == whole


@settings(deadline=None)  # a loaded CI machine must not fail a correct example
@given(st.lists(st.integers(min_value=0, max_value=len(STREAM)), max_size=12))
def test_any_split_gives_the_same_events(cuts):
    points = sorted(set(cuts))
    chunks = [STREAM[a:b] for a, b in zip([0, *points], [*points, len(STREAM)], strict=True)]
    assert events_of(chunks) == events_of([STREAM])


def test_multi_line_data_event_names_and_a_last_event_without_blank_line():
    events = events_of([b"event: error\ndata: a\ndata: b\n\ndata: tail"])
    assert events == [SseEvent("a\nb", "error"), SseEvent("tail")]


def test_chunks_assemble_text_and_a_tool_call_from_argument_fragments():
    assembler = ChatChunkAssembler()
    events = []
    for sse in events_of([STREAM])[:-1]:
        events += assembler.add_chunk(json.loads(sse.data))
    events += assembler.finish()
    assert events[:2] == [TextDelta("I see "), TextDelta("the Wi‑Fi row 📶")]
    call = events[2]
    assert isinstance(call, ToolCall) and (call.name, call.arguments, call.id) == (
        "tap",
        {"x": 12, "y": 34},
        "c1",
    )
    assert events[3] == TurnEnd("tool_calls", None)


def test_several_tool_calls_reasoning_and_bad_arguments():
    assembler = ChatChunkAssembler()
    chunk = {
        "choices": [
            {
                "index": 0,
                "delta": {
                    "reasoning_content": "hmm",
                    "tool_calls": [
                        {"index": 0, "id": "a", "function": {"name": "wait", "arguments": '{"ms": 5}'}},
                        {"index": 1, "id": "b", "function": {"name": "tap", "arguments": "{x:1}"}},
                    ],
                },
            }
        ]
    }
    events = assembler.add_chunk(chunk) + assembler.finish()
    assert events[0] == TextDelta("hmm", reasoning=True)
    assert events[1].arguments == {"ms": 5}
    assert events[2].error is not None and "not valid JSON" in events[2].error


def test_a_whole_non_streamed_completion():
    assembler = ChatChunkAssembler()
    completion = {
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "ok",
                    "tool_calls": [
                        {"id": "z", "function": {"name": "finish_step", "arguments": '{"summary":"done"}'}}
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ]
    }
    events = assembler.add_chunk(completion) + assembler.finish()
    assert events[0] == TextDelta("ok")
    assert events[1].name == "finish_step" and events[1].arguments == {"summary": "done"}


def test_chunks_with_fields_of_the_wrong_type_are_skipped_not_raised_on():
    # Found by tests/fuzz: a provider's odd JSON raised TypeError/AttributeError out of the agent.
    assembler = ChatChunkAssembler()
    for odd in (
        {"choices": True},
        {"choices": {"0": {}}},
        {"choices": [{"delta": "text"}]},
        {"choices": [{"delta": {"tool_calls": 5}}]},
        {"choices": [{"delta": {"tool_calls": [{"index": 0, "function": "f"}]}}]},
        {"choices": [{"delta": {"tool_calls": [{"index": 0, "id": 7, "function": {"name": ["x"]}}]}}]},
        {"choices": [{"delta": {"function_call": {"name": 3, "arguments": None}}, "finish_reason": 1}]},
    ):
        assert assembler.add_chunk(odd) == []
    chunk = {
        "choices": [{"delta": {"tool_calls": [{"index": 0, "function": {"name": "tap", "arguments": "{}"}}]}}]
    }
    events = assembler.add_chunk(chunk) + assembler.finish()
    assert events[0].name == "tap" and events[-1].finish_reason is None
