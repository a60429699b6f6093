"""Failures become isError results with a code, a message, a remedy and a retry hint."""

import ast
from pathlib import Path

from phone_agent import errors
from phone_agent.errors import ERROR_CODE_MEANINGS, ErrorCode, ToolError
from phone_agent.farm import failures


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
    assert errors.browser_not_connected().message == "Browser not connected. Open the phone-agent page first."
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
        errors.no_model(),
        errors.bad_argument("tap", "x", "must be a number", "x: number"),
        errors.unknown_tool("nope", "", "tap"),
        errors.task_not_found("task-1"),
        errors.no_tasks(),
        errors.cannot_transcode(),
        errors.unreadable_frame("relay", "not JSON"),
        errors.page_replaced("x"),
        errors.page_disconnected("x"),
        errors.malformed_result("x", "no content"),
        errors.server_gone("x", "EOF"),
        errors.server_unreachable("x", "refused"),
        failures.bad_device_argument(),
        failures.gone_device("emulator-5554"),
        failures.empty_farm(),
        failures.which_device(["a", "b"]),
        failures.wrong_device(None, "a"),
        failures.answer_too_large("x"),
        errors.DeviceError("the phone said no"),
        errors.PhoneDisconnectedError("closed"),
    ):
        assert error.remedy
        assert error.to_result()["structuredContent"]["remedy"] == error.remedy


def test_no_model_text_is_the_one_both_refusals_answer():
    assert errors.no_model().message == errors.NO_MODEL_TEXT
    assert (
        errors.NO_MODEL_TEXT == "No model configured: open Settings in the page and choose a model provider."
    )


def test_a_lost_phone_is_no_device_and_still_a_device_error():
    lost = errors.PhoneDisconnectedError("transport closed")
    assert isinstance(lost, errors.DeviceError)
    assert (lost.code, lost.message, lost.details) == (
        ErrorCode.NO_DEVICE,
        errors.NO_DEVICE_TEXT,
        {"reason": "transport closed"},
    )


def test_tool_errors_are_built_only_in_errors_py():
    """Every ToolError is made by a factory of errors.py (or of a package's own ``failures.py``, as the
    farm's): no other module builds one from a code itself."""
    package = Path(errors.__file__).parent
    builders = []
    for path in sorted(package.rglob("*.py")):
        if (path.name == "errors.py" and path.parent == package) or path.name == "failures.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
                if name == "ToolError":
                    builders.append(f"{path.relative_to(package)}:{node.lineno}")
    assert builders == []
