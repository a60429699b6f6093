"""The tool catalog: names, schemas, annotations, timeouts, and argument validation."""

import pytest

from phone_agent.errors import ErrorCode, ToolError
from phone_agent.tools.catalog import (
    SPEC_TOOL_NAMES,
    TOOL_NAMES,
    TOOLS,
    TOOLS_BY_NAME,
    ToolProfile,
    get_tool,
    tools_for_profile,
)
from phone_agent.tools.spec import Channel, validate_arguments

SEED_TOOLS = [
    "run_agent_task",
    "abort_task",
    "get_task_result",
    "get_latest_task",
    "take_screenshot",
    "get_device_status",
]


DEVICE_TOOLS = [
    "list_elements",
    "tap",
    "long_press",
    "swipe",
    "scroll_to",
    "type_text",
    "type_secret",
    "press_key",
    "open_app",
    "stop_app",
    "open_url",
    "list_apps",
    "get_current_app",
    "wait_for",
    "get_screen_info",
    "set_orientation",
    "install_app",
    "uninstall_app",
    "clear_app_data",
    "set_permission",
    "read_logs",
    "list_crashes",
    "get_crash",
    "push_file",
    "pull_file",
    "list_files",
    "get_clipboard",
    "set_clipboard",
    "list_notifications",
    "open_notifications",
    "pinch",
    "start_recording",
    "stop_recording",
]
FLOW_TOOLS = [
    "run_flow",
    "assert_visible",
    "assert_not_visible",
    "save_flow",
    "list_flows",
    "get_flow",
    "delete_flow",
    "start_flow_recording",
    "stop_flow_recording",
    "save_task_as_flow",
]


def test_catalog_has_the_six_tools_of_the_specification_in_its_order_then_the_device_tools():
    assert list(SPEC_TOOL_NAMES) == SEED_TOOLS
    assert list(TOOL_NAMES) == SEED_TOOLS + DEVICE_TOOLS + FLOW_TOOLS


def test_every_tool_has_a_handler_and_an_output_schema():
    for tool in TOOLS:
        assert tool.run is not None, tool.name
        assert tool.output_schema is not None and tool.output_schema["type"] == "object", tool.name


def test_profiles_choose_from_the_one_catalog():
    assert [t.name for t in tools_for_profile("all")] == list(TOOL_NAMES)
    assert [t.name for t in tools_for_profile(ToolProfile.AGENT)] == SEED_TOOLS
    read_only = [t.name for t in tools_for_profile("read-only")]
    assert read_only == [t.name for t in TOOLS if t.read_only]
    assert "tap" not in read_only and "list_elements" in read_only and "wait_for" in read_only
    with pytest.raises(ValueError):
        tools_for_profile("everything")


def test_a_tool_outside_the_profile_is_unknown_there():
    with pytest.raises(ToolError) as info:
        get_tool("tap", "read-only")
    assert info.value.code is ErrorCode.UNKNOWN_TOOL
    assert "read-only" in info.value.message and "list_elements" in info.value.message
    assert get_tool("tap").name == "tap"


def test_tools_whose_answers_show_the_screen_are_marked_untrusted_on_webmcp():
    for name in ("list_elements", "wait_for", "take_screenshot", "get_current_app", "get_task_result"):
        assert TOOLS_BY_NAME[name].webmcp_annotations()["untrustedContentHint"] is True
    assert "untrustedContentHint" not in TOOLS_BY_NAME["tap"].webmcp_annotations()


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_every_schema_is_a_closed_object(tool):
    schema = tool.input_schema
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    for name in schema.get("required", []):
        assert name in schema["properties"]
    for spec in schema["properties"].values():
        if spec["type"] == "object":  # a map of names to text (run_flow's env and files), closed too
            assert spec["additionalProperties"] == {"type": "string"}
        else:
            assert spec["type"] in {"string", "number", "integer", "boolean"}
        assert spec["description"]


def test_parameters_match_the_specification():
    run = TOOLS_BY_NAME["run_agent_task"].input_schema
    assert run["required"] == ["goal"]
    # The specification's two, then the issue's: the agent's way and how long it waits for the person.
    assert set(run["properties"]) == {"goal", "timeoutMs", "mode", "takeoverTimeoutMs", "confirmTimeoutMs"}
    assert run["properties"]["mode"]["enum"] == ["plan", "react"]
    assert all("default" not in run["properties"][name] for name in ("mode", "takeoverTimeoutMs"))
    result = TOOLS_BY_NAME["get_task_result"].input_schema
    assert result["required"] == ["taskId"]
    assert result["properties"]["includeSteps"]["default"] is True
    for name in ("abort_task", "get_latest_task", "get_device_status"):
        assert TOOLS_BY_NAME[name].input_schema["properties"] == {}
    # take_screenshot's optional parameters change nothing when left out (source: the phone's; settle:
    # a look after an action waits for the screen to settle, issue 19).
    shot = TOOLS_BY_NAME["take_screenshot"].input_schema["properties"]
    assert set(shot) == {"maxSide", "format", "source", "settle"}
    assert shot["settle"]["type"] == "boolean" and "default" not in shot["settle"]
    assert shot["source"]["enum"] == ["phone", "live"] and "default" not in shot["source"]
    assert "required" not in TOOLS_BY_NAME["take_screenshot"].input_schema


def test_annotations_per_channel():
    run = TOOLS_BY_NAME["run_agent_task"]
    assert run.mcp_annotations()["destructiveHint"] is True
    assert run.mcp_annotations()["readOnlyHint"] is False
    assert run.webmcp_annotations() == {
        "readOnlyHint": False,
        "consequentialHint": True,
        "untrustedContentHint": True,  # its report quotes the screen
    }
    shot = TOOLS_BY_NAME["take_screenshot"]
    assert shot.mcp_annotations()["readOnlyHint"] is True
    assert "destructiveHint" not in shot.mcp_annotations()
    assert shot.webmcp_annotations() == {"readOnlyHint": True, "untrustedContentHint": True}
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
    error = _invalid("get_device_status", {"quality": 9})
    assert "no parameters" in error.message
    assert "takes maxSide, format, source" in _invalid("take_screenshot", {"quality": 9}).message


def test_enums_and_integers_are_checked():
    assert "must be one of png, jpeg" in _invalid("take_screenshot", {"format": "gif"}).message
    assert "must be one of phone, live" in _invalid("take_screenshot", {"source": "scrcpy"}).message
    assert "must be an integer" in _invalid("tap", {"x": 1.5, "y": 2}).message
    assert validate_arguments(get_tool("tap"), {"x": 3.0, "y": 4}) == {"x": 3, "y": 4, "double": False}
    assert (
        "at most 60000"
        in _invalid("wait_for", {"target": "text=a", "condition": "visible", "timeoutMs": 60001}).message
    )


def test_wait_for_extends_the_relay_limit_by_its_own_timeout():
    wait = TOOLS_BY_NAME["wait_for"]
    assert wait.timeout_ms({"timeoutMs": 60_000}) == 60_000 + wait.relay_timeout_ms


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
