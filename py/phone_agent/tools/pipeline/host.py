"""What the pipeline's steps use of the page's service (``tools.dispatch.ToolDispatcher``), declared
here where it is used: the phone, the secrets, the flow recording, the clock."""

from __future__ import annotations

from typing import Protocol

from ...device.interface import Device
from ...flows.recorder import FlowRecorder
from ..named_secrets import SecretBook
from ..session import DeviceSession, ScreenshotScaler
from ..spec import TaskService


class PipelineHost(TaskService, Protocol):
    """The page's service as the steps see it (it is also what the six tools' handlers are given)."""

    secrets: SecretBook | None
    flow_recorder: FlowRecorder
    image_codec: ScreenshotScaler | None

    @property
    def device(self) -> Device | None: ...

    def current_session(self) -> DeviceSession | None:
        """The page's session with the phone if one was opened (None: no look or action yet)."""
        ...

    def now_ms(self) -> int: ...
