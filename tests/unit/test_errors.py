"""Failures become isError results with a code, a message, a remedy and a retry hint."""

from phone_agent import errors
from phone_agent.errors import ERROR_CODE_MEANINGS, ErrorCode, ToolError


def test_every_code_is_documented():
    assert set(ERROR_CODE_MEANINGS) == set(ErrorCode)


def test_result_shape():
    result = ToolError(
        ErrorCode.NO_DEVICE, "No phone device connected.", remedy="Connect one.", retryable=True
    ).to_result()
    assert result["isError"] is True
    assert result["content"] == [{"type": "text", "text": "No phone device connected."}]
    assert result["structuredContent"] == {
        "code": "no_device",
        "message": "No phone device connected.",
        "remedy": "Connect one.",
        "retryable": True,
    }


def test_exact_texts_of_the_specification():
    assert errors.no_device().message == "No phone device connected."
    assert errors.agent_busy().message == "Agent is already running. Please wait or call abort_task first."
    assert errors.no_task_running().message == "No task is currently running."
    assert errors.browser_not_connected().message == "Browser not connected. Open the WebADB page first."
    assert errors.timed_out("take_screenshot", 30000).message == (
        'Tool "take_screenshot" timed out after 30000ms'
    )
    assert errors.TASK_ABORTED_TEXT == "Task aborted."


def test_every_helper_has_a_remedy():
    for error in (
        errors.no_device(),
        errors.agent_busy(),
        errors.no_task_running(),
        errors.browser_not_connected(),
        errors.timed_out("x", 1),
        errors.cancelled("x"),
        errors.internal("x", ValueError("boom")),
    ):
        assert error.remedy
        assert error.to_result()["structuredContent"]["remedy"] == error.remedy
