"""``phone-agent mcp``: the stdio front MCP clients spawn. It owns no page and no phone: it finds the
shared phone-agent server on the port (starting ``phone-agent serve`` in the background when none
answers, the way the first ``adb`` command starts the adb server) and relays its stdio to that server's
``/mcp`` with the user's bearer token.

When the server offers this front's tool profile (the usual case: the front started it with its own
options), the client's JSON-RPC messages pass as they are (``front_relay``: no MCP session of the
front's own, a lean HTTP/1.1 link; a ``path`` of a file tool is still read or written here, on the
client's machine, and streamed in chunks through the server's transfers: ``client_files``,
``transfers``). Otherwise ``--tools`` narrows the tools for this client alone: the front is then an MCP
server named ``phone-agent`` (the SDK's low-level ``Server`` on stdio, any protocol revision the SDK
speaks) whose ``tools/list`` and ``tools/call`` become the same requests upstream through an SDK
session (``Upstream``, which ``phone-agent call`` uses too); it always asks upstream for progress and
turns each report into what its own client asked for (``notifications/progress`` with a progressToken,
else ``notifications/message``, exactly as the server does on its own); cancelling a call cancels the
upstream request, which cancels the call in the page; the server's elicitation reaches this front's
client the same way (``mcp_ask.relay_elicitation``; an error when that client did not declare it).
Either way, if the server goes away (stopped, restarted), the call in flight fails with a clear text
and the next call finds or starts a server again. When stdin closes, the front ends (its upstream
session is closed); the server, the page and the phone stay.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import httpx2
import mcp.types as types
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError
from mcp.types import INTERNAL_ERROR, INVALID_REQUEST

from ..errors import ToolError, server_gone, server_unreachable
from ..relay.frames import CALLER_META, META_CALLERS
from ..tools.catalog import DEFAULT_TOOL_PROFILE, TOOL_NAMES, ToolProfile, tools_for_profile
from ..tools.groups import GROUP_NAMES, GROUPS_TOOL, GROUPS_TOOL_NAME
from . import background, client_files, credentials
from .front_relay import JsonRpcRelay, serve_stdio
from .listen import open_page_line, page_link
from .mcp_ask import relay_elicitation
from .mcp_bridge import ProgressForwarder, _meta_of, build_relaying_server, mcp_tool, server_instructions
from .mcp_http import MCP_PATH

log = logging.getLogger("phone_agent.front")

CONNECT_S = 30.0
CLOSE_S = 3.0


@dataclass
class FrontOptions:
    host: str
    port: int
    # The arguments ``phone-agent serve`` gets when this front starts the server.
    server_args: Sequence[str]
    tool_profile: str = str(DEFAULT_TOOL_PROFILE)
    sim: bool = False
    realistic: bool = False


class Upstream:
    """One MCP session with the shared server over streamable HTTP, (re)opened on demand.

    The SDK's client contexts must be entered and left by one task: the session lives in a task of its
    own, and callers borrow it.
    """

    def __init__(self, options: FrontOptions) -> None:
        self.options = options
        self.session: ClientSession | None = None
        self.token = ""
        self.identity: dict[str, Any] = {}  # what the server said of itself when last found
        self.instructions: str | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready: asyncio.Future[ClientSession] | None = None
        self._close = asyncio.Event()
        self._lock = asyncio.Lock()
        # The calls in flight (their progress forwarders): the server's elicitation goes to the latest
        # one's client (this front has one client).
        self.callers: list[Any] = []

    async def _elicit(
        self, _context: Any, params: types.ElicitRequestParams
    ) -> types.ElicitResult | types.ErrorData:
        return await relay_elicitation(self.callers[-1] if self.callers else None, params)

    async def get(self) -> ClientSession:
        """The open session, opening one (and starting the server) when there is none."""
        async with self._lock:
            if self.session is not None and self._task is not None and not self._task.done():
                return self.session
            await self._shut()
            token = await asyncio.to_thread(self._ensure_server)
            self.token = token
            self._close = asyncio.Event()
            self._ready = asyncio.get_running_loop().create_future()
            self._task = asyncio.create_task(self._hold(token, self._ready))
            async with asyncio.timeout(CONNECT_S):
                self.session = await asyncio.shield(self._ready)
            return self.session

    def _ensure_server(self) -> str:
        token = credentials.load_token()
        found, started = background.ensure_server(
            self.options.host, self.options.port, token, self.options.server_args
        )
        self.identity = found.identity
        if started:
            log.info(
                "started phone-agent serve in the background on port %d (log: %s in the state directory)",
                self.options.port,
                credentials.background_log_path(self.options.port).name,
            )
        else:
            log.info(
                "using the phone-agent server on port %d (pid %s)",
                self.options.port,
                found.identity.get("pid"),
            )
            if self.options.sim and not found.identity.get("sim"):
                log.warning(
                    "the server on port %d runs without --sim (it was started before, with other options); "
                    "run `%s`, then start this client again to get the simulated phone",
                    self.options.port,
                    background.stop_command(self.options.port, self.options.host),
                )
            elif self.options.sim and self.options.realistic and not found.identity.get("realistic"):
                log.warning(
                    "the server on port %d runs its simulated phone without --realistic (it was started "
                    "before, with other options); `phone-agent stop` and start again to get it",
                    self.options.port,
                )
        host = background.connect_host(self.options.host)
        if not found.identity.get("farm"):  # a farm router (serve --farm) serves no page to open
            # The link with the token: the browser that opens it becomes the page (pairing.PageKey). Said
            # only while no page is paired, and the link itself only to a person at a terminal.
            link = page_link(f"http://{host}:{self.options.port}/", credentials.load_page_token())
            paired = bool(found.identity.get("pagePaired"))
            line = open_page_line(link, self.options.port, sys.stderr, os.environ, paired)
            if line:
                print(line, file=sys.stderr, flush=True)
        return token

    async def _hold(self, token: str, ready: asyncio.Future[ClientSession]) -> None:
        url = f"http://{background.connect_host(self.options.host)}:{self.options.port}{MCP_PATH}"
        headers = {"Authorization": f"Bearer {token}"}
        # No read limit: a run_agent_task may be silent for minutes; the server bounds every call.
        timeout = httpx2.Timeout(30.0, read=None)
        try:
            async with (
                httpx2.AsyncClient(headers=headers, timeout=timeout) as http,
                streamable_http_client(url, http_client=http) as (read, write),
                ClientSession(read, write, elicitation_callback=self._elicit) as session,
            ):
                result = await session.initialize()
                self.instructions = getattr(result, "instructions", None)
                ready.set_result(session)
                await self._close.wait()
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(str(exc)))
            if not isinstance(exc, Exception):
                raise
            log.info("the connection to the phone-agent server ended: %s", exc)
        finally:
            self.session = None

    def broken(self, session: ClientSession) -> None:
        """A call on ``session`` failed at the transport: open a new one next time."""
        if self.session is session:
            self.session = None
            self._close.set()

    async def _shut(self) -> None:
        self.session = None
        self._close.set()
        task = self._task
        if task is not None and not task.done():
            try:
                async with asyncio.timeout(CLOSE_S):
                    await task
            except (TimeoutError, Exception):
                task.cancel()

    async def close(self) -> None:
        async with self._lock:
            await self._shut()

    @property
    def base_url(self) -> str:
        """The server's HTTP origin (where its file transfers are)."""
        return f"http://{background.connect_host(self.options.host)}:{self.options.port}"


