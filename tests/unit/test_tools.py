"""The tool catalog: names, schemas, annotations, timeouts, and argument validation."""

import pytest

from phone_agent.errors import ErrorCode, ToolError
from phone_agent.tools import (
    TOOL_NAMES,
    TOOLS,
    TOOLS_BY_NAME,
    Channel,
    get_tool,
    validate_arguments,
)

SEED_TOOLS = [
    "run_agent_task",
    "abort_task",
    "get_task_result",
    "get_latest_task",
    "take_screenshot",
    "get_device_status",
]


def test_catalog_has_the_six_tools_of_the_specification_in_its_order():
    assert list(TOOL_NAMES) == SEED_TOOLS


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_every_schema_is_a_closed_object(tool):
    schema = tool.input_schema
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    for name in schema.get("required", []):
        assert name in schema["properties"]
    for spec in schema["properties"].values():
        assert spec["type"] in {"string", "number", "boolean"}
        assert spec["description"]


def test_parameters_match_the_specification():
    run = TOOLS_BY_NAME["run_agent_task"].input_schema
    assert run["required"] == ["goal"]
    assert set(run["properties"]) == {"goal", "timeoutMs"}
    result = TOOLS_BY_NAME["get_task_result"].input_schema
    assert result["required"] == ["taskId"]
    assert result["properties"]["includeSteps"]["default"] is True
    for name in ("abort_task", "get_latest_task", "take_screenshot", "get_device_status"):
        assert TOOLS_BY_NAME[name].input_schema["properties"] == {}


def test_annotations_per_channel():
    run = TOOLS_BY_NAME["run_agent_task"]
    assert run.mcp_annotations()["destructiveHint"] is True
    assert run.mcp_annotations()["readOnlyHint"] is False
    assert run.webmcp_annotations() == {"readOnlyHint": False, "consequentialHint": True}
    shot = TOOLS_BY_NAME["take_screenshot"]
    assert shot.mcp_annotations()["readOnlyHint"] is True
    assert "destructiveHint" not in shot.mcp_annotations()
    assert shot.webmcp_annotations() == {"readOnlyHint": True}
    abort = TOOLS_BY_NAME["abort_task"]
    assert abort.mcp_annotations()["destructiveHint"] is False
    assert "consequentialHint" not in abort.webmcp_annotations()


def test_relay_timeouts_follow_the_specification():
    expected = {
        "abort_task": 10_000,
        "get_task_result": 10_000,
        "get_latest_task": 10_000,
        "take_screenshot": 30_000,
        "get_device_status": 15_000,
    }
    for name, ms in expected.items():
        assert TOOLS_BY_NAME[name].timeout_ms({}) == ms
    run = TOOLS_BY_NAME["run_agent_task"]
    assert run.timeout_ms({"goal": "x"}) == 1_200_000 + 5_000
    assert run.timeout_ms({"goal": "x", "timeoutMs": 60_000}) == 65_000


def test_unknown_tool_names_the_real_ones():
    with pytest.raises(ToolError) as info:
        get_tool("rm_rf")
    assert info.value.code is ErrorCode.UNKNOWN_TOOL
    assert "run_agent_task" in info.value.message
    with pytest.raises(ToolError):
        get_tool(None)


def _invalid(tool_name, args):
    with pytest.raises(ToolError) as info:
        validate_arguments(get_tool(tool_name), args)
    assert info.value.code is ErrorCode.INVALID_ARGUMENT
    return info.value


def test_missing_goal_is_named():
    error = _invalid("run_agent_task", {})
    assert '"goal" is required' in error.message
    assert error.details["field"] == "goal"
    assert "goal: string" in error.remedy


@pytest.mark.parametrize(
    ("args", "field", "words"),
    [
        ({"goal": 3}, "goal", "must be a string, not a number"),
        ({"goal": ""}, "goal", "must not be empty"),
        ({"goal": "   "}, "goal", "must not be empty"),
        ({"goal": "x" * 4001}, "goal", "at most 4000"),
        ({"goal": "x", "timeoutMs": "60000"}, "timeoutMs", "must be a number, not a string"),
        ({"goal": "x", "timeoutMs": True}, "timeoutMs", "not a boolean"),
        ({"goal": "x", "timeoutMs": 10}, "timeoutMs", "at least 1000"),
        ({"goal": "x", "timeoutMs": float("inf")}, "timeoutMs", "must be a number"),
        ({"goal": "x", "timeoutMs": None}, "timeoutMs", "not null"),
        ({"goal": "x", "extra": 1}, "extra", "is not a parameter"),
    ],
)
def test_bad_run_agent_task_arguments_name_the_field(args, field, words):
    error = _invalid("run_agent_task", args)
    assert error.details["field"] == field
    assert words in error.message


def test_arguments_must_be_an_object():
    assert "must be an object, not an array" in _invalid("get_device_status", [1]).message
    assert "must be an object" in _invalid("take_screenshot", "x").message


def test_tools_without_parameters_reject_any():
    error = _invalid("take_screenshot", {"quality": 9})
    assert "no parameters" in error.message


def test_valid_arguments_get_defaults():
    assert validate_arguments(get_tool("get_task_result"), {"taskId": "t1"}) == {
        "taskId": "t1",
        "includeSteps": True,
    }
    assert (
        validate_arguments(get_tool("get_task_result"), {"taskId": "t1", "includeSteps": False})[
            "includeSteps"
        ]
        is False
    )
    assert validate_arguments(get_tool("get_device_status"), None) == {}
    assert validate_arguments(get_tool("run_agent_task"), {"goal": "x", "timeoutMs": 5000.0}) == {
        "goal": "x",
        "timeoutMs": 5000.0,
    }


def test_includesteps_must_be_boolean():
    assert "must be a boolean" in _invalid("get_task_result", {"taskId": "t", "includeSteps": 1}).message


def test_channel_values_are_stable():
    assert Channel.RELAY == "relay" and Channel.WEBMCP == "webmcp"
