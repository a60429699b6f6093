"""The page's developer controls: the Developer card — install an APK (chosen or dropped on the card),
the phone's log filtered by app and level, with a live tail — and the Record button by the live view
(a download of the MP4 when it stops).

Each is a call of the catalog's tools (install_app, start_recording / stop_recording, read_logs)
through the one dispatch, so they show in the activity log like any call; failures show their message.
"""

from __future__ import annotations

import asyncio
import base64
from typing import Any

import js  # type: ignore[import-not-found]
from pyodide.ffi import to_js  # type: ignore[import-not-found]

from ..tools.dispatch import ToolDispatcher
from ..tools.spec import Channel
from .dom import PanelEvents

TAIL_S = 2.0  # how often the live tail reads the log
TAIL_LINES = 300


def _message(result: dict[str, Any]) -> str:
    content = result.get("content") or [{}]
    return str(content[0].get("text", ""))


class DevLoopPanel:
    """The Developer card (``#devloop``)."""

    def __init__(self, context: ToolDispatcher) -> None:
        self.context = context
        self._doc = js.document
        self.events = PanelEvents()
        self._recording = False
        self._tail: asyncio.Future[Any] | None = None
        self._download_url: str | None = None
        if self._doc.getElementById("devloop") is None:
            return
        self.events.listen("apk-input", "change", self._on_chosen)
        # A real button (reached by Tab, pressed by Enter or Space) opens the hidden file input's chooser.
        self.events.listen("apk-install", "click", lambda _e: self._node("apk-input").click())
        for event in ("dragover", "dragenter"):
            self.events.listen("devloop", event, self._on_drag_over)
        self.events.listen("devloop", "dragleave", lambda _e: self._drop_zone(False))
        self.events.listen("devloop", "drop", self._on_drop)
        self.events.listen("record-button", "click", lambda _e: self.events.spawn(self._toggle_recording()))
        self.events.listen("logs-form", "submit", self._on_logs)
        self.events.listen("logs-tail", "change", self._on_tail)

    def _node(self, element_id: str) -> Any:
        return self._doc.getElementById(element_id)

    # ----- APK install

    def _drop_zone(self, over: bool) -> None:
        self._node("apk-drop").classList.toggle("apk-drop--over", over)

    def _on_drag_over(self, event: Any) -> None:
        event.preventDefault()
        self._drop_zone(True)

    def _on_drop(self, event: Any) -> None:
        event.preventDefault()
        self._drop_zone(False)
        files = event.dataTransfer.files if event.dataTransfer else None
        if files is not None and files.length:
            self.events.spawn(self._install(files.item(0)))

    def _on_chosen(self, _event: Any) -> None:
        files = self._node("apk-input").files
        if files is not None and files.length:
            self.events.spawn(self._install(files.item(0)))

    async def _install(self, file: Any) -> None:
        status, progress = self._node("apk-status"), self._node("apk-progress")
        name = str(file.name)
        progress.hidden = False
        progress.removeAttribute("value")
        status.textContent = f"reading {name} ({int(file.size) / 1048576:.1f} MB)…"
        try:
            data = js.Uint8Array.new(await file.arrayBuffer()).to_bytes()
            progress.max, progress.value = 3, 1

            def on_progress(message: str) -> None:
                progress.value = 2
                status.textContent = message + "…"

            result = await self.context.dispatch(
                "install_app",
                {"contentBase64": base64.b64encode(data).decode("ascii")},
                Channel.PAGE,
                on_progress,
            )
            progress.value = 3
            status.textContent = _message(result)
            status.dataset.state = "failed" if result.get("isError") else "installed"
        finally:
            progress.hidden = True
            self._node("apk-input").value = ""

    # ----- recording

    async def _toggle_recording(self) -> None:
        button, status = self._node("record-button"), self._node("record-status")
        button.disabled = True
        try:
            if not self._recording:
                result = await self.context.dispatch("start_recording", {}, Channel.PAGE)
                if not result.get("isError"):
                    self._recording = True
                    button.textContent = "■ Stop recording"
                    button.setAttribute("aria-pressed", "true")
                    self._node("record-download").hidden = True
                status.textContent = _message(result)
                return
            result = await self.context.dispatch("stop_recording", {}, Channel.PAGE)
            self._recording = False
            button.textContent = "● Record"
            button.setAttribute("aria-pressed", "false")
            if result.get("isError"):
                status.textContent = _message(result)
                return
            video = base64.b64decode(result["structuredContent"]["contentBase64"])
            self._offer_download(video)
            status.textContent = f"{len(video) / 1048576:.1f} MB of MP4"
        finally:
            button.disabled = False

    def _offer_download(self, video: bytes) -> None:
        if self._download_url is not None:
            js.URL.revokeObjectURL(self._download_url)
        blob = js.Blob.new(js.Array.of(to_js(video)), js.JSON.parse('{"type": "video/mp4"}'))
        self._download_url = str(js.URL.createObjectURL(blob))
        link = self._node("record-download")
        link.href = self._download_url
        link.hidden = False

    # ----- the log

    def _filters(self) -> dict[str, Any]:
        args: dict[str, Any] = {"level": str(self._node("logs-level").value), "maxLines": TAIL_LINES}
        app = str(self._node("logs-app").value).strip()
        if app:
            args["packageName"] = app
        return args

    def _on_logs(self, event: Any) -> None:
        event.preventDefault()
        self.events.spawn(self._show_logs())

    async def _show_logs(self) -> None:
        out = self._node("logs-output")
        result = await self.context.dispatch("read_logs", self._filters(), Channel.PAGE)
        if result.get("isError"):
            out.textContent = _message(result)
            out.dataset.state = "failed"
            return
        lines = result["structuredContent"]["lines"]
        out.textContent = "\n".join(
            f"{ln['time']} {ln['pid']:>5} {ln['level']} {ln['tag']}: {ln['message']}" for ln in lines
        )
        out.dataset.state = "shown"
        out.dataset.lines = str(len(lines))
        out.scrollTop = out.scrollHeight

    def _on_tail(self, _event: Any) -> None:
        if self._node("logs-tail").checked:
            if self._tail is None or self._tail.done():
                self._tail = self.events.spawn(self._tail_loop())
        elif self._tail is not None:
            self._tail.cancel()

    async def _tail_loop(self) -> None:
        while self._node("logs-tail").checked:
            if str(self._doc.visibilityState) == "visible":
                await self._show_logs()
            await asyncio.sleep(TAIL_S)
