"""What a client on the newest MCP revision (2026-07-28, the SDK's ``Client`` default) receives.

On that revision the SDK's ``send_log_message`` sends nothing unless the request opted in with the
``io.modelcontextprotocol/logLevel`` ``_meta`` key. The specification wants progress visible to every
client that gave no progressToken, so phone-agent sends ``notifications/message`` itself — unless the
client opted in at a level above info, which it honours.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
import pytest
from mcp.client.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.server.harness import PHONE_AGENT, free_port, page_peer, stop_server


async def run_agent_with_progress(
    page_root: Path, errlog_path: Path, log_level: Any, progress: bool
) -> tuple[str | None, list[Any], list[Any]]:
    port = free_port()
    params = StdioServerParameters(
        command=PHONE_AGENT,
        args=["mcp", "--port", str(port), "--root", str(page_root), "--self-check-delay", "0"],
        env=dict(os.environ),  # the session's PHONE_AGENT_HOME (the SDK passes only a few variables)
    )
    logs: list[types.LoggingMessageNotificationParams] = []
    progressed: list[tuple[float, str | None]] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progressed.append((value, message))

    try:
        with errlog_path.open("w") as errlog, anyio.fail_after(60):
            async with Client(
                stdio_client(params, errlog=errlog), logging_callback=on_log, log_level=log_level
            ) as client:
                version = client.session.protocol_version
                async with page_peer(port) as peer:
                    call = asyncio.create_task(
                        client.call_tool(
                            "run_agent_task",
                            {"goal": "g"},
                            progress_callback=on_progress if progress else None,
                        )
                    )
                    request = await peer.next_request("run_agent_task")
                    await peer.progress(request, 1, "one")
                    await peer.progress(request, 2, "two")
                    await peer.answer(request, {"content": [{"type": "text", "text": "done"}]})
                    result = await call
                    assert not result.is_error
    finally:
        await asyncio.to_thread(stop_server, port)
    return version, logs, progressed


@pytest.mark.parametrize(
    ("log_level", "expected"), [(None, ["one", "two"]), ("debug", ["one", "two"]), ("warning", [])]
)
async def test_a_modern_client_without_a_progress_token_gets_log_messages_unless_it_asked_for_less(
    page_root: Path, tmp_path: Path, log_level: Any, expected: list[str]
) -> None:
    version, logs, progressed = await run_agent_with_progress(
        page_root, tmp_path / "stderr.txt", log_level, False
    )
    assert version == "2026-07-28"
    assert [log.data for log in logs] == expected
    assert all(log.level == "info" and log.logger == "phone-agent" for log in logs)
    assert progressed == []


async def test_a_modern_client_with_a_progress_token_gets_progress_notifications(
    page_root: Path, tmp_path: Path
) -> None:
    version, logs, progressed = await run_agent_with_progress(page_root, tmp_path / "stderr.txt", None, True)
    assert version == "2026-07-28"
    assert progressed == [(1.0, "one"), (2.0, "two")]
    assert logs == []
