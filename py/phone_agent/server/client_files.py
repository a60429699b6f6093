"""The MCP client's own files, for the stdio fronts (``phone-agent mcp``, with or without ``--farm``).

A tool whose catalog entry has ``client_file`` takes ``path``, a file on the client's machine. The
front runs as the client's user on that machine, so it is the one that touches the file: for an
"upload" (push_file, install_app) it reads ``path`` and relays ``contentBase64`` instead; for a
"download" (pull_file, stop_recording) it relays the call without ``path`` and writes the answer's
``contentBase64`` to ``path``, answering ``path`` in its place. Past a front, a ``path`` is refused
(the page's handlers say so): the HTTP server never reads or writes its own files for a caller.
"""

from __future__ import annotations

import asyncio
import base64
import os
import time
from pathlib import Path
from typing import Any

from .. import errors
from ..errors import ToolError
from ..tools.catalog import TOOLS_BY_NAME
from ..tools.files import PUSH_MAX


def _bad_path(tool: str, problem: str, remedy: str) -> ToolError:
    return errors.invalid_argument(tool, "path", problem, remedy)


def _read(tool: str, path: Path) -> bytes:
    try:
        size = path.stat().st_size
        if path.is_dir():
            raise _bad_path(tool, f"is a directory ({path})", "Give the path of a file.")
        if size > PUSH_MAX:
            raise _bad_path(
                tool, f"is a file of {size} bytes, over the limit of {PUSH_MAX}", "Send a smaller file."
            )
        return path.read_bytes()
    except OSError as exc:
        raise _bad_path(
            tool,
            f"names no file this machine can read ({exc.strerror or exc})",
            "Check the path (absolute, or relative to the MCP client's working directory) and whether "
            "you may read it.",
        ) from None


def _target(path: Path, structured: dict[str, Any], tool: str) -> Path:
    if path.is_dir():
        name = os.path.basename(str(structured.get("devicePath") or "").rstrip("/"))
        if not name:
            name = time.strftime("recording-%Y%m%d-%H%M%S.mp4") if tool == "stop_recording" else "pulled.bin"
        return path / name
    return path


def _write(tool: str, path: Path, data: bytes, structured: dict[str, Any]) -> Path:
    target = _target(path.expanduser(), structured, tool).resolve()
    part = target.with_name(target.name + ".part")
    try:
        part.write_bytes(data)
        os.replace(part, target)
    except OSError as exc:
        part.unlink(missing_ok=True)
        raise _bad_path(
            tool,
            f"cannot be written on this machine ({exc.strerror or exc})",
            "Give a path in a directory that exists and that you may write.",
        ) from None
    return target


async def outbound(tool: str, arguments: dict[str, Any] | None) -> tuple[dict[str, Any] | None, str | None]:
    """The arguments to relay for a call (``path`` read into contentBase64, or taken out for a
    download) and the path a download is to be written to. Raises ToolError for an unusable path."""
    spec = TOOLS_BY_NAME.get(tool)
    if spec is None or spec.client_file is None or not arguments or "path" not in arguments:
        return arguments, None
    relayed = dict(arguments)
    path = relayed.pop("path")
    if not isinstance(path, str) or not path.strip():
        raise _bad_path(tool, "must be a file's path", "Give the path of a file on this machine.")
    if spec.client_file == "upload":
        if "contentBase64" in relayed:
            raise _bad_path(tool, "cannot be given with contentBase64", "Give one of path and contentBase64.")
        data = await asyncio.to_thread(_read, tool, Path(path).expanduser())
        relayed["contentBase64"] = base64.b64encode(data).decode("ascii")
        return relayed, None
    return relayed, path


async def inbound(tool: str, download: str | None, result: dict[str, Any]) -> dict[str, Any]:
    """The answer to give the client: a download's bytes written to its path, and path in their place."""
    if download is None or result.get("isError"):
        return result
    structured = dict(result.get("structuredContent") or {})
    encoded = structured.pop("contentBase64", None)
    if not isinstance(encoded, str):
        return result
    data = base64.b64decode(encoded)
    try:
        written = await asyncio.to_thread(_write, tool, Path(download), data, structured)
    except ToolError as exc:
        return exc.to_result()
    structured["path"] = str(written)
    content = [dict(item) for item in result.get("content") or []]
    note = {"type": "text", "text": f"written to {written} ({len(data)} bytes)"}
    return {**result, "content": [*content, note], "structuredContent": structured}
