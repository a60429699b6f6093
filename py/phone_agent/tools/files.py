"""Files: the device tools that move files between the caller and the phone over ADB's sync protocol —
push_file, pull_file and list_files — and how every tool takes or gives a file's bytes.

Inline, bytes travel as base64 (``contentBase64``): in up to 256 MiB, out up to 64 MiB. A ``path`` names a
file on the MCP client's machine: ``phone-agent mcp`` (the stdio front, running as the client's user)
reads or writes it there and streams it in chunks through the server's transfers (``server/transfers.py``;
``ToolSpec.client_file`` says which way); the handler then gets its end in ``CallEnv.transfer``
(``tools/transfer.py``) and pushes chunks over ADB sync as they come, or hands the phone's bytes on as
sync reads them — never the whole file twice. A ``path`` that reaches a tool here came some other way
(HTTP ``/mcp``, WebMCP) and is refused: the server never reads or writes its own files for a caller.
Pure: the phone is reached only through the ``Device`` interface.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Callable
from typing import Any

from .. import errors
from ..errors import ToolError
from .results import action_result
from .spec import INTEGER, STRING, CallEnv, ToolSpec, object_schema, result_schema
from .transfer import Batcher, HashingSource, sink_of, source_of

INLINE_MAX = 64 * 1024 * 1024  # bytes an answer carries inline
PUSH_MAX = 256 * 1024 * 1024  # bytes a call may send
STREAM_MAX = 1 << 40  # the most a pull streamed to the caller's file may ask for (maxBytes)
STREAM_DEFAULT = 1 << 30  # a pull to a file stops here unless the caller asks for more (maxBytes)
TRANSFER_TIMEOUT_MS = 900_000

DEVICE_PATH = {
    "type": "string",
    "minLength": 1,
    "maxLength": 1024,
    "description": "An absolute path on the phone, e.g. /sdcard/Download/report.pdf (the shell user may "
    "write /sdcard and /data/local/tmp).",
}
CLIENT_PATH = {
    "type": "string",
    "minLength": 1,
    "maxLength": 4096,
    "description": "A file on the MCP client's machine, read or written by `phone-agent mcp` (stdio) as "
    "your user. Refused over HTTP /mcp and WebMCP: send contentBase64 instead.",
}
CONTENT_BASE64 = {
    "type": "string",
    "minLength": 1,
    "maxLength": (PUSH_MAX + 2) // 3 * 4,
    "description": "The file's bytes, base64-encoded (at most 256 MiB).",
}
FILE_RESULT = {
    "devicePath": STRING,
    "size": INTEGER,
    "sha256": STRING,
    "contentBase64": STRING,
    "path": STRING,
}


def path_refused(tool: str) -> ToolError:
    """A ``path`` that reached the page: only the stdio front may read or write the caller's files."""
    return errors.invalid_argument(
        tool,
        "path",
        "names a file on your machine, which only phone-agent mcp (stdio) reads or writes; this server "
        "never reads or writes its own files for a caller",
        "Send the file's bytes as contentBase64 instead (or call through `phone-agent mcp`, which takes "
        "path on your machine).",
    )


def content_of(tool: str, args: dict[str, Any]) -> bytes:
    """The bytes a call sends: its ``contentBase64`` (``path`` refused, one of them required)."""
    if "path" in args:
        raise path_refused(tool)
    if "contentBase64" not in args:
        raise errors.invalid_argument(
            tool,
            "contentBase64",
            "is required (the file's bytes, base64-encoded)",
            f"Call {tool} with contentBase64, or with path through `phone-agent mcp`.",
        )
    try:
        data = base64.b64decode("".join(args["contentBase64"].split()), validate=True)
    except (binascii.Error, ValueError):
        raise errors.invalid_argument(
            tool, "contentBase64", "is not valid base64", "Encode the file's bytes with standard base64."
        ) from None
    if len(data) > PUSH_MAX:
        raise errors.invalid_argument(
            tool,
            "contentBase64",
            f"holds {len(data)} bytes, over the limit of {PUSH_MAX}",
            "Send a smaller file.",
        )
    return data


