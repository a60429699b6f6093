"""The agent's ``HttpClient`` in the page: ``fetch`` with an AbortController, bodies streamed chunk by
chunk through ``response.body.getReader()`` so a model's SSE answer arrives token by token.

``fetch`` rejects with ``TypeError: Failed to fetch`` both when the server is unreachable and when it
does not allow this page's origin (CORS): that becomes the agent's ``NetworkError``, which the model
client turns into a message saying how to let the page in (e.g. ``OLLAMA_ORIGINS``). Every wait is
bounded, and cancelling the awaiting coroutine (abort_task, a relay cancel, the task's time limit)
aborts the request in the browser too, so no connection is left streaming.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import js  # type: ignore[import-not-found]
from pyodide.ffi import JsException, to_js  # type: ignore[import-not-found]

from ..agent.ports import NetworkError
from .interop import is_nullish, to_js_json

# A body chunk that takes longer than this is a dead connection (the model client has its own,
# shorter idle limit; this one only makes sure no read waits forever).
READ_LIMIT_S = 300.0
BROKE = "the connection broke: "  # a body read the browser failed


async def _settled(promise: Any) -> Any:
    """A JS promise as a coroutine (so ``asyncio.wait_for`` can bound and cancel it)."""
    return await promise


def _reason(exc: BaseException) -> str:
    """``TypeError: Failed to fetch`` from a JsException (its JS name and message)."""
    text = str(exc).strip()
    return text or type(exc).__name__


async def _bounded(promise: Any, limit_s: float, abort: Callable[[], Any], late: str, broke: str) -> Any:
    """``promise``'s value within ``limit_s``, else NetworkError(``late``); a rejection is
    NetworkError(``broke`` + its reason). Running late or being cancelled aborts the request."""
    try:
        return await asyncio.wait_for(_settled(promise), limit_s)
    except TimeoutError:
        abort()
        raise NetworkError(late) from None
    except JsException as exc:
        raise NetworkError(broke + _reason(exc)) from None
    except asyncio.CancelledError:
        abort()
        raise


class FetchResponse:
    """An answer whose headers are in; the body is read on demand (``HttpResponse``)."""

    def __init__(self, response: Any, controller: Any) -> None:
        self._response = response
        self._controller = controller
        self._reader: Any = None
        self._finished = False
        self.status = int(response.status)
        headers: dict[str, str] = {}
        for pair in response.headers.entries():
            headers[str(pair[0]).lower()] = str(pair[1])
        self.headers = headers

    async def chunks(self) -> AsyncIterator[bytes]:
        body = self._response.body
        if is_nullish(body):  # a 204, or a HEAD answer: no body at all
            self._finished = True
            return
        self._reader = body.getReader()
        while True:
            result = await _bounded(
                self._reader.read(), READ_LIMIT_S, self._abort, f"no data for {READ_LIMIT_S:g} s", BROKE
            )
            if result.done:
                self._finished = True
                return
            data = result.value.to_bytes()  # one copy of the whole chunk (PLATFORM.md: cheap)
            if data:
                yield data

    async def read(self) -> bytes:
        late = f"the body did not arrive within {READ_LIMIT_S:g} s"
        buffer = await _bounded(self._response.arrayBuffer(), READ_LIMIT_S, self._abort, late, BROKE)
        self._finished = True
        return buffer.to_bytes()

    async def aclose(self) -> None:
        if not self._finished:
            self._abort()

    def _abort(self) -> None:
        """Stop the request in the browser (a body still streaming is cancelled with it)."""
        self._finished = True
        try:
            self._controller.abort()
        except Exception:  # aborting twice or after the end is harmless; never fail a cleanup
            pass


class FetchHttpClient:
    """``HttpClient`` over the browser's ``fetch``."""

    async def post(self, url: str, body: bytes, headers: Mapping[str, str], timeout_ms: int) -> FetchResponse:
        controller = js.AbortController.new()
        # No ``cache`` option: POST answers are not cached anyway, and "no-store" would also skip the
        # CORS preflight cache, costing every model request a second round trip (an OPTIONS first).
        init = to_js_json({"method": "POST", "headers": dict(headers), "mode": "cors"})
        init.body = to_js(body)
        init.signal = controller.signal
        # A rejection is TypeError: Failed to fetch — refused, unreachable, or refused by CORS (fetch
        # cannot tell); it is said as it is.
        late = f"no answer within {timeout_ms / 1000:g} s"
        response = await _bounded(js.fetch(url, init), timeout_ms / 1000, controller.abort, late, "")
        return FetchResponse(response, controller)
