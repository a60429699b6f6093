"""The MCP client's own files, for the stdio fronts (``phone-agent mcp``, with or without ``--farm``).

A tool whose catalog entry has ``client_file`` takes ``path``, a file on the client's machine. The
front runs as the client's user on that machine, so it is the one that touches the file. ``phone-agent
mcp`` streams it (``streamed_call``): it opens a transfer on the server (``server/transfers.py``), names
it in the call's ``_meta``, and relays the call without ``path``; for an "upload" (push_file,
install_app) it PUTs the file's bytes as the page takes them, for a "download" (pull_file,
stop_recording) it reads the bytes the page posts into a temporary file beside ``path``, renamed once
the answer's size and SHA-256 match (a broken transfer leaves nothing), answering ``path`` in place of
the bytes. The farm's front (``farm_mcp``) still carries them inline (``outbound``/``inbound``:
``contentBase64``). Past a front, a ``path`` is refused (the page's handlers say so): the HTTP server
never reads or writes its own files for a caller.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import os
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2

from .. import errors
from ..errors import ToolError
from ..tools.catalog import TOOLS_BY_NAME
from ..tools.files import PUSH_MAX
from ..tools.transfer import CHUNK_BYTES
from .transfers import STALL_S, TRANSFER_META, TRANSFERS_PATH


def _bad_path(tool: str, problem: str, remedy: str) -> ToolError:
    return errors.invalid_argument(tool, "path", problem, remedy)


def _unreadable(tool: str, exc: OSError) -> ToolError:
    return _bad_path(
        tool,
        f"names no file this machine can read ({exc.strerror or exc})",
        "Check the path (absolute, or relative to the MCP client's working directory) and whether "
        "you may read it.",
    )


def _read(tool: str, path: Path) -> bytes:
    _size_of(tool, path)
    try:
        return path.read_bytes()
    except OSError as exc:
        raise _unreadable(tool, exc) from None


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


# -- streamed: the file moves in chunks through the server's /api/transfers (server/transfers.py) --------

# Sends one tools/call upstream with these arguments and this _meta; answers its result in wire form.
UpstreamCall = Callable[[dict[str, Any], dict[str, Any]], Awaitable[dict[str, Any]]]
FINISH_S = 60.0  # after the call answered, how long the rest of a download may take to arrive


def streams(tool: str, arguments: dict[str, Any] | None) -> bool:
    """Whether this call moves a file of this machine (``path``), streamed instead of inline."""
    spec = TOOLS_BY_NAME.get(tool)
    return spec is not None and spec.client_file is not None and bool(arguments) and "path" in arguments


async def streamed_call(
    tool: str, arguments: dict[str, Any], base_url: str, token: str, call: UpstreamCall
) -> dict[str, Any]:
    """Run a file tool whose ``path`` is a file of this machine: read or written here in chunks while the
    page pushes or pulls them over ADB, through a transfer on the server. A download is written to a
    temporary file beside ``path`` and renamed when whole: a broken transfer leaves nothing behind."""
    spec = TOOLS_BY_NAME[tool]
    relayed = dict(arguments)
    path = relayed.pop("path")
    if not isinstance(path, str) or not path.strip():
        return _bad_path(
            tool, "must be a file's path", "Give the path of a file on this machine."
        ).to_result()
    headers = {"Authorization": f"Bearer {token}"}
    timeout = httpx2.Timeout(30.0, read=STALL_S + 30.0)
    try:
        async with httpx2.AsyncClient(base_url=base_url, headers=headers, timeout=timeout) as http:
            if spec.client_file == "upload":
                if "contentBase64" in relayed:
                    raise _bad_path(
                        tool, "cannot be given with contentBase64", "Give one of path and contentBase64."
                    )
                return await _upload(tool, Path(path).expanduser(), relayed, http, call)
            return await _download(tool, Path(path).expanduser(), relayed, http, call)
    except ToolError as exc:
        return exc.to_result()


async def _open_transfer(tool: str, http: httpx2.AsyncClient, body: dict[str, Any]) -> str:
    try:
        answer = await http.post(TRANSFERS_PATH, json=body)
    except httpx2.HTTPError as exc:
        raise errors.server_unreachable(tool, f"cannot open a transfer ({exc})") from None
    if answer.status_code != 200:
        raise errors.server_unreachable(
            tool, f"it refused a transfer ({answer.status_code} {answer.text[:200]})"
        )
    return str(answer.json()["id"])


def _size_of(tool: str, path: Path) -> int:
    try:
        if path.is_dir():
            raise _bad_path(tool, f"is a directory ({path})", "Give the path of a file.")
        size = path.stat().st_size
        with path.open("rb"):  # readable?
            pass
    except OSError as exc:
        raise _unreadable(tool, exc) from None
    if size > PUSH_MAX:
        raise _bad_path(
            tool, f"is a file of {size} bytes, over the limit of {PUSH_MAX}", "Send a smaller file."
        )
    return size


async def _file_chunks(path: Path) -> AsyncIterator[bytes]:
    with path.open("rb") as file:
        while chunk := await asyncio.to_thread(file.read, CHUNK_BYTES):
            yield chunk


async def _upload(
    tool: str, path: Path, relayed: dict[str, Any], http: httpx2.AsyncClient, call: UpstreamCall
) -> dict[str, Any]:
    size = await asyncio.to_thread(_size_of, tool, path)
    transfer_id = await _open_transfer(tool, http, {"direction": "upload", "size": size})
    sending = asyncio.create_task(http.put(f"{TRANSFERS_PATH}/{transfer_id}", content=_file_chunks(path)))
    try:
        result = await call(relayed, {TRANSFER_META: transfer_id})
    finally:
        if not sending.done():
            sending.cancel()
        with contextlib.suppress(BaseException):
            await sending
    return result


async def _receive(http: httpx2.AsyncClient, url: str, part: Path) -> tuple[int, str]:
    """A download's body into ``part``; its size and SHA-256."""
    digest = hashlib.sha256()
    size = 0
    async with http.stream("GET", url) as response:
        if response.status_code != 200:
            raise OSError(f"the server answered {response.status_code}")
        with part.open("wb") as file:
            async for chunk in response.aiter_bytes(CHUNK_BYTES):
                digest.update(chunk)
                size += len(chunk)
                await asyncio.to_thread(file.write, chunk)
    return size, digest.hexdigest()


