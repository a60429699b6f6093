"""RelayCore, the relay without I/O: pages, pending calls, frames, ids and time limits."""

from __future__ import annotations

import json
import re

import pytest

from phone_agent.errors import BROWSER_NOT_CONNECTED_TEXT, ErrorCode, ToolError
from phone_agent.relay.core import (
    CallAnswered,
    CallProgress,
    FrameIgnored,
    RelayCore,
    new_request_id,
)
from phone_agent.relay.frames import CallFrame, CancelFrame

TEXT_RESULT = {"content": [{"type": "text", "text": "ok"}]}


def core_with_page() -> tuple[RelayCore, int]:
    core = RelayCore()
    page, dropped = core.attach_page()
    assert dropped == []
    return core, page


def frame(**fields: object) -> str:
    return json.dumps(fields)


def test_request_ids_are_timestamp_and_random_and_unique() -> None:
    ids = {new_request_id() for _ in range(1000)}
    assert len(ids) == 1000
    assert all(re.fullmatch(r"[0-9a-f]+-[0-9a-f]{12}", i) for i in ids)


def test_a_call_without_a_page_is_browser_not_connected() -> None:
    core = RelayCore()
    with pytest.raises(ToolError) as caught:
        core.start_call("get_device_status", {})
    assert caught.value.code is ErrorCode.BROWSER_NOT_CONNECTED
    assert caught.value.message == BROWSER_NOT_CONNECTED_TEXT
    assert core.pending == {}
    # a server that knows where its page is says so after the specification's words
    with pytest.raises(ToolError) as caught:
        RelayCore(page_url="http://127.0.0.1:7788/").start_call("get_device_status", {})
    assert caught.value.message.startswith(BROWSER_NOT_CONNECTED_TEXT + " The page: http://127.0.0.1:7788/")


def test_unknown_tools_and_bad_arguments_are_refused_before_the_page() -> None:
    core, _ = core_with_page()
    with pytest.raises(ToolError) as unknown:
        core.start_call("format_phone", {})
    assert unknown.value.code is ErrorCode.UNKNOWN_TOOL
    with pytest.raises(ToolError) as missing:
        core.start_call("run_agent_task", {})
    assert missing.value.code is ErrorCode.INVALID_ARGUMENT and '"goal"' in missing.value.message
    with pytest.raises(ToolError) as extra:
        core.start_call("take_screenshot", {"quality": 5})
    assert '"quality"' in extra.value.message
    assert core.pending == {}


def test_a_request_frame_carries_id_tool_and_validated_args_with_defaults() -> None:
    core, page = core_with_page()
    call = core.start_call("get_task_result", {"taskId": "t1"})
    assert json.loads(CallFrame(call.id, call.tool, call.args).to_wire()) == {
        "id": call.id,
        "tool": "get_task_result",
        "args": {"taskId": "t1", "includeSteps": True},
    }
    assert call.page == page and core.pending == {call.id: call}


@pytest.mark.parametrize(
    ("tool", "args", "expected_ms"),
    [
        ("run_agent_task", {"goal": "x"}, 1_205_000),
        ("run_agent_task", {"goal": "x", "timeoutMs": 60_000}, 65_000),
        ("abort_task", {}, 10_000),
        ("get_task_result", {"taskId": "t"}, 10_000),
        ("get_latest_task", {}, 10_000),
        ("take_screenshot", {}, 30_000),
        ("get_device_status", {}, 15_000),
    ],
)
def test_time_limits_follow_the_catalog(tool: str, args: dict[str, object], expected_ms: int) -> None:
    core, _ = core_with_page()
    assert core.start_call(tool, args).timeout_ms == expected_ms


def test_time_limits_can_be_overridden_per_tool() -> None:
    core = RelayCore(timeout_overrides={"take_screenshot": 250, "run_agent_task": 700})
    core.attach_page()
    assert core.start_call("take_screenshot", {}).timeout_ms == 250
    assert core.start_call("run_agent_task", {"goal": "x", "timeoutMs": 60_000}).timeout_ms == 700
    assert core.start_call("abort_task", {}).timeout_ms == 10_000


def test_a_result_frame_answers_its_call_once() -> None:
    core, page = core_with_page()
    call = core.start_call("get_latest_task", {})
    event = core.receive_frame(page, frame(id=call.id, result=TEXT_RESULT))
    assert event == CallAnswered(call, TEXT_RESULT)
    assert core.pending == {}
    again = core.receive_frame(page, frame(id=call.id, result=TEXT_RESULT))
    assert isinstance(again, FrameIgnored) and "unknown id" in again.reason


