"""The "screen may have moved" step: after a call that acts on the phone (even one that failed half
way), the next look waits for the screen to settle and the tree read before is history — in the
caller's own session and in the page's."""

from __future__ import annotations

from .call import Call, Next, Result
from .host import PipelineHost


class ScreenMoved:
    def __init__(self, host: PipelineHost | None = None) -> None:
        self.host = host

    async def __call__(self, call: Call, call_next: Next) -> Result:
        try:
            return await call_next(call)
        finally:
            if call.spec is not None and not call.spec.read_only:
                page = self.host.current_session() if self.host is not None else None
                for session in {id(s): s for s in (call.session, page) if s is not None}.values():
                    session.state.acted()
