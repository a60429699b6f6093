"""PhoneHolder: the phone the tools act on, and the session that belongs to it.

A session (refs, the screen's true size, the last look) belongs to the phone it came from: a new phone
gets a new session. The page's screenshot codec and live view are plugged in here, typed by their
ports, and handed to every session. Pure: tested in CPython.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import errors
from ..device.interface import Device, UiNode
from ..errors import ErrorCode
from .pipeline.failures import failure_of
from .screen_source import LiveScreen
from .session import DeviceSession, ScreenshotScaler

__all__ = ["PhoneHolder"]


class PhoneHolder:
    """The connected phone (or none) and its session."""

    def __init__(self) -> None:
        self._device: Device | None = None
        self._session: DeviceSession | None = None
        # Scales and re-encodes screenshots (the page: canvas; CPython: Pillow); None: full PNGs only.
        self.image_codec: ScreenshotScaler | None = None
        # The page's scrcpy live view for take_screenshot's source "live"; None in CPython: that source
        # then answers why not.
        self.live_screen: LiveScreen | None = None
        # Shows a field a secret was typed into by the secret's name (tools.named_secrets.SecretBook).
        self.redact_nodes: Callable[[list[UiNode]], None] | None = None

    @property
    def device(self) -> Device | None:
        return self._device

    @device.setter
    def device(self, device: Device | None) -> None:
        if device is not self._device:
            self._session = None  # refs and the screen size belong to the phone they came from
        self._device = device

    def current_session(self) -> DeviceSession | None:
        """The session with the connected phone if one is open (no new one is made)."""
        session = self._session
        return session if session is not None and session.device is self._device else None

    def session(self) -> DeviceSession:
        """The connected phone as the device tools use it; ToolError no_device when none is."""
        device = self._device
        if device is None:
            raise errors.no_device()
        if self._session is None or self._session.device is not device:
            self._session = DeviceSession(device)
        self._session.image_codec = self.image_codec
        self._session.live_screen = self.live_screen
        self._session.redact_nodes = self.redact_nodes
        return self._session

    async def info(self) -> dict[str, Any]:
        """get_device_status's answer: {"connected": False}, or True with what the phone says."""
        device = self._device
        if device is None:
            return {"connected": False}
        try:
            info = await device.info()
        except Exception as exc:
            if failure_of("get_device_status", exc, device, self._device).code is ErrorCode.NO_DEVICE:
                return {"connected": False}
            raise
        return {"connected": True, **info}