def file_answer(text: str, device_path: str, data: bytes, *, inline: bool) -> dict[str, Any]:
    """A file's size and SHA-256 (and its bytes, when ``inline``), as push/pull/stop_recording answer."""
    structured: dict[str, Any] = {
        "devicePath": device_path,
        "size": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    if inline:
        structured["contentBase64"] = base64.b64encode(data).decode("ascii")
    return action_result(text, structured)


def transfer_progress(env: CallEnv, what: str) -> Callable[[int, int], None] | None:
    """A ``progress(sent, total)`` that reports each further tenth of a transfer to the caller."""
    sink = env.progress
    if sink is None:
        return None
    shown = [-1]

    def report(sent: int, total: int) -> None:
        tenth = sent * 10 // max(total, 1)
        if tenth > shown[0]:
            shown[0] = tenth
            sink(f"{what}: {sent * 100 // max(total, 1)}% ({sent} of {total} bytes)")

    return report


def _absolute(tool: str, path: str) -> str:
    path = path.strip()
    if not path.startswith("/") or "\x00" in path:
        raise errors.invalid_argument(
            tool,
            "devicePath",
            "must be an absolute path on the phone",
            "Give a path such as /sdcard/file.txt.",
        )
    return path


async def push_file(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    device_path = _absolute("push_file", args["devicePath"])
    source = source_of(env)
    data = content_of("push_file", args) if source is None else b""
    phone = env.session()
    if device_path.endswith("/"):
        raise errors.invalid_argument(
            "push_file", "devicePath", "names a directory", "Give the file's full path, e.g. /sdcard/a.txt."
        )
    sending = transfer_progress(env, f"sending {device_path}")
    if source is not None:  # streamed from the caller's file: pushed over sync as it arrives
        streamed = HashingSource(source)
        await phone.device.push_file(streamed, device_path, progress=sending)
        return action_result(
            f"pushed {streamed.read_bytes} bytes to {device_path}",
            {"devicePath": device_path, "size": streamed.read_bytes, "sha256": streamed.sha256},
        )
    await phone.device.push_file(data, device_path, progress=sending)
    return file_answer(f"pushed {len(data)} bytes to {device_path}", device_path, data, inline=False)


PUSH_FILE = ToolSpec(
    name="push_file",
    title="Push a file to the phone",
    description="Write a file on the phone (over ADB sync): its bytes as contentBase64, or path (a file on "
    "your machine, through phone-agent mcp). Missing directories are created; an existing file is replaced.",
    input_schema=object_schema(
        {"devicePath": DEVICE_PATH, "path": CLIENT_PATH, "contentBase64": CONTENT_BASE64},
        required=["devicePath"],
    ),
    read_only=False,
    consequential=True,
    relay_timeout_ms=TRANSFER_TIMEOUT_MS,
    output_schema=result_schema(FILE_RESULT, ["devicePath", "size", "sha256"]),
    run=push_file,
    idempotent=True,
    client_file="upload",
)


async def pull_file(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    if "path" in args:
        raise path_refused("pull_file")
    device_path = _absolute("pull_file", args["devicePath"])
    phone = env.session()
    sink = sink_of(env)
    limit = args.get("maxBytes", STREAM_DEFAULT if sink is not None else INLINE_MAX)
    if sink is None and limit > INLINE_MAX:
        raise errors.invalid_argument(
            "pull_file",
            "maxBytes",
            f"is over the {INLINE_MAX} bytes an answer carries inline",
            "Give maxBytes up to 64 MiB, or pull it with path through phone-agent mcp (stdio), which "
            "writes it to a file (up to maxBytes, 1 GiB unless asked for more).",
        )
    if sink is not None:  # streamed to the caller's file: never held whole here
        listed = await phone.device.list_files(device_path)  # a file lists itself: its size, for progress
        total = listed[0].size if len(listed) == 1 and listed[0].type == "file" else 0
        receiving = transfer_progress(env, f"receiving {device_path}")
        out = Batcher(sink, None if receiving is None else lambda done: receiving(done, max(total, done)))
        await phone.device.pull_file(device_path, limit, into=out.write)
        await out.flush()
        return action_result(
            f"pulled {device_path} ({out.size} bytes)",
            {"devicePath": device_path, "size": out.size, "sha256": out.sha256},
        )
    data = await phone.device.pull_file(device_path, limit)
    return file_answer(f"pulled {device_path} ({len(data)} bytes)", device_path, data, inline=True)


PULL_FILE = ToolSpec(
    name="pull_file",
    title="Pull a file from the phone",
    description="Read a file from the phone (over ADB sync): its bytes come back as contentBase64 (up to "
    "64 MiB) with size and sha256, or are written to path (a file on your machine, through phone-agent mcp). "
    "maxBytes caps what the phone may send (default 64 MiB inline, 1 GiB to path): a larger file is "
    "refused, never cut.",
    input_schema=object_schema(
        {
            "devicePath": DEVICE_PATH,
            "path": CLIENT_PATH,
            "maxBytes": {
                "type": "integer",
                "minimum": 1,
                "maximum": STREAM_MAX,
                "description": "At most this many bytes (default 64 MiB inline, the most an answer "
                "carries; 1 GiB with path). A larger file is refused.",
            },
        },
        required=["devicePath"],
    ),
    read_only=True,
    consequential=False,
    relay_timeout_ms=TRANSFER_TIMEOUT_MS,
    output_schema=result_schema(FILE_RESULT, ["devicePath", "size", "sha256"]),
    run=pull_file,
    client_file="download",
)

ENTRY_SCHEMA = result_schema(
    {
        "name": STRING,
        "type": {"type": "string", "enum": ["file", "directory", "symlink", "other"]},
        "size": INTEGER,
        "mode": INTEGER,
        "mtime": INTEGER,
    },
    ["name", "type", "size", "mode", "mtime"],
)


async def list_files(env: CallEnv, args: dict[str, Any]) -> dict[str, Any]:
    device_path = _absolute("list_files", args["devicePath"])
    phone = env.session()
    entries = [entry.to_json() for entry in await phone.device.list_files(device_path)]
    entries.sort(key=lambda entry: entry["name"])
    lines = [
        f"{'d' if e['type'] == 'directory' else '-'}{e['mode']:04o} {e['size']:>10} {e['name']}"
        for e in entries
    ]
    text = f"{device_path}: {len(entries)} entries" + ("\n" + "\n".join(lines) if lines else "")
    return action_result(text, {"devicePath": device_path, "entries": entries})


LIST_FILES = ToolSpec(
    name="list_files",
    title="List files on the phone",
    description="The entries of a directory on the phone (name, type, size, mode, mtime in seconds since the "
    "epoch); a file lists itself.",
    input_schema=object_schema({"devicePath": DEVICE_PATH}, required=["devicePath"]),
    read_only=True,
    consequential=False,
    relay_timeout_ms=60_000,
    output_schema=result_schema(
        {"devicePath": STRING, "entries": {"type": "array", "items": ENTRY_SCHEMA}}, ["devicePath", "entries"]
    ),
    untrusted_content=True,
    run=list_files,
)
