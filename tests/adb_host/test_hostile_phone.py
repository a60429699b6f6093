"""A hostile phone cannot make a host take without bound: the simulated phone told to answer as a broken
or malicious one would (``sim/hostile.py``: logcat and dumpsys without end, a PNG without end, a
hierarchy server's answer without end) is cut off at each cap, with a ``device_error`` naming it, and the
very next call works; pulls stop at their cap (pull_file's ``maxBytes``) and the hierarchy server's
answer is parsed against its own. Through the page's one dispatch and the project's ADB client."""

from __future__ import annotations

import base64
import time

import pytest

from phone_agent.adb.client import AdbOutputTooLarge
from phone_agent.adb.device import SCREENCAP_MAX, AdbDevice
from phone_agent.adb.hierarchy_protocol import BODY_MAX, HttpResponseParser
from phone_agent.adb.services import SHELL_OUTPUT_MAX
from phone_agent.sim.hostile import hostile_modes
from phone_agent.tools.dispatch import ToolDispatcher
from phone_agent.tools.spec import Channel
from tests.adb_host.test_hierarchy import JAR

MIB = 1024 * 1024


SIM_OPTIONS = {"scrcpy": True}  # app_process: the hierarchy server can run


@pytest.fixture
async def ctx(client):
    service = ToolDispatcher()
    service.device = AdbDevice(client, transport="tcp", hierarchy_jar=JAR.read_bytes())
    yield service
    if service.device.hierarchy is not None:
        await service.device.hierarchy.close()


async def call(ctx: ToolDispatcher, tool: str, **args) -> dict:
    return await ctx.dispatch(tool, args, Channel.RELAY)


def refused_at_cap(result: dict, cap: int) -> str:
    assert result.get("isError"), result
    error = result["structuredContent"]
    assert error["code"] == "device_error" and error["retryable"] is False, error
    assert f"{cap // MIB} MiB ({cap} bytes)" in error["message"] and "cap" in error["message"], error
    assert error["remedy"]
    return error["message"]


async def still_answers(ctx: ToolDispatcher) -> None:
    status = await call(ctx, "get_device_status")
    assert status["structuredContent"]["connected"] is True, status


async def test_logcat_and_dumpsys_without_end_stop_at_the_shell_cap(ctx, sim):
    sim.set_hostile(["flood-output"])
    started = time.monotonic()
    said = refused_at_cap(await call(ctx, "read_logs", maxLines=10), SHELL_OUTPUT_MAX)
    assert "logcat" in said
    refused_at_cap(await call(ctx, "list_notifications"), SHELL_OUTPUT_MAX)
    assert time.monotonic() - started < 60
    await still_answers(ctx)
    sim.set_hostile([])
    logs = await call(ctx, "read_logs", maxLines=10)
    assert not logs.get("isError"), logs


async def test_a_png_without_end_stops_at_the_screenshot_cap(ctx, sim):
    sim.set_hostile(["huge-png"])
    refused_at_cap(await call(ctx, "take_screenshot"), SCREENCAP_MAX)
    await still_answers(ctx)
    sim.set_hostile([])
    shot = await call(ctx, "take_screenshot")
    assert not shot.get("isError"), shot


async def test_a_png_that_says_it_is_gigapixels_is_never_decoded(ctx, sim):
    sim.set_hostile(["png-bomb"])
    for args in ({}, {"maxSide": 512}, {"format": "jpeg"}):
        result = await call(ctx, "take_screenshot", **args)
        error = result["structuredContent"]
        assert error["code"] == "device_error", error
        assert "100000x100000 pixels, over the cap of 16384 pixels a side" in error["message"], error
    await still_answers(ctx)


async def test_a_hierarchy_answer_without_end_stops_at_its_cap(ctx, sim):
    listed = await call(ctx, "list_elements")  # the server up, the normal way
    assert listed["structuredContent"]["treeSource"] == "hierarchy-server", listed
    sim.set_hostile(["huge-hierarchy"])
    said = refused_at_cap(await call(ctx, "list_elements"), BODY_MAX)
    assert "hierarchy server" in said
    await still_answers(ctx)
    sim.set_hostile([])
    again = await call(ctx, "list_elements")  # a fresh stream: nothing of the flood is left to read
    assert not again.get("isError") and again["structuredContent"]["treeSource"] == "hierarchy-server", again


async def test_a_pull_stops_at_max_bytes_and_more_can_be_asked_for(ctx, sim):
    sim.fs.write_file("/sdcard/Download/big.bin", b"\x01" * (3 * MIB))
    refused = await call(ctx, "pull_file", devicePath="/sdcard/Download/big.bin", maxBytes=MIB)
    error = refused["structuredContent"]
    assert error["code"] == "invalid_argument" and f"cap of {MIB} bytes (maxBytes)" in error["message"]
    assert "maxBytes" in error["remedy"]
    pulled = await call(ctx, "pull_file", devicePath="/sdcard/Download/big.bin", maxBytes=4 * MIB)
    assert base64.b64decode(pulled["structuredContent"]["contentBase64"]) == b"\x01" * (3 * MIB)
    too_much = await call(ctx, "pull_file", devicePath="/sdcard/Download/big.bin", maxBytes=65 * MIB)
    assert too_much["structuredContent"]["code"] == "invalid_argument"
    assert too_much["structuredContent"]["details"]["field"] == "maxBytes"


def test_the_sim_knows_its_hostile_modes_by_name():
    assert hostile_modes(["huge-png"]) == {"huge-png"}
    with pytest.raises(ValueError, match="unknown hostile mode 'everything'"):
        hostile_modes(["everything"])


# ----- the hierarchy server's answer, parsed against its cap ---------------------------------------------


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999\r\n\r\n{",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nffffffffff\r\nabc",
        b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n" + b"x" * (2 * MIB),
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + (b"100000\r\n" + b"y" * MIB + b"\r\n") * 3,
    ],
    ids=["content-length", "one-giant-chunk", "close-delimited", "many-chunks"],
)
def test_the_parser_refuses_a_body_over_its_cap_as_soon_as_it_shows(answer):
    parser = HttpResponseParser(max_body=MIB)
    with pytest.raises(AdbOutputTooLarge) as caught:
        for start in range(0, len(answer), 64 * 1024):
            parser.feed(answer[start : start + 64 * 1024])
    assert caught.value.cap == MIB and "hierarchy server" in str(caught.value)


def test_a_body_within_the_cap_is_read_whole():
    body = b"z" * (MIB - 10)
    parser = HttpResponseParser(max_body=MIB)
    response = parser.feed(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    assert response is not None and response.body == body
