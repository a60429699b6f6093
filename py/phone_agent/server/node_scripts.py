"""The flow scripts' engine in CPython: the page's own engine (``static/flow_scripts/engine.mjs``, QuickJS
compiled to WebAssembly, sandboxed and bounded) run by Node, one process a flow run, spoken to with one
JSON line a request (``node_host.mjs``). A dispatcher running flows outside the page (the tests, a CI
script) gets ``NodeScriptEngine`` as its ``script_engine``. Every wait is bounded: an evaluation that does
not answer within its time limit and a margin ends the process and fails as a timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import shutil
from pathlib import Path
from typing import Any

from ..flows.scripts import ScriptError, ScriptOptions, ScriptResult
from .options import default_root

HOST = default_root() / "static" / "flow_scripts" / "node_host.mjs"
MARGIN_S = 5.0  # beyond an evaluation's own limit, for http requests and the process itself
START_S = 20.0


class NodeScriptEngine:
    """Opens a Node process with the engine for each run."""

    def __init__(self, node: str | None = None, host: Path = HOST) -> None:
        self.node = node or shutil.which("node") or "node"
        self.host = host

    async def open(self, options: ScriptOptions) -> NodeScriptSession:
        process = await asyncio.create_subprocess_exec(
            self.node,
            str(self.host),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=str(self.host.parent),
            limit=64 << 20,
        )
        session = NodeScriptSession(process, options)
        try:
            await session.request(
                "open",
                {
                    "options": {
                        "allowedHosts": list(options.allowed_hosts),
                        "timeoutMs": options.timeout_ms,
                        "memoryBytes": options.memory_bytes,
                        "platform": options.platform,
                    }
                },
                START_S,
            )
        except BaseException:
            await session.close()
            raise
        return session


class NodeScriptSession:
    """One run's engine: a Node process answering one request at a time."""

    def __init__(self, process: asyncio.subprocess.Process, options: ScriptOptions) -> None:
        self.process, self.options = process, options
        self.ids = itertools.count(1)
        self.lock = asyncio.Lock()

    async def request(self, op: str, body: dict[str, Any], limit_s: float) -> dict[str, Any]:
        stdin, stdout = self.process.stdin, self.process.stdout
        if stdin is None or stdout is None or self.process.returncode is not None:
            raise ScriptError("the JavaScript engine is not running", kind="script_error")
        async with self.lock:
            request_id = next(self.ids)
            stdin.write((json.dumps({"id": request_id, "op": op, **body}) + "\n").encode())
            try:
                await stdin.drain()
                line = await asyncio.wait_for(stdout.readline(), limit_s)
            except TimeoutError:
                await self.close()
                raise ScriptError(
                    f"the JavaScript engine did not answer within {limit_s:.0f} s and was stopped",
                    kind="timeout",
                ) from None
            except OSError as exc:
                raise ScriptError(f"the JavaScript engine stopped: {exc}") from None
        if not line:
            error = b""
            if self.process.stderr is not None:
                with contextlib.suppress(Exception):
                    error = await asyncio.wait_for(self.process.stderr.read(4000), 1)
            raise ScriptError(f"the JavaScript engine stopped: {error.decode(errors='replace').strip()}")
        answer = json.loads(line)
        if not answer.get("ok"):
            error = answer.get("error") or {}
            raise ScriptError(
                str(error.get("message", "the script failed")),
                str(error.get("source", "")),
                int(error.get("line", 0) or 0),
                str(error.get("kind", "script_error")),
            )
        return answer

    async def evaluate(
        self, code: str, *, kind: str, source: str, line: int, env: dict[str, str], copied_text: str
    ) -> ScriptResult:
        request = {
            "code": code,
            "kind": kind,
            "source": source,
            "line": line,
            "env": env,
            "copiedText": copied_text,
        }
        answer = await self.request(
            "evaluate", {"request": request}, self.options.timeout_ms / 1000 + MARGIN_S
        )
        return ScriptResult(str(answer.get("value", "")), [str(line) for line in answer.get("logs", [])])

    async def close(self) -> None:
        if self.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.process.wait(), 5)
