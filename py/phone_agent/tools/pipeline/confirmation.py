"""The confirmation step: the page's ``--confirm always`` asks the person before a sensitive call
runs, whoever made it (an MCP client, an App view, WebMCP, a flow's step, the agent). Not asked: the
person's own calls (the live view) and a call the person already allowed (the agent asked first)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from .call import Call, Caller, Next, Result

# Raises ToolError (cancelled, "Not confirmed: …") when the person refuses or does not answer.
Confirm = Callable[[str, dict[str, Any], Caller], Awaitable[None]]


class Confirmation:
    def __init__(self) -> None:
        self.check: Confirm | None = None

    async def __call__(self, call: Call, call_next: Next) -> Result:
        if self.check is not None and call.caller is not Caller.LIVE and not call.confirmed:
            assert call.spec is not None
            await self.check(call.spec.name, call.clean, call.caller)
        return await call_next(call)
