"""What the tools hold while the page has chosen a phone (``PageDevice``), and the small words of the
connection: the page URL's parameters, and how a dropped link is said (which phone ``?device=`` names is
``adb.connection_kinds.parse_device_spec``).

``PageDevice`` stays ``context.device`` across a drop and a reconnect: while the link is down it
answers ``device_error`` with why it dropped (get_device_status: ``connected: false``), and whoever
watches it (a running agent task) is told at once. While scrcpy runs, the link passes the calls to
its ScrcpyDevice over the same phone (``route_through``).

No browser APIs here: this module runs in CPython as it does in the page.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

from ..adb.device import AdbDevice
from ..device.interface import Device
from ..device.wrapper import DeviceWrapper
from ..errors import DeviceError, ErrorCode, ToolError, no_device

T = TypeVar("T")


def query_param(page_url: str, name: str) -> str | None:
    values = parse_qs(urlsplit(page_url).query).get(name)
    return values[0] if values else None


def lost_message(reason: str) -> str:
    """What the page, the tools and the agent say about a link that dropped."""
    return f"The phone was disconnected ({reason.rstrip('.')})."


class _NoPhone:
    """Stands in for the phone while its link is down: every call fails at once with the reason."""

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]:
        async def call(*_args: Any, **_kwargs: Any) -> Any:
            raise DeviceError(
                f"{lost_message(self.reason)} The page is reconnecting by itself.",
                remedy="Wait a few seconds and call again (get_device_status says when the phone is "
                "back), or reconnect the phone in the phone-agent page.",
            )

        return call


class PageDevice(DeviceWrapper):
    """What ``context.device`` holds while a phone is chosen: the connected AdbDevice, or, while its
    link is down, a stand-in that answers ``device_error`` with why it dropped. The object stays the
    same across a drop, so a call in flight answers that reason instead of "No phone device
    connected."; get_device_status still answers ``connected: false``."""

    def __init__(self, device: AdbDevice) -> None:
        super().__init__(device)
        self.lost_reason: str | None = None
        self._watchers: list[Callable[[str], None]] = []

    def attach(self, device: AdbDevice) -> None:
        self.device, self.lost_reason = device, None

    def route_through(self, device: Device) -> None:
        """Pass the calls to ``device`` from now on — the ScrcpyDevice over this same phone while
        scrcpy runs, the AdbDevice again after — unless the link is down (its stand-in stays)."""
        if self.lost_reason is None:
            self.device = device

    def lose(self, reason: str) -> None:
        self.device, self.lost_reason = _NoPhone(reason), reason  # type: ignore[assignment]
        for watcher in list(self._watchers):
            with contextlib.suppress(Exception):
                watcher(reason)

    def watch(self, on_lost: Callable[[str], None]) -> Callable[[], None]:
        """Be told (once per drop) when the link drops; returns the function that stops it."""
        self._watchers.append(on_lost)
        return lambda: self._watchers.remove(on_lost) if on_lost in self._watchers else None

    async def info(self) -> dict[str, Any]:
        if self.lost_reason is not None:
            raise no_device()
        return await self.device.info()

    async def _around(self, call: Awaitable[T]) -> T:
        try:
            return await call
        except ToolError as exc:
            # The ADB client knows why the link ended: say it (device_error), not only "no phone".
            if exc.code is ErrorCode.NO_DEVICE and exc.details.get("reason"):
                raise DeviceError(lost_message(str(exc.details["reason"]))) from None
            raise
