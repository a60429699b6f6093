"""MCP Apps (the extension ``io.modelcontextprotocol/ui``): the phone and a running agent task as views
inside the chat, for clients that declare the extension.

Such a client sees two ``ui://`` resources (``text/html;profile=mcp-app``), read from the page's files
(``static/apps/*.html``, with the view's vendored script bundle written inline: a host renders the HTML
alone in a sandboxed frame), and ``_meta.ui.resourceUri`` on the tools that show them. A client that did
not declare the extension sees nothing new: the same ``tools/list``, no resources. The views call the
same tools as any caller, through the host, with ``_meta`` ``{"phone-agent/caller": "app"}``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import mcp.types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS

from .. import errors
from .mcp_tasks import CLIENT_CAPABILITIES_META_KEY
from .page_source import default_page_root

APPS_EXTENSION = "io.modelcontextprotocol/ui"
APP_MIME_TYPE = "text/html;profile=mcp-app"


@dataclass(frozen=True)
class AppView:
    uri: str
    file: str  # under static/apps/
    title: str
    description: str


PHONE_VIEW = AppView(
    "ui://phone-agent/phone",
    "phone.html",
    "Phone",
    "The phone's screen, refreshed by take_screenshot: a click taps, a drag swipes, Back/Home/Recents.",
)
TASK_VIEW = AppView(
    "ui://phone-agent/task",
    "task.html",
    "Agent task",
    "A running agent task's steps; Done/Cancel for a take over, Allow/Refuse for a confirmation.",
)
VIEWS: dict[str, AppView] = {view.uri: view for view in (PHONE_VIEW, TASK_VIEW)}
# The tools whose definitions link a view (``_meta.ui.resourceUri``).
TOOL_VIEWS: dict[str, AppView] = {
    "take_screenshot": PHONE_VIEW,
    "list_elements": PHONE_VIEW,
    "run_agent_task": TASK_VIEW,
}
_MODULE_SCRIPT = re.compile(r'<script type="module" src="([^"]+)"></script>')


def declares_apps(ctx: ServerRequestContext[Any]) -> bool:
    """Whether the request's client declared the MCP Apps extension: in its handshake capabilities, or
    (2026-07-28) in the request's ``_meta`` envelope."""
    capabilities = getattr(ctx.session, "client_capabilities", None)
    extensions = getattr(capabilities, "extensions", None)
    if isinstance(extensions, Mapping) and APPS_EXTENSION in extensions:
        return True
    meta = ctx.meta
    meta = meta.model_dump(by_alias=True) if hasattr(meta, "model_dump") else (meta or {})
    declared = meta.get(CLIENT_CAPABILITIES_META_KEY) if isinstance(meta, Mapping) else None
    extensions = declared.get("extensions") if isinstance(declared, Mapping) else None
    return isinstance(extensions, Mapping) and APPS_EXTENSION in extensions


def with_views(listed: types.ListToolsResult) -> types.ListToolsResult:
    """The tool list with ``_meta.ui.resourceUri`` on the tools that show a view."""
    tools = []
    for tool in listed.tools:
        view = TOOL_VIEWS.get(tool.name)
        if view is not None:
            meta = {**(tool.meta or {}), "ui": {"resourceUri": view.uri}}
            tool = tool.model_copy(update={"meta": meta})
        tools.append(tool)
    # The task view's own tool comes with the tool that shows it (not under --tools read-only).
    shows_tasks = any(tool.name == "run_agent_task" for tool in tools)
    return listed.model_copy(update={"tools": [*tools, ANSWER_TOOL] if shows_tasks else tools})


def list_views() -> types.ListResourcesResult:
    return types.ListResourcesResult(
        resources=[
            types.Resource(
                uri=view.uri,
                name=view.uri.rsplit("/", 1)[-1],
                title=view.title,
                description=view.description,
                mime_type=APP_MIME_TYPE,
            )
            for view in VIEWS.values()
        ]
    )


