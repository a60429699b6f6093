"""The timing step: how long the call took, from its arrival to its answer (``call.duration_ms``)."""

from __future__ import annotations

import time
from collections.abc import Callable

from .call import Call, Next, Result


def _now_ms() -> int:
    return int(time.time() * 1000)


class Timing:
    def __init__(self, clock_ms: Callable[[], int] = _now_ms) -> None:
        self.clock_ms = clock_ms

    async def __call__(self, call: Call, call_next: Next) -> Result:
        started = self.clock_ms()
        try:
            return await call_next(call)
        finally:
            call.duration_ms = self.clock_ms() - started
