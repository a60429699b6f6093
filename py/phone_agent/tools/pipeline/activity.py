"""The activity step: when a call ends, everyone listening (the page's activity log, the flows card,
the farm) is told who made it, under which call, what it answered and how long it took."""

from __future__ import annotations

import traceback

from .call import Call, CallListener, CallRecord, Next, Result


class Activity:
    """Tells its listeners of every finished call (a listener's failure is printed, never raised)."""

    def __init__(self) -> None:
        self.listeners: list[CallListener] = []

    async def __call__(self, call: Call, call_next: Next) -> Result:
        result = await call_next(call)
        record = CallRecord(
            call.channel, call.name, result, call.duration_ms, call.caller, call.id, call.parent, call.depth
        )
        for listener in list(self.listeners):
            try:
                listener(record)
            except Exception:  # the activity log must never break a tool call; say why it failed
                traceback.print_exc()
        return result
