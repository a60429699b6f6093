"""The MCP server of Channel A: the SDK's low-level ``Server`` whose tools are the relay's.

It is served over streamable HTTP at ``/mcp`` (``mcp_http``); ``phone-agent mcp`` relays stdio to it.
``tools/list`` comes from the catalog, filtered by the server's tool profile (``--tools``); a call of a
tool outside the profile is an ``unknown_tool`` isError result. ``tools/call`` goes through the
relay to the page, and the page's wire-form result becomes ``mcp.types.CallToolResult`` here, at the
edge. Progress the page reports becomes ``notifications/progress`` when the request carried
``_meta.progressToken``, else ``notifications/message`` (level info, logger ``phone-agent``).

Both MCP revisions are served side by side (the SDK routes each request by its ``MCP-Protocol-Version``):
2025-11-25 clients with ``initialize`` and sessions, 2026-07-28 clients statelessly (``server/discover``,
the envelope in ``_meta``, ``resultType``); on 2026-07-28 ``tools/list`` and ``server/discover`` carry
``ttlMs``/``cacheScope`` (``CACHE_HINTS``), and ``tools/list`` is the catalog's order, byte for byte the
same on every call. A 2026-07-28 client that declares the Tasks extension gets ``run_agent_task`` as an
MCP task (``mcp_tasks``).

When the agent of a call needs a person (take over, confirmation), the page asks the call's client too
through ``ProgressForwarder.ask`` (``mcp_ask``: an elicitation where the client declared it; on
2026-07-28 the revision's input requests, the call parked meanwhile: ``mcp_input``).

About ``notifications/message`` in the SDK 2.3: ``send_log_message`` sends unconditionally to clients on
a handshake protocol revision (≤ 2025-11-25), but on the 2026-07-28 revision only when the request
opted in with the ``io.modelcontextprotocol/logLevel`` ``_meta`` key. The specification wants progress
visible to every client that gave no progressToken, so this module sends the LoggingMessageNotification
itself, on the request's own stream, and holds back only where the client asked for less: a level above
info, set by ``logging/setLevel`` (handshake revisions) or by the ``_meta`` opt-in (2026-07-28).
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, get_args

import mcp.types as types
from mcp.server.caching import CacheHint
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ValidationError

from .. import __version__, errors
from ..errors import ToolError, malformed_result, tool_not_offered
from ..relay.frames import CALLER_META, META_CALLERS
from ..tools.catalog import DEFAULT_TOOL_PROFILE, TOOLS_BY_NAME, ToolProfile, tools_for_profile
from ..tools.groups import GROUPS_TOOL, GROUPS_TOOL_NAME, hidden, instructions, listed_names
from ..tools.spec import CallEnv, Channel, ToolSpec, validate_arguments
from .mcp_apps import (
    ANSWER_TOOL_NAME,
    APPS_EXTENSION,
    answer_question,
    declares_apps,
    list_views,
    read_view,
    with_views,
)
from .mcp_ask import ask_with, elicit_client
from .mcp_input import ASKING_TOOLS, ParkedCall, ParkedCalls
from .mcp_tasks import TASK_TOOLS, TASKS_EXTENSION, McpTaskStore, declares_tasks, missing_capability
from .relay import Relay
from .transfers import TRANSFER_META

log = logging.getLogger("phone_agent.mcp")

SERVER_NAME = "phone-agent"
LOGGER_NAME = "phone-agent"


def server_instructions(profile: str | ToolProfile = DEFAULT_TOOL_PROFILE) -> str:
    """The server's ``instructions`` for a tool profile (written from the tool groups' table)."""
    return instructions(ToolProfile(profile) is ToolProfile.COMPACT)


PROGRESS_LEVEL: types.LoggingLevel = "info"
# 2026-07-28 caching hints: the tool list (catalog order, the --tools profile) and what server/discover
# says never change while a server runs, and are the same for every client of it; a server restarted with
# other options is seen within this long.
LIST_TTL_MS = 10 * 60 * 1000
CACHE_HINTS = {
    "tools/list": CacheHint(ttl_ms=LIST_TTL_MS, scope="public"),
    "server/discover": CacheHint(ttl_ms=LIST_TTL_MS, scope="public"),
}
_LEVELS: tuple[str, ...] = get_args(types.LoggingLevel)  # ascending severity, the SDK's own order


def mcp_tool(spec: ToolSpec) -> types.Tool:
    """One catalog entry as an MCP ``Tool``."""
    return types.Tool(
        name=spec.name,
        title=spec.title,
        description=spec.description,
        input_schema=spec.input_schema,
        output_schema=spec.output_schema,
        annotations=types.ToolAnnotations.model_validate(spec.mcp_annotations()),
    )


def to_call_tool_result(tool: str, wire: dict[str, Any]) -> types.CallToolResult:
    """The page's result (wire form, camelCase) as the SDK's type; a malformed one becomes an isError."""
    try:
        return types.CallToolResult.model_validate(wire)
    except ValidationError as exc:
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": str(exc)}
        where = ".".join(str(part) for part in first.get("loc", ())) or "result"
        log.warning('the page answered "%s" with a malformed result: %s: %s', tool, where, first.get("msg"))
        problem = f"{where}: {first.get('msg')}"
        return types.CallToolResult.model_validate(malformed_result(tool, problem).to_result())


def level_allows(threshold: str | None, level: str) -> bool:
    """Whether a message at ``level`` passes a client's minimum ``threshold`` (None: everything passes)."""
    if threshold not in _LEVELS:
        return True
    return _LEVELS.index(level) >= _LEVELS.index(threshold)


