"""The page's engine for flow scripts: ``static/flow_scripts/worker.mjs``, a dedicated module Worker running
QuickJS compiled to WebAssembly (``engine.mjs``) — chosen over evaluating in an isolated Worker with the
browser's own JavaScript because a Worker still has fetch, IndexedDB of the page's origin, WebSocket and
importScripts; QuickJS has only what the engine hands it (Maestro's objects and its allowed-host ``http``),
and its interrupt handler and allocator bound time and memory. The Worker keeps the page responsive
while a script runs and gives Maestro's synchronous ``http`` a synchronous XMLHttpRequest.

One Worker a flow run (``WorkerScriptEngine.open``); every wait on it is bounded: a Worker that does not
answer within the evaluation's limit and a margin is terminated and the evaluation fails as a timeout.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import js  # type: ignore[import-not-found]
from pyodide.ffi import create_proxy  # type: ignore[import-not-found]

from ..flows.scripts import ScriptError, ScriptOptions, ScriptResult
from .interop import to_js_json

WORKER_URL = "./static/flow_scripts/worker.mjs"
MARGIN_S = 5.0
START_S = 20.0


class WorkerScriptEngine:
    """Opens a Worker with the engine for each flow run."""

    def __init__(self, url: str = WORKER_URL) -> None:
        self.url = url

    async def open(self, options: ScriptOptions) -> WorkerScriptSession:
        worker = js.Worker.new(self.url, to_js_json({"type": "module", "name": "flow-scripts"}))
        session = WorkerScriptSession(worker, options)
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


class WorkerScriptSession:
    """One run's Worker; one request at a time."""

    def __init__(self, worker: Any, options: ScriptOptions) -> None:
        self.worker, self.options = worker, options
        self.ids = itertools.count(1)
        self.pending: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.lock = asyncio.Lock()
        self.closed = False
        self._on_message = create_proxy(self._message)
        self._on_error = create_proxy(self._error)
        worker.addEventListener("message", self._on_message)
        worker.addEventListener("error", self._on_error)

    def _message(self, event: Any) -> None:
        answer = json.loads(js.JSON.stringify(event.data))
        future = self.pending.pop(int(answer.get("id", 0)), None)
        if future is not None and not future.done():
            future.set_result(answer)

    def _error(self, event: Any) -> None:
        message = str(getattr(event, "message", "") or "the flow-script Worker failed")
        for future in self.pending.values():
            if not future.done():
                future.set_exception(ScriptError(f"the JavaScript engine failed: {message}"))
        self.pending.clear()

    async def request(self, op: str, body: dict[str, Any], limit_s: float) -> dict[str, Any]:
        if self.closed:
            raise ScriptError("the JavaScript engine is not running")
        async with self.lock:
            request_id = next(self.ids)
            future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
            self.pending[request_id] = future
            self.worker.postMessage(to_js_json({"id": request_id, "op": op, **body}))
            try:
                answer = await asyncio.wait_for(future, limit_s)
            except TimeoutError:
                await self.close()
                raise ScriptError(
                    f"the JavaScript engine did not answer within {limit_s:.0f} s and was stopped",
                    kind="timeout",
                ) from None
            finally:
                self.pending.pop(request_id, None)
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
        return ScriptResult(str(answer.get("value", "")), [str(item) for item in answer.get("logs", [])])

    async def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.worker.terminate()
        self.worker.removeEventListener("message", self._on_message)
        self.worker.removeEventListener("error", self._on_error)
        self._on_message.destroy()
        self._on_error.destroy()