async def _front_list(
    upstream: Upstream, chosen: ToolProfile, offered_names: tuple[str, ...]
) -> types.ListToolsResult:
    """The front's tool list: the server's, narrowed to the front's profile. A compact server lists
    few until asked for more: the front asks it for every group (once a session) and narrows the list
    itself, per client (under compact, by the groups that client enabled: ``mcp_bridge``; tool_groups
    is answered here)."""
    session = await upstream.get()
    listed = await session.list_tools()
    names = {tool.name for tool in listed.tools}
    if GROUPS_TOOL_NAME in names and not names >= set(TOOL_NAMES):
        await session.call_tool(GROUPS_TOOL_NAME, {"enable": list(GROUP_NAMES)})
        listed = await session.list_tools()
    if chosen is ToolProfile.COMPACT:
        if GROUPS_TOOL_NAME in names:
            return listed
        return types.ListToolsResult(tools=[*listed.tools, mcp_tool(GROUPS_TOOL)])
    if chosen is ToolProfile.ALL:
        return types.ListToolsResult(tools=[tool for tool in listed.tools if tool.name != GROUPS_TOOL_NAME])
    return types.ListToolsResult(tools=[tool for tool in listed.tools if tool.name in offered_names])


def build_front_server(upstream: Upstream, profile: str | ToolProfile) -> Server[Any]:
    """The stdio MCP server: every request answered by the shared server through ``upstream``."""
    chosen = ToolProfile(profile)
    offered_names = tuple(spec.name for spec in tools_for_profile(chosen))

    async def list_tools() -> types.ListToolsResult:
        return await _front_list(upstream, chosen, offered_names)

    async def answer(
        name: str, arguments: dict[str, Any] | None, forward: ProgressForwarder
    ) -> types.CallToolResult:
        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            await forward(int(progress), message or "")

        try:
            session = await upstream.get()
        except background.ServerProblem as exc:
            return _failure(name, str(exc))
        except Exception as exc:
            return _failure(name, f"cannot reach it: {exc}")

        async def call_upstream(
            relayed: dict[str, Any] | None, meta: dict[str, Any] | None = None
        ) -> types.CallToolResult:
            meta = {**caller_meta(forward), **(meta or {})}
            params = types.CallToolRequestParams(name=name, arguments=relayed, _meta=meta or None)
            # An MCP task's progress cannot ask its client; a forwarder (or a parked call) can.
            caller = forward if hasattr(forward, "elicit") else None
            if caller is not None:
                upstream.callers.append(caller)
            try:
                # send_request, not call_tool: a relay passes results on as they are; the client at the
                # other end checks them against the output schemas (call_tool would check them here too).
                result = await session.send_request(
                    types.CallToolRequest(params=params), types.CallToolResult, progress_callback=on_progress
                )
            except MCPError as exc:
                # The transport reports a lost server as a JSON-RPC error of its own making.
                if exc.error.code not in (INTERNAL_ERROR, INVALID_REQUEST):
                    raise
                upstream.broken(session)
                return types.CallToolResult.model_validate(server_gone(name, exc.error.message).to_result())
            except (httpx2.HTTPError, OSError, *anyio_closed()) as exc:
                upstream.broken(session)
                reason = str(exc) or type(exc).__name__
                return types.CallToolResult.model_validate(server_gone(name, reason).to_result())
            finally:
                if caller is not None:
                    upstream.callers.remove(caller)
            if not isinstance(result, types.CallToolResult):  # pragma: no cover - we allow no other results
                return _failure(name, "it answered something other than a tool result")
            return result

        if client_files.streams(name, arguments):  # a file of this machine: in chunks, never inline

            async def wire_call(relayed: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
                answered = await call_upstream(relayed, meta)
                return answered.model_dump(by_alias=True, mode="json", exclude_none=True)

            assert arguments is not None
            wire = await client_files.streamed_call(
                name, arguments, upstream.base_url, upstream.token, wire_call
            )
            return types.CallToolResult.model_validate(wire)
        try:
            arguments, download = await client_files.outbound(name, arguments)
        except ToolError as exc:  # a path on this machine that cannot be read
            return types.CallToolResult.model_validate(exc.to_result())
        result = await call_upstream(arguments)
        if download is not None:  # the answer's bytes go to the caller's file, not back over stdio
            wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
            return types.CallToolResult.model_validate(await client_files.inbound(name, download, wire))
        return result

    return build_relaying_server(list_tools, answer, offered_names, server_instructions(chosen), chosen)


def caller_meta(forward: Any) -> dict[str, Any]:
    """The ``_meta`` that says who made the call (an MCP App view's ``phone-agent/caller: app``), passed
    on to the shared server so the page shows the call as the app's; empty when the call did not say."""
    if not isinstance(forward, ProgressForwarder):
        return {}
    caller = _meta_of(forward.ctx).get(CALLER_META)
    return {CALLER_META: caller} if caller in META_CALLERS else {}


def anyio_closed() -> tuple[type[BaseException], ...]:
    import anyio

    return (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream)


def _failure(tool: str, reason: str) -> types.CallToolResult:
    return types.CallToolResult.model_validate(server_unreachable(tool, reason).to_result())


async def run_front(options: FrontOptions) -> int:
    """Serve MCP on stdio until stdin closes or a signal, then end the process: the stdin reader's
    thread cannot be cancelled, so nothing may wait for it. Returns only when no server can be had.

    When the server offers this front's tool profile, its messages are relayed as they are
    (``front_relay``); else an SDK server here narrows the server's tools to this client's."""
    upstream = Upstream(options)
    # Find or start the server before the client's first request: a one-shot client calls at once.
    try:
        token = await asyncio.to_thread(upstream._ensure_server)
        relaying = relays_as_is(options, upstream.identity)
        if not relaying:
            await upstream.get()
    except background.ServerProblem as exc:
        print(f"phone-agent: error: {exc}", file=sys.stderr, flush=True)
        return 1
    except Exception as exc:
        print(
            f"phone-agent: error: cannot open MCP with the server on port {options.port}: {exc}",
            file=sys.stderr,
            flush=True,
        )
        await upstream.close()
        return 1
    speak = _relaying(options, upstream, token) if relaying else _narrowing(options, upstream)
    loop = asyncio.get_running_loop()
    stopped = asyncio.Event()
    received: list[int] = []

    def on_signal(sig: int) -> None:
        received.append(sig)
        stopped.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, on_signal, sig)
    session = asyncio.create_task(speak)
    waiter = asyncio.create_task(stopped.wait())
    try:
        await asyncio.wait({session, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
        session.cancel()
        if relaying:  # the relay's own close (its session upstream); the SDK's stdin thread is never waited
            await asyncio.wait({session}, timeout=CLOSE_S)
        with contextlib.suppress(BaseException):
            async with asyncio.timeout(CLOSE_S):
                await upstream.close()
    with contextlib.suppress(ValueError, OSError):  # the relay may have closed stdout already
        sys.stdout.flush()
        sys.stderr.flush()
    if received:
        signal.signal(received[0], signal.SIG_DFL)
        signal.raise_signal(received[0])
    os._exit(0)


def relays_as_is(options: FrontOptions, identity: dict[str, Any]) -> bool:
    """Whether the server offers exactly this front's tools: its messages then pass as they are."""
    return identity.get("toolProfile") == str(ToolProfile(options.tool_profile))


async def _relaying(options: FrontOptions, upstream: Upstream, token: str) -> None:
    host = background.connect_host(options.host)

    async def ensure() -> str:
        return await asyncio.to_thread(upstream._ensure_server)

    def relay_of(write: Any) -> JsonRpcRelay:
        return JsonRpcRelay(host, options.port, upstream.base_url, ensure, write)

    async def first(relay: JsonRpcRelay) -> None:
        await relay.connect(token=token)

    await serve_stdio(relay_of, first)
    log.debug("the MCP client closed stdin")


async def _narrowing(options: FrontOptions, upstream: Upstream) -> None:
    from mcp.server.stdio import stdio_server

    server = build_front_server(upstream, options.tool_profile)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
    log.debug("the MCP client closed stdin")


def run_mcp_front(options: FrontOptions, verbose: bool = False) -> int:
    """``phone-agent mcp`` to its end; the exit code when no server could be had (else the process ends
    in ``run_front``)."""
    from .log_setup import configure_logging

    configure_logging(verbose)
    return asyncio.run(run_front(options))
