"""The Flows card: the saved flows (run, show, delete), recording (Record, Stop and save), pasting a
flow, and the chat panel's "Save as flow" buttons. Every action is a call of the catalog's flow tools
through the page's one dispatch (channel ``page``), so it shows in the activity log like any other, and
the list follows saves and deletes from every channel."""

from __future__ import annotations

import re
from typing import Any

import js  # type: ignore[import-not-found]

from ..tools.dispatch import CallRecord, ToolDispatcher
from ..tools.spec import Channel
from .dom import PanelEvents, element
from .interop import is_nullish

# Calls after which the list of saved flows may have changed.
_CHANGES_FLOWS = ("save_flow", "delete_flow", "stop_flow_recording", "save_task_as_flow")


def _text(result: dict[str, Any]) -> str:
    return "\n".join(item.get("text", "") for item in result.get("content", []) if item.get("type") == "text")


def task_flow_name(goal: str) -> str:
    """A flow name made of a task's goal: no slashes or control characters, at most 60 characters."""
    name = re.sub(r"[\x00-\x1f/\\]+", " ", goal).strip()
    return (name[:60].rstrip() or "agent task") + " (task)"


class FlowsCard:
    def __init__(self, context: ToolDispatcher) -> None:
        self.context = context
        self._events = PanelEvents()
        self._doc = js.document
        self._events.listen("flow-list", "click", self._on_list_click)
        self._events.listen("flow-record", "click", lambda _event: self._events.spawn(self.record()))
        self._events.listen("flow-stop", "click", lambda _event: self._events.spawn(self.stop()))
        self._events.listen("flow-form", "submit", self._on_submit)
        self._events.listen("agent-tasks", "click", self._on_task_click)
        context.add_call_listener(self._on_call)

    def start(self) -> None:
        """List the saved flows (in the background)."""
        self._events.spawn(self.refresh())

    async def call(self, tool: str, args: dict[str, Any], progress: Any = None) -> dict[str, Any]:
        return await self.context.dispatch(tool, args, Channel.PAGE, progress=progress)

    def _state(self, text: str, state: str) -> None:
        node = self._doc.getElementById("flow-state")
        node.textContent = text
        node.dataset.flowState = state

    def _on_call(self, record: CallRecord) -> None:
        if record.tool in _CHANGES_FLOWS and not record.result.get("isError"):
            self._events.spawn(self.refresh())

    async def refresh(self) -> None:
        """Show the saved flows, read from the library itself: showing the card is not a call, so it
        leaves no line in the activity log (what the person runs, saves or deletes there does)."""
        flows = await self.context.flow_library.names()
        listing = self._doc.getElementById("flow-list")
        listing.replaceChildren()
        if not flows:
            listing.append(element("li", "No flow saved yet.", "muted"))
        for flow in flows:
            item = element("li")
            item.dataset.flow = flow["name"]
            item.append(element("span", flow["name"], "flow-name"))
            for action, label in (("run", "Run"), ("show", "Show"), ("delete", "Delete")):
                button = element("button", label, "button")
                button.type = "button"
                button.dataset.action = action
                item.append(button)
            listing.append(item)

    def _on_list_click(self, event: Any) -> None:
        button = event.target.closest("button[data-action]")
        if is_nullish(button):
            return
        name = button.closest("li").dataset.flow
        action = {"run": self.run, "show": self.show, "delete": self.delete}[button.dataset.action]
        self._events.spawn(action(name))

    async def run(self, name: str) -> None:
        self._state(f"Running {name}…", "running")

        def progress(line: str) -> None:
            self._state(f"{name}: {line}", "running")

        result = await self.call("run_flow", {"name": name}, progress)
        report = result.get("structuredContent") or {}
        if result.get("isError"):
            self._state(f"{name}: {report.get('message', _text(result))}", "failed")
        elif report.get("passed"):
            self._state(
                f"✅ {name} passed ({len(report['steps'])} steps, {report['durationMs'] / 1000:.1f} s)",
                "passed",
            )
        else:
            failure = report.get("failure", {})
            self._state(
                f"❌ {name} failed at step {failure.get('index')} `{failure.get('command')}`: "
                f"{failure.get('error')}",
                "failed",
            )

    async def show(self, name: str) -> None:
        result = await self.call("get_flow", {"name": name})
        shown = self._doc.getElementById("flow-yaml")
        shown.textContent = (result.get("structuredContent") or {}).get("yaml") or _text(result)
        shown.hidden = False

    async def delete(self, name: str) -> None:
        result = await self.call("delete_flow", {"name": name})
        self._state(_text(result), "failed" if result.get("isError") else "idle")

    async def record(self) -> None:
        result = await self.call("start_flow_recording", {})
        if result.get("isError"):
            self._state(_text(result), "failed")
            return
        self._doc.getElementById("flow-record").disabled = True
        self._doc.getElementById("flow-stop").disabled = False
        self._state(
            "Recording: act on the phone (the live view, an agent, MCP); then Stop and save.", "recording"
        )

    async def stop(self) -> None:
        name = str(self._doc.getElementById("flow-record-name").value).strip()
        result = await self.call("stop_flow_recording", {"name": name} if name else {})
        self._doc.getElementById("flow-record").disabled = False
        self._doc.getElementById("flow-stop").disabled = True
        structured = result.get("structuredContent") or {}
        if result.get("isError"):
            self._state(_text(result), "failed")
            return
        shown = self._doc.getElementById("flow-yaml")
        shown.textContent = structured.get("yaml", "")
        shown.hidden = False
        saved = f" and saved as {name}" if structured.get("saved") else " (give it a name to save it)"
        self._state(f"Recorded {structured.get('commands', 0)} commands{saved}.", "idle")

    def _on_submit(self, event: Any) -> None:
        event.preventDefault()
        name = str(self._doc.getElementById("flow-name").value).strip()
        text = str(self._doc.getElementById("flow-text").value)
        self._events.spawn(self._save(name, text))

    async def _save(self, name: str, text: str) -> None:
        result = await self.call("save_flow", {"name": name, "yaml": text})
        self._state(_text(result), "failed" if result.get("isError") else "idle")

    def _on_task_click(self, event: Any) -> None:
        button = event.target.closest("button.chat-task__save-flow")
        if is_nullish(button):
            return
        item = button.closest("li")
        goal = item.querySelector(".chat-task__goal").textContent
        self._events.spawn(self._save_task(str(item.dataset.taskId), task_flow_name(str(goal))))

    async def _save_task(self, task_id: str, name: str) -> None:
        result = await self.call("save_task_as_flow", {"taskId": task_id, "name": name})
        self._state(_text(result).split("\n", 1)[0], "failed" if result.get("isError") else "idle")