def test_progress_frames_are_passed_on_in_order_and_never_end_the_call() -> None:
    core, page = core_with_page()
    call = core.start_call("run_agent_task", {"goal": "x"})
    first = core.receive_frame(page, frame(id=call.id, type="progress", seq=1, message="planned"))
    assert first == CallProgress(call, 1, "planned")
    # A repeated or late seq is ignored; a gap is fine (the page may have dropped a send).
    assert isinstance(
        core.receive_frame(page, frame(id=call.id, type="progress", seq=1, message="x")), FrameIgnored
    )
    third = core.receive_frame(page, frame(id=call.id, type="progress", seq=3, message="step"))
    assert third == CallProgress(call, 3, "step")
    assert isinstance(
        core.receive_frame(page, frame(id=call.id, type="progress", seq=2, message="x")), FrameIgnored
    )
    assert call.id in core.pending


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        b"\xff\xfe",
        "[" * 100_000 + "]" * 100_000,
        "[1, 2]",
        '"just a string"',
        frame(result=TEXT_RESULT),
        frame(id=7, result=TEXT_RESULT),
        frame(id="nobody", result=TEXT_RESULT),
        frame(id="nobody", type="progress", seq=1, message="x"),
    ],
)
def test_malformed_or_unknown_frames_are_ignored(text: str | bytes) -> None:
    core, page = core_with_page()
    call = core.start_call("get_latest_task", {})
    assert isinstance(core.receive_frame(page, text), FrameIgnored)
    assert core.pending == {call.id: call}


@pytest.mark.parametrize(
    "fields",
    [
        {"result": "a string"},
        {"result": None},
        {"result": [1]},
        {},
        {"type": "cancel"},
        {"type": "progress", "seq": 0, "message": "x"},
        {"type": "progress", "seq": True, "message": "x"},
        {"type": "progress", "seq": "1", "message": "x"},
        {"type": "progress", "seq": 1, "message": 5},
    ],
)
def test_frames_for_a_pending_call_that_make_no_sense_are_ignored(fields: dict[str, object]) -> None:
    core, page = core_with_page()
    call = core.start_call("get_latest_task", {})
    assert isinstance(core.receive_frame(page, frame(id=call.id, **fields)), FrameIgnored)
    assert call.id in core.pending


def test_a_new_page_replaces_the_old_one_and_takes_over_nothing() -> None:
    core, old = core_with_page()
    call = core.start_call("take_screenshot", {})
    new, dropped = core.attach_page()
    assert new != old and core.page == new
    assert dropped == [call] and core.pending == {}
    # The old page's late answer is ignored, and its disconnect changes nothing.
    assert isinstance(core.receive_frame(old, frame(id=call.id, result=TEXT_RESULT)), FrameIgnored)
    assert core.detach_page(old) == [] and core.page == new


def test_a_page_that_disconnects_takes_its_calls_with_it() -> None:
    core, page = core_with_page()
    first = core.start_call("take_screenshot", {})
    second = core.start_call("get_latest_task", {})
    assert core.detach_page(page) == [first, second]
    assert core.page is None and core.pending == {}


def test_a_call_given_up_on_is_forgotten_and_its_late_answer_ignored() -> None:
    core, page = core_with_page()
    call = core.start_call("abort_task", {})
    assert core.end_call(call.id) is call
    assert core.end_call(call.id) is None
    assert isinstance(core.receive_frame(page, frame(id=call.id, result=TEXT_RESULT)), FrameIgnored)
    assert json.loads(CancelFrame(call.id).to_wire()) == {"id": call.id, "type": "cancel"}


def test_the_page_asks_a_calls_client_and_withdraws_the_question() -> None:
    from phone_agent.relay.core import CallAsks, CallWithdraws
    from phone_agent.relay.frames import AskFrame, WithdrawFrame

    core, page = core_with_page()
    call = core.start_call("run_agent_task", {"goal": "Sign in"})
    asked = core.receive_frame(page, AskFrame(call.id, "ask-1", "takeover", "Take over: Sign in").to_wire())
    assert asked == CallAsks(call, "ask-1", "takeover", "Take over: Sign in")
    assert core.receive_frame(page, WithdrawFrame(call.id, "ask-1").to_wire()) == CallWithdraws(call, "ask-1")
    assert call.id in core.pending  # a question does not end the call
    # Another page's question, or one for a call that is over, changes nothing.
    elsewhere = core.receive_frame(page + 1, AskFrame(call.id, "ask-2", "confirm", "x?").to_wire())
    assert isinstance(elsewhere, FrameIgnored)
    gone = AskFrame("gone", "ask-3", "confirm", "x?").to_wire()
    assert isinstance(core.receive_frame(page, gone), FrameIgnored)
