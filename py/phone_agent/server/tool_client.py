"""``phone-agent call``: one tool call from the command line, through the shared server like ``phone-agent
mcp`` (the server on the port, started in the background when none answers; the call waits for a page
as any client's does).

``ToolClient`` holds one MCP session with the server (``front.Upstream``) for as many calls as a command
makes (``phone-agent flow run`` makes one a flow); ``run_call`` is the ``call`` command: it prints the
answer's text (or its structuredContent with ``--json``) and exits 1 with the error's code and message
when the answer is an error.
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from collections.abc import Callable
from typing import Any

import mcp.types as types

from . import background
from .front import FrontOptions, Upstream

CALL_TIMEOUT_S = 3_900.0  # a bound above any tool's own (run_flow's longest is an hour)


class ToolClient:
    """Calls tools on the shared server; ``async with`` it."""

    def __init__(self, options: FrontOptions) -> None:
        self.upstream = Upstream(options)

    async def __aenter__(self) -> ToolClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.upstream.close()

    async def call(
        self, tool: str, arguments: dict[str, Any], progress: Callable[[str], None] | None = None
    ) -> dict[str, Any]:
        """The tool's answer in wire form (``content``, ``structuredContent``, ``isError``)."""
        session = await self.upstream.get()

        async def on_progress(done: float, total: float | None, message: str | None) -> None:
            if progress is not None and message:
                progress(message)

        async with asyncio.timeout(CALL_TIMEOUT_S):
            result = await session.send_request(
                types.CallToolRequest(params=types.CallToolRequestParams(name=tool, arguments=arguments)),
                types.CallToolResult,
                progress_callback=on_progress,
            )
        return result.model_dump(by_alias=True, exclude_none=True, mode="json")


def answer_text(answer: dict[str, Any]) -> str:
    """The answer's text items, one after another; an image as a note of its size."""
    parts = []
    for item in answer.get("content", []):
        if item.get("type") == "text":
            parts.append(item["text"])
        elif item.get("type") == "image":
            size = len(base64.b64decode(item.get("data", "")))
            parts.append(f"[{item.get('mimeType', 'image')}, {size} bytes]")
    return "\n".join(parts)


def error_line(answer: dict[str, Any]) -> str:
    """``CODE: message`` of an error answer."""
    structured = answer.get("structuredContent") or {}
    code = structured.get("code", "error")
    message = structured.get("message") or answer_text(answer)
    return f"{code}: {message}"


def front_options(host: str, port: int, idle_exit_s: float) -> FrontOptions:
    """Options for the shared server a command-line client uses (and starts in the background)."""
    return FrontOptions(
        host=host,
        port=port,
        server_args=["--host", host, "--port", str(port), "--idle-exit-s", f"{idle_exit_s:g}"],
    )


async def _call_once(options: FrontOptions, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    async with ToolClient(options) as client:
        return await client.call(tool, arguments, lambda line: print(line, file=sys.stderr, flush=True))


def run_call(options: FrontOptions, tool: str, arguments: dict[str, Any], as_json: bool) -> int:
    """``phone-agent call``: 0 and the answer on stdout, or 1 and the error on stderr."""
    port = options.port
    try:
        answer = asyncio.run(_call_once(options, tool, arguments))
    except background.ServerProblem as exc:
        print(f"phone-agent: error: {exc}", file=sys.stderr)
        return 1
    except Exception as exc:
        print(f"phone-agent: error: cannot call {tool} on the server on port {port}: {exc}", file=sys.stderr)
        return 1
    if answer.get("isError"):
        print(f"phone-agent: error: {error_line(answer)}", file=sys.stderr)
        return 1
    if as_json:
        print(json.dumps(answer.get("structuredContent"), ensure_ascii=False, indent=2))
    else:
        print(answer_text(answer))
    return 0
