"""Devices around a Device: ``DeviceWrapper`` passes every call through one hook, so a wrapper watches
or times the calls without restating the interface; ``ScreenshotTap`` hands each screenshot to a
listener too (the page's live view while the agent runs)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from .interface import (
    ChunkStream,
    ChunkWriter,
    Device,
    FileEntry,
    UiNode,
    UiTree,
    changed_since,
    read_ui_tree,
    wait_settled,
)
from .shell_result import ShellResult

T = TypeVar("T")


class DeviceWrapper:
    """A Device that passes every call to ``device`` through ``_around`` (which only awaits it here):
    subclasses watch or time the calls without restating the interface."""

    def __init__(self, device: Device) -> None:
        self.device = device

    async def _around(self, call: Awaitable[T]) -> T:
        return await call

    async def info(self) -> dict[str, Any]:
        return await self._around(self.device.info())

    async def screenshot_png(self) -> bytes:
        return await self._around(self.device.screenshot_png())

    async def tap(self, x: int, y: int) -> None:
        await self._around(self.device.tap(x, y))

    async def long_press(self, x: int, y: int, duration_ms: int = 800) -> None:
        await self._around(self.device.long_press(x, y, duration_ms))

    async def swipe(self, x1: int, y1: int, x2: int, y2: int, duration_ms: int = 300) -> None:
        await self._around(self.device.swipe(x1, y1, x2, y2, duration_ms))

    async def type_text(self, text: str) -> str | None:
        return await self._around(self.device.type_text(text))

    async def press_key(self, key: str) -> None:
        await self._around(self.device.press_key(key))

    async def delete_chars(self, count: int) -> None:
        await self._around(self.device.delete_chars(count))

    async def open_app(self, package: str) -> None:
        await self._around(self.device.open_app(package))

    async def stop_app(self, package: str) -> None:
        await self._around(self.device.stop_app(package))

    async def open_url(self, url: str) -> None:
        await self._around(self.device.open_url(url))

    async def list_apps(self, third_party_only: bool = False) -> list[str]:
        return await self._around(self.device.list_apps(third_party_only))

    async def current_app(self) -> str | None:
        return await self._around(self.device.current_app())

    async def ui_nodes(self) -> list[UiNode]:
        return await self._around(self.device.ui_nodes())

    async def ui_tree(self) -> UiTree:
        return await self._around(read_ui_tree(self.device))

    async def wait_settled(self, timeout_ms: int) -> bool | None:
        return await self._around(wait_settled(self.device, timeout_ms))

    def changed_since(self, since: float) -> bool | None:
        return changed_since(self.device, since)

    async def screen_info(self) -> dict[str, Any]:
        return await self._around(self.device.screen_info())

    async def set_orientation(self, orientation: str) -> None:
        await self._around(self.device.set_orientation(orientation))

    async def shell(self, command: str, timeout_ms: int = 10_000) -> ShellResult:
        return await self._around(self.device.shell(command, timeout_ms))

    async def push_file(
        self,
        data: bytes | ChunkStream,
        path: str,
        mode: int = 0o644,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        await self._around(self.device.push_file(data, path, mode, progress))

    async def pull_file(self, path: str, limit: int, into: ChunkWriter | None = None) -> bytes:
        return await self._around(self.device.pull_file(path, limit, into))

    async def list_files(self, path: str) -> list[FileEntry]:
        return await self._around(self.device.list_files(path))

    async def install_apk(
        self,
        data: bytes,
        replace: bool = True,
        grant_permissions: bool = False,
        progress: Callable[[int, int], None] | None = None,
    ) -> None:
        await self._around(self.device.install_apk(data, replace, grant_permissions, progress))

    async def get_clipboard(self) -> str:
        return await self._around(self.device.get_clipboard())

    async def set_clipboard(self, text: str, paste: bool = False) -> str:
        return await self._around(self.device.set_clipboard(text, paste))

    async def pinch(self, x: int, y: int, scale: float, duration_ms: int = 400) -> None:
        await self._around(self.device.pinch(x, y, scale, duration_ms))

    async def start_recording(self, max_seconds: int) -> str:
        return await self._around(self.device.start_recording(max_seconds))

    async def stop_recording(self) -> bytes:
        return await self._around(self.device.stop_recording())


class ScreenshotTap(DeviceWrapper):
    """A Device that passes every call through and also hands each screenshot it takes to
    ``on_frame``: the page's live view shows the agent's own screenshots while a task runs instead of
    taking its own (on a real phone a screenshot takes 1–3 s: two takers would halve the agent's).
    A failing ``on_frame`` never fails the call."""

    def __init__(self, device: Device, on_frame: Callable[[bytes], None]) -> None:
        super().__init__(device)
        self.on_frame = on_frame

    async def screenshot_png(self) -> bytes:
        png = await super().screenshot_png()
        try:
            self.on_frame(png)
        except Exception:  # a display's trouble is not the caller's
            pass
        return png