class LogThreshold:
    """The level each client set with ``logging/setLevel`` (handshake revisions), per session: many HTTP
    clients share one server, and one client's choice is not another's."""

    def __init__(self) -> None:
        self._levels: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()

    @staticmethod
    def _connection(session: Any) -> Any:
        # The SDK 2.3 makes a ServerSession per message; the client's connection is what lasts. It has
        # no public accessor yet, hence the private attribute (and the session itself as a fallback).
        return getattr(session, "_connection", session)

    def level_of(self, session: Any) -> str | None:
        try:
            return self._levels.get(self._connection(session))
        except TypeError:  # a connection that cannot be weakly referenced: no level was kept for it
            return None

    async def handle_set_level(
        self, ctx: ServerRequestContext[Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        try:
            self._levels[self._connection(ctx.session)] = params.level
        except TypeError:
            log.debug("logging/setLevel on a session that cannot be remembered; ignored")
        return types.EmptyResult()


class ProgressForwarder:
    """Sends one call's progress reports to the MCP client that made the call."""

    def __init__(self, ctx: ServerRequestContext[Any], threshold: LogThreshold) -> None:
        self.ctx = ctx
        meta: dict[str, Any] = dict(ctx.meta or {})
        self.progress_token = meta.get("progress_token", meta.get("progressToken"))
        # The 2026-07-28 per-request opt-in wins; else the connection's logging/setLevel, read at send time.
        self._requested_level = meta.get(types.LOG_LEVEL_META_KEY)
        self._threshold = threshold

    async def elicit(self, form: types.ElicitRequestFormParams) -> types.ElicitResult | None:
        """An elicitation to this call's client (``mcp_ask``); None when it cannot be sent one."""
        return await elicit_client(self.ctx, form)

    async def ask(self, kind: str, message: str) -> str | None:
        """Ask this call's client too (a take over, a confirmation: ``mcp_ask``); None when it cannot be."""
        return await ask_with(self.elicit, kind, message)

    async def __call__(self, seq: int, message: str) -> None:
        session = self.ctx.session
        if self.progress_token is not None:
            await session.send_progress_notification(
                self.progress_token, seq, message=message, related_request_id=self.ctx.request_id
            )
            return
        requested = (
            self._requested_level if self._requested_level is not None else self._threshold.level_of(session)
        )
        if not level_allows(requested, PROGRESS_LEVEL):
            return
        await session.send_notification(
            types.LoggingMessageNotification(
                params=types.LoggingMessageNotificationParams(
                    level=PROGRESS_LEVEL, data=message, logger=LOGGER_NAME
                )
            ),
            related_request_id=self.ctx.request_id,
        )


# What a tool server does with one call: the tool's name, its arguments and where its progress goes, to
# the result in wire form (never raised).
ToolCall = Callable[[str, dict[str, Any] | None, ProgressForwarder], Awaitable[dict[str, Any]]]


# What a server that only relays does with one call: the result as it came (its ``tools/call`` upstream).
ToolAnswer = Callable[[str, dict[str, Any] | None, ProgressForwarder], Awaitable[types.CallToolResult]]
ToolLister = Callable[[], Awaitable[types.ListToolsResult]]


def build_relaying_server(
    list_tools: ToolLister,
    answer: ToolAnswer,
    offered_names: tuple[str, ...],
    instructions: str,
    profile: str | ToolProfile = ToolProfile.ALL,
) -> Server[Any]:
    """The MCP server named ``phone-agent`` whose ``tools/list`` is ``list_tools`` and whose
    ``tools/call`` is ``answer``, with the client's progress and logging level honoured: the one shape
    of the server's own ``/mcp`` (``build_tool_server``) and of ``phone-agent mcp``'s front. Under a
    narrower ``profile``, a call of a tool not in ``offered_names`` is an ``unknown_tool`` isError
    result."""
    handlers = _RelayingHandlers(list_tools, answer, offered_names, ToolProfile(profile))
    server: Server[Any] = _ListChangingServer(
        SERVER_NAME,
        version=__version__,
        instructions=instructions,
        cache_hints=CACHE_HINTS,
        get_tool_input_schema=tool_input_schema,
        on_list_tools=handlers.on_list_tools,
        on_call_tool=handlers.on_call_tool,
    )
    # No OpenTelemetry span around each request (the SDK's default middleware): nothing here collects
    # traces, and a span's bookkeeping costs a call ~0.3 ms of CPU for nothing.
    server.middleware.clear()
    # Registered by hand, not with on_set_logging_level=, which warns at construction: the handler
    # declares the logging capability (we do send notifications/message) and records the client's level.
    server.add_request_handler(
        "logging/setLevel", types.SetLevelRequestParams, handlers.threshold.handle_set_level
    )
    # server/discover says so (SEP-2133 extension settings: none defined, an empty object).
    server.extensions[TASKS_EXTENSION] = {}
    server.add_request_handler("tasks/get", types.GetTaskRequestParams, handlers.on_get_task)
    server.add_request_handler("tasks/cancel", types.CancelTaskRequestParams, handlers.on_cancel_task)
    server.add_request_handler("tasks/update", UpdateTaskRequestParams, handlers.on_update_task)
    # MCP Apps (mcp_apps): the views, to the clients that declare the extension only.
    server.extensions[APPS_EXTENSION] = {}
    server.add_request_handler("resources/list", types.PaginatedRequestParams, handlers.on_list_resources)
    server.add_request_handler("resources/read", types.ReadResourceRequestParams, handlers.on_read_resource)
    return server


def tool_input_schema(name: str) -> dict[str, Any] | None:
    """A tool's input schema from the catalog, for the SDK's check of a 2026-07-28 call's ``Mcp-Param``
    headers (without it, the SDK lists every tool on each call to find the schema)."""
    spec = GROUPS_TOOL if name == GROUPS_TOOL_NAME else TOOLS_BY_NAME.get(name)
    return spec.input_schema if spec is not None else None


class UpdateTaskRequestParams(types.GetTaskRequestParams):
    """``tasks/update`` (the Tasks extension): the answers to a task's input requests."""

    input_responses: dict[str, Any] | None = None


class _ListChangingServer(Server[Any]):
    """The SDK's server, declaring ``tools.listChanged`` to handshake clients: enabling a tool group
    changes the compact list (``notifications/tools/list_changed``)."""

    def create_initialization_options(
        self, notification_options: Any = None, *args: Any, **kwargs: Any
    ) -> Any:
        chosen = notification_options or NotificationOptions(tools_changed=True)
        return super().create_initialization_options(chosen, *args, **kwargs)


class SessionGroups:
    """The tool groups one client enabled (compact profile), kept per connection as the logging level
    is; a stateless (2026-07-28) request has none to keep, so each of its lists is the core one."""

    def __init__(self) -> None:
        self._groups: weakref.WeakKeyDictionary[Any, frozenset[str]] = weakref.WeakKeyDictionary()

    def of(self, session: Any) -> frozenset[str]:
        try:
            return self._groups.get(LogThreshold._connection(session), frozenset())
        except TypeError:
            return frozenset()

    def switch(self, session: Any) -> _GroupSwitch:
        return _GroupSwitch(self, session)

    def keep(self, session: Any, names: frozenset[str]) -> None:
        try:
            self._groups[LogThreshold._connection(session)] = names
        except TypeError:
            log.debug("tool groups on a session that cannot be remembered; not kept")


class _GroupSwitch:
    """One client's groups as ``tool_groups`` sees them (``tools.groups.GroupSwitch``)."""

    def __init__(self, groups: SessionGroups, session: Any) -> None:
        self.groups, self.session = groups, session

    def enabled(self) -> frozenset[str]:
        return self.groups.of(self.session)

    async def enable(self, names: frozenset[str]) -> None:
        before = listed_names(self.enabled())
        self.groups.keep(self.session, names)
        if listed_names(names) != before:
            await self.session.send_tool_list_changed()


class _StatelessGroups:
    """A stateless (2026-07-28) client's groups: none kept, so none said on; the answer names every
    group's tools, each callable by name."""

    def enabled(self) -> frozenset[str]:
        return frozenset()

    async def enable(self, names: frozenset[str]) -> None:
        return None


class _RelayingHandlers:
    """The request handlers of one relaying server, and what they share: the client's logging level,
    its MCP tasks and its calls parked for input."""

    def __init__(
        self, list_tools: ToolLister, answer: ToolAnswer, offered_names: tuple[str, ...], chosen: ToolProfile
    ) -> None:
        self.list_tools, self.answer = list_tools, answer
        self.offered_names, self.chosen = offered_names, chosen
        self.threshold = LogThreshold()
        self.tasks = McpTaskStore()
        self.parked = ParkedCalls()
        self.groups = SessionGroups()

    async def on_list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        listed = await self.list_tools()
        if self.chosen is ToolProfile.COMPACT:
            enabled = self.groups.of(ctx.session)
            shown = [tool for tool in listed.tools if not hidden(tool.name, enabled)]
            listed = types.ListToolsResult(tools=shown)
        return with_views(listed) if declares_apps(ctx) else listed

    async def on_list_resources(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return list_views() if declares_apps(ctx) else types.ListResourcesResult(resources=[])

    async def on_read_resource(
        self, ctx: ServerRequestContext[Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        if not declares_apps(ctx):
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown resource {params.uri}")
        return read_view(str(params.uri))

    async def on_tool_groups(self, ctx: ServerRequestContext[Any], arguments: dict[str, Any] | None) -> Any:
        """tool_groups, answered here: the groups are this client's list, not the page's."""
        given = {key: value for key, value in (arguments or {}).items() if key != "device"}  # a farm's
        # A 2026-07-28 request has no session to keep them in (and its list comes from a shared cache).
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        switch = _StatelessGroups() if modern else self.groups.switch(ctx.session)
        env = CallEnv(channel=Channel.RELAY, groups=switch)
        try:
            assert GROUPS_TOOL.run is not None
            wire = await GROUPS_TOOL.run(env, validate_arguments(GROUPS_TOOL, given))
        except ToolError as failure:
            wire = failure.to_result()
        return types.CallToolResult.model_validate(wire)

    async def on_call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | dict[str, Any]:
        # The views' own answer_question comes with run_agent_task (mcp_apps.with_views).
        answers = params.name == ANSWER_TOOL_NAME and "run_agent_task" in self.offered_names
        offered = params.name in self.offered_names or answers
        if self.chosen is not ToolProfile.ALL and not offered:
            failure = tool_not_offered(params.name, str(self.chosen), self.offered_names)
            return types.CallToolResult.model_validate(failure.to_result())
        if params.name == GROUPS_TOOL_NAME and self.chosen is ToolProfile.COMPACT:
            return await self.on_tool_groups(ctx, params.arguments)
        if params.name in TASK_TOOLS and declares_tasks(_meta_of(ctx)):
            return self.start_task(params.name, params.arguments)
        forward = ProgressForwarder(ctx, self.threshold)
        # A retry (requestState) resumes its parked call whatever the retry declares.
        if params.name in ASKING_TOOLS and (takes_input_requests(ctx) or params.request_state is not None):
            name, arguments, answer = params.name, params.arguments, self.answer

            async def start(call: ParkedCall) -> types.CallToolResult:
                return await answer(name, arguments, call)  # type: ignore[arg-type]

            return await self.parked.run(params.name, params, forward, start)  # type: ignore[return-value]
        return await self.answer(params.name, params.arguments, forward)

    def start_task(self, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        """The call as an MCP task (the Tasks extension): its handle now, its result by tasks/get."""
        answer = self.answer

        async def run(progress: Callable[[int, str], Awaitable[None]]) -> dict[str, Any]:
            result = await answer(name, arguments, progress)  # type: ignore[arg-type]
            return result.model_dump(by_alias=True, mode="json", exclude_none=True)

        async def cancel() -> None:
            # As abort_task does, through the same channel (on a farm, to the same phone).
            device = (arguments or {}).get("device")
            aborted = await answer(TASK_TOOLS[name], {"device": device} if device else {}, _no_progress)
            if aborted.is_error:
                log.info("tasks/cancel: %s answered %s", TASK_TOOLS[name], aborted.content)

        return self.tasks.start(name, run, cancel)

    async def on_get_task(
        self, ctx: ServerRequestContext[Any], params: types.GetTaskRequestParams
    ) -> dict[str, Any]:
        if not declares_tasks(_meta_of(ctx)):
            raise missing_capability()
        return self.tasks.get(params.task_id)

    async def on_update_task(
        self, ctx: ServerRequestContext[Any], params: UpdateTaskRequestParams
    ) -> dict[str, Any]:
        if not declares_tasks(_meta_of(ctx)):
            raise missing_capability()
        return self.tasks.update(params.task_id, params.input_responses)

    async def on_cancel_task(
        self, ctx: ServerRequestContext[Any], params: types.CancelTaskRequestParams
    ) -> dict[str, Any]:
        if not declares_tasks(_meta_of(ctx)):
            raise missing_capability()
        return await self.tasks.cancel(params.task_id)


def takes_input_requests(ctx: ServerRequestContext[Any]) -> bool:
    """Whether the call's client speaks 2026-07-28 and declared ``elicitation``: the page's questions
    reach it as input requests (``mcp_input``)."""
    if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
        return False
    capabilities = ctx.session.client_capabilities
    return capabilities is not None and capabilities.elicitation is not None


def _meta_of(ctx: ServerRequestContext[Any]) -> dict[str, Any]:
    meta = ctx.meta
    if meta is None:
        return {}
    if isinstance(meta, dict):
        return meta
    return dict(meta.model_dump(by_alias=True)) if hasattr(meta, "model_dump") else dict(meta)


async def _no_progress(_seq: int, _message: str) -> None:
    return None


def build_tool_server(
    tools: list[types.Tool],
    call: ToolCall,
    instructions: str,
    profile: str | ToolProfile = ToolProfile.ALL,
) -> Server[Any]:
    """The MCP server named ``phone-agent`` offering ``tools``, each call answered by ``call``: the one
    shape of the local relay's server (``build_mcp_server``) and the farm's (``farm_mcp``). Under a
    narrower ``profile``, a call of a tool not in ``tools`` is an ``unknown_tool`` isError result."""

    async def list_tools() -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def answer(
        name: str, arguments: dict[str, Any] | None, forward: ProgressForwarder
    ) -> types.CallToolResult:
        return to_call_tool_result(name, await call(name, arguments, forward))

    offered_names = tuple(tool.name for tool in tools)
    return build_relaying_server(list_tools, answer, offered_names, instructions, profile)


def build_mcp_server(relay: Relay, profile: str | ToolProfile = DEFAULT_TOOL_PROFILE) -> Server[Any]:
    """The MCP server named ``phone-agent`` whose tools (those of ``profile``) are forwarded to the page."""

    async def call(name: str, arguments: dict[str, Any] | None, forward: ProgressForwarder) -> dict[str, Any]:
        meta = _meta_of(forward.ctx) if isinstance(forward, ProgressForwarder) else {}
        if name == ANSWER_TOOL_NAME:  # answered here: the questions are the relay's
            return await answer_question(relay, arguments)
        wanted, caller = meta.get(TRANSFER_META), meta.get(CALLER_META)
        caller = caller if caller in META_CALLERS else None  # an MCP App view's calls: "app"
        if wanted is None:
            return await relay.call(name, arguments, forward, caller=caller)
        spec = TOOLS_BY_NAME.get(name)
        transfer = relay.transfers.claim(wanted)
        if spec is None or transfer is None or spec.client_file != transfer.direction:
            if transfer is not None:
                await relay.transfers.finish(transfer, False, "the call cannot stream a file")
            return errors.invalid_argument(
                name,
                "_meta",
                f"names a transfer ({TRANSFER_META}) that is unknown, taken, or not of this tool's direction",
                "Open a new transfer for each call of push_file, pull_file, install_app or stop_recording.",
            ).to_result()
        return await relay.call(name, arguments, forward, transfer, caller)

    return build_tool_server(
        [mcp_tool(spec) for spec in tools_for_profile(profile)],
        call,
        server_instructions(profile),
        profile,
    )
