"""Recording: the device tools start_recording and stop_recording — the phone's screen as an MP4.

The phone's own ``screenrecord`` records (H.264 in MP4, up to its 180 s limit); stop_recording ends it
with SIGINT so the file is finished, pulls it back and answers it inline (base64, up to 64 MiB) or, through
``phone-agent mcp``, at ``path`` on the caller's machine. Pure: the phone is reached only through the
``Device`` interface.
"""

from __future__ import annotations

from typing import Any

from .. import errors
from .files import CLIENT_PATH, FILE_RESULT, INLINE_MAX, file_answer, path_refused
from .results import action_result
from .spec import BOOLEAN, INTEGER, STRING, CallEnv, ToolSpec, object_schema, result_schema
from .transfer import sink_of, write_all

MAX_SECONDS = 180  # screenrecord's own limit


async def start_recording(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    phone = env.session()
    seconds = args["maxSeconds"]
    via = await phone.device.start_recording(seconds)
    return action_result(
        f"recording the screen (at most {seconds} s; stop_recording ends it and answers the MP4)",
        {"recording": True, "maxSeconds": seconds, "via": via},
    )


START_RECORDING = ToolSpec(
    name="start_recording",
    title="Start recording the screen",
    description="Start recording the phone's screen as video (at most maxSeconds, default and limit 180); "
    "stop_recording ends it and answers the MP4.",
    input_schema=object_schema(
        {
            "maxSeconds": {
                "type": "integer",
                "minimum": 1,
                "maximum": MAX_SECONDS,
                "default": MAX_SECONDS,
                "description": "Stop by itself after this many seconds (default and limit 180).",
            }
        }
    ),
    read_only=False,
    consequential=False,
    relay_timeout_ms=20_000,
    output_schema=result_schema(
        {"recording": BOOLEAN, "maxSeconds": INTEGER, "via": STRING}, ["recording", "maxSeconds", "via"]
    ),
    run=start_recording,
)


async def stop_recording(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    if "path" in args:
        raise path_refused("stop_recording")
    phone = env.session()
    data = await phone.device.stop_recording()
    sink = sink_of(env)
    if sink is not None:  # to the caller's file, in chunks
        await write_all(sink, data)
        answer = file_answer(f"recorded {len(data)} bytes of MP4", "", data, inline=False)
        answer["structuredContent"].pop("devicePath")
        answer["structuredContent"]["mimeType"] = "video/mp4"
        return answer
    if len(data) > INLINE_MAX:
        raise errors.invalid_argument(
            "stop_recording",
            "path",
            f"is needed: the recording is {len(data)} bytes, over the {INLINE_MAX} an answer carries",
            "Record a shorter stretch (start_recording maxSeconds), or call through phone-agent mcp "
            "with path.",
        )
    answer = file_answer(f"recorded {len(data)} bytes of MP4", "", data, inline=True)
    answer["structuredContent"].pop("devicePath")
    answer["structuredContent"]["mimeType"] = "video/mp4"
    return answer


STOP_RECORDING = ToolSpec(
    name="stop_recording",
    title="Stop recording the screen",
    description="Stop the recording start_recording began and answer the MP4: inline as contentBase64 (up to "
    "64 MiB) with size and sha256, or written to path (a file on your machine, through phone-agent mcp).",
    input_schema=object_schema({"path": CLIENT_PATH}),
    read_only=False,
    consequential=False,
    relay_timeout_ms=120_000,
    output_schema=result_schema(
        {key: value for key, value in FILE_RESULT.items() if key != "devicePath"} | {"mimeType": STRING},
        ["size", "sha256", "mimeType"],
    ),
    run=stop_recording,
    client_file="download",
)
