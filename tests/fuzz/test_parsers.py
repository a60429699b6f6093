"""Property tests on every parser that takes bytes or text from outside: whatever comes in, only the
module's documented errors come out, nothing hangs, and what an encoder writes parses back.

The targets live in ``targets.py`` (shared with ``bench/fuzz_soak.py``, which runs them by the
hundred thousand); here each runs at the ``fuzz-ci`` profile's modest count. Set
``PHONE_AGENT_FUZZ_PROFILE=fuzz-soak`` to run the soak's count under pytest.
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import given

from tests.fuzz.targets import FUZZ, TARGETS

BY_NAME = {target.name: target for target in TARGETS}


def _fuzz(name: str) -> Callable[[], None]:
    target = BY_NAME[name]

    @FUZZ
    @given(target.strategy)
    def test(args: tuple) -> None:
        target.check(*args)

    return test


test_adb_packets_parse_or_raise_only_protocol_errors = _fuzz("adb packets (parser)")
test_adb_packets_round_trip_however_the_bytes_are_cut = _fuzz("adb packets (round trip)")
test_the_adb_host_side_survives_any_device = _fuzz("adb host side")
test_the_simulated_adbd_survives_any_host = _fuzz("adb device side (sim)")
test_shell_v2_packets_decode_or_raise_only_shell_errors = _fuzz("shell v2 decoder")
test_shell_v2_packets_round_trip = _fuzz("shell v2 (round trip)")
test_the_shell_service_answers_output_or_adb_errors = _fuzz("shell v2 service")
test_sync_replies_give_results_or_sync_errors = _fuzz("sync replies")
test_sync_pull_round_trips_its_data_chunks = _fuzz("sync pull (round trip)")
test_sync_list_round_trips_its_entries = _fuzz("sync list (round trip)")
test_adb_server_replies_give_results_or_adb_errors = _fuzz("adb server replies")
test_adb_server_strings_round_trip = _fuzz("adb server (round trip)")
test_any_devices_list_parses = _fuzz("adb server devices list")
test_devices_lists_round_trip = _fuzz("adb server devices (round trip)")
test_any_relay_frame_parses_to_a_frame = _fuzz("relay frames")
test_relay_frames_round_trip = _fuzz("relay frames (round trip)")
test_any_page_url_gives_relay_settings = _fuzz("relay settings")
test_sse_streams_parse_the_same_however_cut = _fuzz("sse stream")
test_sse_events_round_trip = _fuzz("sse (round trip)")
test_any_chat_chunks_give_model_events = _fuzz("chat chunks")
test_any_ui_dump_gives_nodes_or_a_device_error = _fuzz("uiautomator xml")
test_ui_dumps_round_trip = _fuzz("uiautomator xml (round trip)")
test_any_target_text_parses_or_gives_a_locator_error = _fuzz("locators")
test_locators_round_trip = _fuzz("locators (round trip)")
test_joined_locators_round_trip = _fuzz("joined locators (round trip)")
test_any_tool_arguments_validate_or_give_a_tool_error = _fuzz("tool arguments")


def test_every_target_has_its_test() -> None:
    fuzzed = {
        name for name, value in globals().items() if name.startswith("test_") and hasattr(value, "hypothesis")
    }
    assert len(fuzzed) == len(TARGETS)


def test_a_version_that_is_not_a_number_is_an_adb_error() -> None:
    # Found by fuzzing: host:version answered with text that is not hex raised ValueError.
    import asyncio

    import pytest

    from phone_agent.adb.client import AdbError
    from phone_agent.adb.smart_socket import AdbServerClient
    from tests.fuzz.targets import _ScriptedPipe

    async def connect() -> _ScriptedPipe:
        return _ScriptedPipe([b"OKAY0003xyz"])

    with pytest.raises(AdbError, match="not a version"):
        asyncio.run(AdbServerClient(connect, timeout=1.0).version())
