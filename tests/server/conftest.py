"""Fixtures for the server tests (the helpers they use live in ``harness``)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from tests.server.harness import (
    PAGE_FILES,
    SHARED_MCP_ARGS,
    McpHarness,
    ServeProcess,
    free_port,
    serve_process,
)


@pytest.fixture(scope="session")
def page_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("page-root")
    for name, data in PAGE_FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


@pytest_asyncio.fixture(scope="module", loop_scope="session")
async def mcp_server(
    request: pytest.FixtureRequest, page_root: Path, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[McpHarness]:
    """One ``phone-agent mcp`` per test module; a module's ``MCP_SERVER_ARGS`` adds flags to it."""
    harness = McpHarness(
        port=free_port(),
        args=[*SHARED_MCP_ARGS, *getattr(request.module, "MCP_SERVER_ARGS", ()), "--root", str(page_root)],
        stderr_path=tmp_path_factory.mktemp("mcp") / "stderr.txt",
    )
    await harness.start()
    try:
        yield harness
    finally:
        await harness.stop()


@pytest.fixture(scope="module")
def served(page_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    """In this folder: one ``phone-agent serve`` per module, on the test page root, with no self-check
    (every frame a peer sees comes from its test)."""
    port = free_port()
    args = ["--port", str(port), "--root", str(page_root), "--self-check-delay", "0"]
    with serve_process(args, tmp_path_factory.mktemp("serve") / "serve.txt") as process:
        yield process


@pytest.fixture
def restored_logging() -> Iterator[None]:
    """The logging configuration as it was before the test (for tests that call configure_logging)."""
    root = logging.getLogger()
    saved = (root.handlers[:], root.level, logging.getLogger("phone_agent").level)
    yield
    root.handlers[:], root.level = saved[0], saved[1]
    logging.getLogger("phone_agent").setLevel(saved[2])
