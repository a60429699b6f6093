"""The failures step: a call that raised answers an ``isError`` result (a bug too, as ``internal``),
and keeps the failure in ``call.error``. If the phone the call began with went away meanwhile, the
failure is its going: "no phone". Cancellation propagates: the caller that cancelled decides."""

from __future__ import annotations

from ... import errors
from ...errors import ErrorCode, ToolError
from .call import Call, Next, Result
from .host import PipelineHost


def failure_of(tool: str, exc: Exception, began_with: object, now: object) -> ToolError:
    """What a call of ``tool`` that raised ``exc`` answers: a ToolError as it is, anything else a bug
    (``internal``); "no phone" when the phone it began with (``began_with``) is no longer ``now``."""
    failure = exc if isinstance(exc, ToolError) else errors.internal(tool, exc)
    if began_with is not None and now is not began_with and failure.code is not ErrorCode.NO_DEVICE:
        return errors.no_device()
    return failure


class Failures:
    def __init__(self, host: PipelineHost | None = None) -> None:
        self.host = host

    async def __call__(self, call: Call, call_next: Next) -> Result:
        device = self.host.device if self.host is not None else None
        try:
            return await call_next(call)
        except Exception as exc:
            now = self.host.device if self.host is not None else None
            failure = failure_of(call.name, exc, device, now)
            call.error = failure
            return failure.to_result()