def read_view(uri: str, root: Path | None = None) -> types.ReadResourceResult:
    """A view's HTML, its module scripts written inline (the host renders the document alone)."""
    view = VIEWS.get(str(uri))
    if view is None:
        known = ", ".join(VIEWS)
        raise MCPError(code=INVALID_PARAMS, message=f"Unknown resource {uri}: the views are {known}")
    html = view_html(view, root or default_page_root())
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=view.uri, mime_type=APP_MIME_TYPE, text=html)]
    )


def view_html(view: AppView, root: Path) -> str:
    """``static/apps/<file>`` with each ``<script type="module" src=...>`` (relative to it) inlined."""
    folder = root / "static" / "apps"
    html = (folder / view.file).read_text(encoding="utf-8")

    def inline(match: re.Match[str]) -> str:
        source = (folder / match.group(1)).resolve()
        if not source.is_relative_to((root / "static").resolve()):
            raise MCPError(code=INVALID_PARAMS, message=f"{view.file}: a script outside static/")
        code = source.read_text(encoding="utf-8").replace("</script", "<\\/script")
        return f'<script type="module">\n{code}\n</script>'

    return _MODULE_SCRIPT.sub(inline, html)


# The one tool only the views see (``_meta.ui.visibility`` ["app"]): the page's open questions, and the
# view's answer to one, which the page takes as it takes an elicitation's (whoever answers first wins).
ANSWER_TOOL_NAME = "answer_question"
ANSWERS = {"takeover": ("done", "cancel"), "confirm": ("yes", "no")}
ANSWER_TOOL = types.Tool(
    name=ANSWER_TOOL_NAME,
    title="Answer the agent's question",
    description="Without arguments: the agent's open questions (take over, confirmation). With askId and "
    "answer: answer one (take over: done or cancel; confirmation: yes or no).",
    input_schema={
        "type": "object",
        "properties": {
            "askId": {"type": "string", "minLength": 1, "maxLength": 100},
            "answer": {"type": "string", "enum": ["done", "cancel", "yes", "no"]},
        },
        "additionalProperties": False,
    },
    meta={"ui": {"resourceUri": TASK_VIEW.uri, "visibility": ["app"]}},
)


class Questions(Protocol):
    """What answer_question needs of the relay (``relay.Relay``)."""

    def open_questions(self) -> Mapping[str, Any]: ...

    async def answer_question(self, ask: str, answer: str) -> bool: ...


async def answer_question(relay: Questions, arguments: Mapping[str, Any] | None) -> dict[str, Any]:
    """answer_question's result (wire form): the open questions, or the answer given."""
    args = dict(arguments or {})
    open_now = relay.open_questions()
    if "askId" not in args and "answer" not in args:
        listed = [{"askId": ask, "kind": q.kind, "message": q.message} for ask, q in open_now.items()]
        text = "; ".join(f"{q['askId']} ({q['kind']}): {q['message']}" for q in listed) or "No open question."
        return {"content": [{"type": "text", "text": text}], "structuredContent": {"questions": listed}}
    ask, answer = args.get("askId"), args.get("answer")
    question = open_now.get(ask) if isinstance(ask, str) else None
    if question is None or answer not in ANSWERS.get(question.kind, ()):
        allowed = " or ".join(ANSWERS.get(question.kind, ())) if question else "an open question's askId"
        return errors.invalid_argument(
            ANSWER_TOOL_NAME,
            "askId" if question is None else "answer",
            f"askId {ask!r} is not an open question" if question is None else f"answer must be {allowed}",
            "Call answer_question without arguments for the open questions and their kinds.",
        ).to_result()
    taken = await relay.answer_question(ask, answer)  # type: ignore[arg-type]
    text = f"Answered {answer}." if taken else "The question was answered first elsewhere."
    return {"content": [{"type": "text", "text": text}], "structuredContent": {"answered": taken}}
