"""The flow recording step: while a flow is recorded, a call made at the page's edge (an MCP client,
WebMCP, the live view) is written as the flow's commands, naming the element it acted on as the
screen showed it just before (``flow_keeping.acted_before``). A flow's own steps and the agent's
actions are not (their run_flow or task is what was asked)."""

from __future__ import annotations

from typing import Any

from ..flow_keeping import acted_before
from .call import Call, Caller, Next, Result
from .host import PipelineHost

NOT_RECORDED = frozenset({Caller.FLOW, Caller.AGENT})


class FlowRecording:
    def __init__(self, host: PipelineHost) -> None:
        self.host = host

    async def __call__(self, call: Call, call_next: Next) -> Result:
        recorder = self.host.flow_recorder
        if not recorder.active or call.caller in NOT_RECORDED:
            return await call_next(call)
        assert call.spec is not None
        acted = await self._before(call)
        result = await call_next(call)
        if recorder.active and not result.get("isError"):
            recorder.add(call.spec.name, call.clean, acted)
        return result

    async def _before(self, call: Call) -> Any:
        """What the call is about to act on (None when nothing, or when the look fails: the call itself
        then says why)."""
        if self.host.device is None or call.spec is None:
            return None
        try:
            return await acted_before(self.host.session(), call.spec.name, call.clean)
        except Exception:
            return None
