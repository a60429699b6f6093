"""The failures step: a call that raised answers an ``isError`` result (a bug too, as ``internal``),
and keeps the failure in ``call.error``. If the phone the call began with went away meanwhile, the
failure is its going: "no phone". Cancellation propagates: the caller that cancelled decides."""

from __future__ import annotations

from ... import errors
from ...errors import ErrorCode, ToolError
from .call import Call, Next, Result
from .host import PipelineHost


class Failures:
    def __init__(self, host: PipelineHost | None = None) -> None:
        self.host = host

    async def __call__(self, call: Call, call_next: Next) -> Result:
        device = self.host.device if self.host is not None else None
        try:
            return await call_next(call)
        except Exception as exc:
            failure = exc if isinstance(exc, ToolError) else errors.internal(call.name, exc)
            went = self.host is not None and device is not None and self.host.device is not device
            if went and failure.code is not ErrorCode.NO_DEVICE:
                failure = errors.no_device()
            call.error = failure
            return failure.to_result()