async def _download(
    tool: str, path: Path, relayed: dict[str, Any], http: httpx2.AsyncClient, call: UpstreamCall
) -> dict[str, Any]:
    named = {"devicePath": relayed.get("devicePath")}
    target = _target(path, named, tool).resolve()
    part = target.with_name(f".{target.name}.{secrets.token_hex(4)}.part")
    try:
        part.touch(exist_ok=False)
    except OSError as exc:
        raise _bad_path(
            tool,
            f"cannot be written on this machine ({exc.strerror or exc})",
            "Give a path in a directory that exists and that you may write.",
        ) from None
    try:
        transfer_id = await _open_transfer(tool, http, {"direction": "download"})
        receiving = asyncio.create_task(_receive(http, f"{TRANSFERS_PATH}/{transfer_id}", part))
        try:
            result = await call(relayed, {TRANSFER_META: transfer_id})
            if result.get("isError"):
                return result
            try:
                async with asyncio.timeout(FINISH_S):
                    size, sha256 = await asyncio.shield(receiving)
            except (OSError, httpx2.HTTPError, TimeoutError) as exc:
                raise errors.transfer_broken(
                    tool, f"the file did not arrive whole ({exc or type(exc).__name__})"
                ) from None
        finally:
            if not receiving.done():
                receiving.cancel()
            with contextlib.suppress(BaseException):
                await receiving
        structured = dict(result.get("structuredContent") or {})
        if size != structured.get("size") or sha256 != structured.get("sha256"):
            raise errors.transfer_broken(
                tool,
                f"{size} bytes arrived, the phone sent {structured.get('size')} (or their SHA-256 differ)",
            )
        try:
            os.replace(part, target)
        except OSError as exc:
            raise _bad_path(
                tool, f"cannot be written on this machine ({exc.strerror or exc})", "Give another path."
            ) from None
    finally:
        part.unlink(missing_ok=True)
    structured["path"] = str(target)
    content = [dict(item) for item in result.get("content") or []]
    note = {"type": "text", "text": f"written to {target} ({size} bytes)"}
    return {**result, "content": [*content, note], "structuredContent": structured}
