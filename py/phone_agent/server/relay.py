"""The relay on asyncio: one page's WebSocket on one side, tool calls that wait for it on the other.

``Relay`` drives ``RelayCore`` (the pure part): it sends call and cancel frames (``relay.frames``) through a
``PageLink``, resolves each call's future from the page's answer, enforces the per-tool time limit, hands
progress to the caller in order, and runs the self-check 3 s after a page connects. A call that finds no
page answers "Browser not connected" at once when no page has paired since the server started and none is
booting (saying the command that prints the page's link), else waits for the page up to ``page_wait_s``
(``--page-wait-ms``).
While a call's agent waits for a person, the page may ask the call's MCP client too (``ask`` frames): the
relay hands the question to the call's ``ask`` (the MCP edge's elicitation) and sends the client's answer
back; the page's ``withdraw`` (the person at the page answered first) or the call's end cancels the
question. Callers get a CallToolResult in wire form (a dict) — failures are ``isError`` results, never
exceptions, except cancellation.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from .. import errors
from ..errors import ErrorCode, ToolError, page_disconnected, page_replaced
from ..relay.core import CallAnswered, CallAsks, CallProgress, CallWithdraws, PendingCall, RelayCore
from ..relay.frames import (
    CLOSE_REPLACED,
    CLOSE_REPLACED_REASON,
    CLOSE_SHUTDOWN,
    CLOSE_SHUTDOWN_REASON,
    AnswerFrame,
    CallFrame,
    CancelFrame,
    PolicyFrame,
    SecretNamesFrame,
    SecretValueFrame,
    TaskRecordFrame,
    TransferRef,
    parse_secret_request,
)
from .failures import never_paired
from .task_ledger import TaskLedger
from .transfers import Transfer, TransferRegistry

log = logging.getLogger("phone_agent.relay")

# Receives one progress report (seq, message) of a call; may fail — a failure is logged, never fatal.
ProgressHandler = Callable[[int, str], Awaitable[None]]
# Asks a call's MCP client (kind "takeover" or "confirm", a message) and answers done/cancel or yes/no, or
# None when the client cannot be asked or gave no answer. A ProgressHandler that has an ``ask`` attribute
# of this shape (mcp_bridge.ProgressForwarder) lets the page ask the caller.
CallerAsk = Callable[[str, str], Awaitable[str | None]]

DEFAULT_SELF_CHECK_DELAY_S = 3.0
DEFAULT_PAGE_WAIT_S = 10.0
# How long a finished call waits for its queued progress to be delivered before it answers anyway.
PROGRESS_DRAIN_S = 2.0
LINK_CLOSE_S = 2.0
# Progress is a narration, not data: a page that floods it loses the excess, never the call.
MAX_QUEUED_PROGRESS = 1000
MAX_PROGRESS_CHARS = 4000


class PageLink(Protocol):
    """The page's end of the relay, as the relay needs it (a WebSocket, or a fake in tests)."""

    async def send_text(self, text: str) -> None: ...

    async def close(self, code: int, reason: str) -> None: ...


@dataclass
class _CallState:
    future: asyncio.Future[dict[str, Any]]
    progress: asyncio.Queue[tuple[int, str] | None] = field(default_factory=asyncio.Queue)
    ask: CallerAsk | None = None
    # The page's questions to the client still open, by their ask id.
    asks: dict[str, asyncio.Task[None]] = field(default_factory=dict)


class Relay:
    """The relay between MCP tool calls and the one connected page."""

    def __init__(
        self,
        core: RelayCore | None = None,
        self_check_delay_s: float | None = None,
        page_wait_s: float = 0.0,
    ) -> None:
        self.core = core if core is not None else RelayCore()
        self.page_wait_s = page_wait_s
        self._page_present = asyncio.Event()
        # Whether any page has paired since the server started (a call then waits for one to come back),
        # and when a page last asked for its configuration (it is booting: a call waits for it too).
        self.paired_once = False
        self._page_booting_at: float | None = None
        # None or <= 0 turns the self-check off (tests that script every frame the page sees).
        self.self_check_delay_s = (
            DEFAULT_SELF_CHECK_DELAY_S if self_check_delay_s is None else self_check_delay_s
        )
        self._links: dict[int, PageLink] = {}
        # The task records the pages stored (task_ledger): handed to each page that connects.
        self.ledger = TaskLedger()
        # The server's secrets (PHONE_AGENT_SECRET_<NAME>): their names go to each paired page, a value
        # only in the answer to that page's request while it types it; never logged.
        self.secrets: dict[str, str] = {}
        # --confirm always: the page asks the person before its clients' sensitive calls too.
        self.confirm_always = False
        # Files streamed between phone-agent mcp and the page (server.transfers), by id.
        self.transfers = TransferRegistry()
        # Set by close(): the server is stopping, and a page that comes back now is turned away.
        self.closing = False
        # Tasks nobody awaits (self-checks, cancel frames, closing replaced pages) are kept here so the
        # event loop does not garbage-collect them half-way.
        self._background: set[asyncio.Task[Any]] = set()
        # The page's questions (take over, confirmation) still open, by ask id: an MCP App view answers
        # them too (answer_question), whoever answers first wins.
        self.questions: dict[str, CallAsks] = {}

    async def answer_question(self, ask: str, answer: str) -> bool:
        """Answer the page's open question ``ask`` (as the call's client would): the page takes it if
        nobody answered first; the question to the client is withdrawn. False when it is not open."""
        event = self.open_questions().get(ask)
        link = self._links.get(event.call.page) if event is not None else None
        if event is None or link is None:
            return False
        self.questions.pop(ask, None)
        asked = event.call.context.asks.pop(ask, None) if event.call.context else None
        if asked is not None:
            asked.cancel()
        log.info("an MCP App view answered the %s question: %s", event.kind, answer)
        await self._send(link, AnswerFrame(ask, answer).to_wire())
        return True

    def open_questions(self) -> dict[str, CallAsks]:
        """The questions whose call still runs (those of ended calls are dropped)."""
        for ask, event in list(self.questions.items()):
            state: _CallState | None = event.call.context
            if state is None or state.future.done():
                del self.questions[ask]
        return dict(self.questions)

    @property
    def has_page(self) -> bool:
        return self.core.page is not None

    # -- the page side --------------------------------------------------------------------------

    async def page_connected(self, link: PageLink, description: str = "page") -> int:
        """A page connected: it replaces the previous one, whose pending calls fail at once."""
        page, dropped = self.core.attach_page()
        old_links = [(token, old) for token, old in self._links.items() if token != page]
        self._links[page] = link
        self._page_present.set()
        self.paired_once = True
        for call in dropped:
            self._settle(call, page_replaced(call.tool).to_result())
        for token, old in old_links:
            del self._links[token]
            log.info("a new page replaces the previous one%s", _interrupted(dropped))
            self._spawn(self._close_link(old, CLOSE_REPLACED, CLOSE_REPLACED_REASON))
        log.info("%s connected to the relay", description)
        if len(self.ledger):
            self._spawn(self._send_records(link, self.ledger.records()))
        if self.secrets:
            self._spawn(self._send(link, SecretNamesFrame(list(self.secrets)).to_wire()))
        if self.confirm_always:
            self._spawn(self._send(link, PolicyFrame("always").to_wire()))
        if self.self_check_delay_s and self.self_check_delay_s > 0:
            self._spawn(self._self_check(page))
        return page

    def page_frame(self, page: int, text: str | bytes) -> None:
        """One frame from page ``page``; bad frames are logged (debug) and ignored."""
        request = parse_secret_request(text)
        if request is not None:
            link = self._links.get(page)
            if link is not None and page == self.core.page:
                value = self.secrets.get(request.name)
                log.info("the page types the secret %s%s", request.name, "" if value else " (unknown here)")
                self._spawn(self._send(link, SecretValueFrame(request.id, value).to_wire()))
            return
        event = self.core.receive_frame(page, text)
        if isinstance(event, CallAnswered):
            log.debug("answer for %s (%s)", event.call.id, event.call.tool)
            self._settle(event.call, event.result)
        elif isinstance(event, CallProgress):
            log.debug("progress %d for %s (%s)", event.seq, event.call.id, event.call.tool)
            state: _CallState = event.call.context
            if state.progress.qsize() >= MAX_QUEUED_PROGRESS:
                log.debug("progress for %s dropped: the MCP client is not keeping up", event.call.id)
            else:
                state.progress.put_nowait((event.seq, event.message[:MAX_PROGRESS_CHARS]))
        elif isinstance(event, CallAsks):
            self.questions[event.ask] = event
            self._ask_caller(event)
        elif isinstance(event, CallWithdraws):
            self.questions.pop(event.ask, None)
            asked = event.call.context.asks.pop(event.ask, None) if event.call.context else None
            if asked is not None:
                log.info("the person at the page answered first; the question to the client is withdrawn")
                asked.cancel()
        else:
            log.debug("ignored a frame from the page: %s", event.reason)

    def _ask_caller(self, event: CallAsks) -> None:
        """Hand the page's question to the call's client; its answer goes back to the page."""
        state: _CallState | None = event.call.context
        if state is None or state.ask is None or event.ask in state.asks:
            log.debug("the page asks the client of %s, which cannot be asked", event.call.id)
            return
        ask, page = state.ask, event.call.page

        async def relay_answer() -> None:
            try:
                answer = await ask(event.kind, event.message)
            except Exception as exc:  # the client failed to answer: the person at the page still can
                log.info("the MCP client could not be asked (%s): %s", event.kind, exc)
                return
            finally:
                state.asks.pop(event.ask, None)
            link = self._links.get(page)
            if answer is not None and link is not None:
                log.info("the MCP client answered the %s question: %s", event.kind, answer)
                self.questions.pop(event.ask, None)
                await self._send(link, AnswerFrame(event.ask, answer).to_wire())

        task = asyncio.ensure_future(relay_answer())
        state.asks[event.ask] = task
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    def page_disconnected(self, page: int) -> None:
        """Page ``page`` went away: its pending calls fail at once (they can never be answered)."""
        self._links.pop(page, None)
        was_current = page == self.core.page
        dropped = self.core.detach_page(page)
        if self.core.page is None:
            self._page_present.clear()
        for call in dropped:
            self._settle(call, page_disconnected(call.tool, self.core.page_url).to_result())
        if was_current:
            log.info("page disconnected from the relay%s", _interrupted(dropped))

    def share_task(self, record: dict[str, Any]) -> bool:
        """A page stored a task record: keep it, and hand it to the page on the relay; whether it was new."""
        if not self.ledger.put(record):
            return False
        link = self._links.get(self.core.page) if self.core.page is not None else None
        if link is not None:
            self._spawn(self._send_records(link, [record]))
        return True

    async def _send_records(self, link: PageLink, records: list[dict[str, Any]]) -> None:
        try:
            async with asyncio.timeout(LINK_CLOSE_S * len(records)):
                for record in records:
                    await link.send_text(TaskRecordFrame(record).to_wire())
        except Exception as exc:
            log.debug("could not hand task records to the page: %s", exc)

    # -- the caller side ------------------------------------------------------------------------

    async def call(
        self,
        tool: Any,
        args: Any,
        on_progress: ProgressHandler | None = None,
        transfer: Transfer | None = None,
        caller: str | None = None,
    ) -> dict[str, Any]:
        """Forward one tool call to the page and answer its result (wire form); never raises but on cancel.
        With ``transfer`` (a file streamed in chunks, ``server.transfers``) the page is told of it, and it
        ends with the call; ``caller``: who made it, when the request said (``frames.CALLER_META``)."""
        if transfer is None:
            return await self._call(tool, args, on_progress, None, caller)
        result: dict[str, Any] | None = None
        try:
            result = await self._call(tool, args, on_progress, transfer.descriptor(), caller)
            return result
        finally:
            failed = result is None or bool(result.get("isError"))
            why = "the call ended" if result is None else f"the call answered: {_result_text(result, 300)}"
            await self.transfers.finish(transfer, not failed, why)

    async def _call(
        self,
        tool: Any,
        args: Any,
        on_progress: ProgressHandler | None,
        transfer: TransferRef | None,
        caller: str | None = None,
    ) -> dict[str, Any]:
        try:
            call = self.core.start_call(tool, args)
        except ToolError as exc:
            absent = exc.code is ErrorCode.BROWSER_NOT_CONNECTED
            if absent and not self.paired_once and not self._page_on_its_way():
                # No page has paired since this server started, and none is booting: none is coming by
                # itself, so the caller learns at once what to do instead of waiting.
                return never_paired(self.core.page_url).to_result()
            if exc.code is not ErrorCode.BROWSER_NOT_CONNECTED or not await self._wait_for_page():
                return exc.to_result()
            try:
                call = self.core.start_call(tool, args)
            except ToolError as again:
                return again.to_result()
        state = _CallState(asyncio.get_running_loop().create_future(), ask=getattr(on_progress, "ask", None))
        call.context = state
        link = self._links[call.page]
        pump: asyncio.Task[None] | None = None
        try:
            try:
                # A page whose socket stopped draining must not hold the call past its own limit.
                async with asyncio.timeout(call.timeout_ms / 1000):
                    await link.send_text(CallFrame(call.id, call.tool, call.args, transfer, caller).to_wire())
            except Exception as exc:
                log.info("could not send %s to the page: %s", call.tool, exc)
                self.core.end_call(call.id)
                return page_disconnected(call.tool, self.core.page_url).to_result()
            log.debug("sent %s as %s", call.tool, call.id)
            pump = asyncio.create_task(self._pump_progress(call, state, on_progress))
            try:
                async with asyncio.timeout(call.timeout_ms / 1000):
                    # shield: a timeout must not cancel the future an answer may still be set on.
                    result = await asyncio.shield(state.future)
            except TimeoutError:
                if state.future.done():  # answered in the same instant the time ran out: keep the answer
                    result = state.future.result()
                else:
                    self.core.end_call(call.id)
                    log.info('tool "%s" timed out after %dms; cancelling it', call.tool, call.timeout_ms)
                    self._spawn(self._send_cancel(call))
                    result = errors.timed_out(call.tool, call.timeout_ms).to_result()
        except asyncio.CancelledError:
            # The MCP client cancelled: the page should stop working on it too.
            if self.core.end_call(call.id) is not None:
                log.info('tool "%s" was cancelled by the client; cancelling it in the page', call.tool)
                self._spawn(self._send_cancel(call))
            if pump is not None:
                pump.cancel()
            _end_asks(state)
            raise
        _end_asks(state)
        # Progress that arrived before the answer is delivered before the answer.
        state.progress.put_nowait(None)
        try:
            async with asyncio.timeout(PROGRESS_DRAIN_S):
                await pump
        except TimeoutError:
            log.warning("progress of %s was still queued when it ended; the rest is dropped", call.id)
        return result

    def page_booting(self) -> None:
        """A page asked for its configuration (``/api/config``): it pairs within seconds."""
        self._page_booting_at = asyncio.get_running_loop().time()

    def _page_on_its_way(self) -> bool:
        booting = self._page_booting_at
        return booting is not None and asyncio.get_running_loop().time() - booting < self.page_wait_s

    async def _wait_for_page(self) -> bool:
        """Wait up to ``page_wait_s`` for a page (a one-shot client often calls before the page is back)."""
        if self.page_wait_s <= 0:
            return False
        try:
            async with asyncio.timeout(self.page_wait_s):
                while self.core.page is None:
                    await self._page_present.wait()
                    await asyncio.sleep(0)  # a page that connected and left at once: look again
        except TimeoutError:
            return False
        return True

    # -- shutdown -------------------------------------------------------------------------------

    async def close(self) -> None:
        """Fail every pending call and close the page's socket (the server is stopping); from now on a
        page that reconnects is turned away (``closing``)."""
        self.closing = True
        for call in list(self.core.pending.values()):
            self.core.end_call(call.id)
            self._settle(call, page_disconnected(call.tool, self.core.page_url).to_result())
        links = list(self._links.items())
        self._links.clear()
        self._page_present.clear()
        for token, link in links:
            self.core.detach_page(token)
            await self._close_link(link, CLOSE_SHUTDOWN, CLOSE_SHUTDOWN_REASON)
        for task in list(self._background):
            task.cancel()

    # -- internals ------------------------------------------------------------------------------

    @staticmethod
    def _settle(call: PendingCall, result: dict[str, Any]) -> None:
        state: _CallState | None = call.context
        if state is not None and not state.future.done():
            state.future.set_result(result)
        if state is not None:
            _end_asks(state)

    async def _pump_progress(
        self, call: PendingCall, state: _CallState, handler: ProgressHandler | None
    ) -> None:
        while (item := await state.progress.get()) is not None:
            if handler is None:
                continue
            seq, message = item
            try:
                await handler(seq, message)
            except Exception as exc:  # progress is supplementary: it never fails the call
                log.warning("could not forward progress %d of %s to the MCP client: %s", seq, call.tool, exc)

    async def _send(self, link: PageLink, text: str) -> None:
        try:
            async with asyncio.timeout(LINK_CLOSE_S):
                await link.send_text(text)
        except Exception as exc:
            log.debug("could not send a frame to the page: %s", exc)

    async def _send_cancel(self, call: PendingCall) -> None:
        link = self._links.get(call.page)
        if link is None:
            return
        try:
            async with asyncio.timeout(LINK_CLOSE_S):
                await link.send_text(CancelFrame(call.id).to_wire())
        except Exception as exc:
            log.debug("could not send cancel for %s: %s", call.id, exc)

    async def _close_link(self, link: PageLink, code: int, reason: str) -> None:
        try:
            async with asyncio.timeout(LINK_CLOSE_S):
                await link.close(code, reason)
        except Exception as exc:
            log.debug("closing a page socket failed: %s", exc)

    async def _self_check(self, page: int) -> None:
        """The specification's link check: get_device_status once, 3 s after the page connected."""
        await asyncio.sleep(self.self_check_delay_s)
        if self.core.page != page:
            return
        try:
            result = await self.call("get_device_status", {})
        except Exception as exc:  # a check must never take anything down with it
            log.warning("the self-check failed: %s", exc)
            return
        if self.core.page != page and result.get("isError"):
            return  # the page left during the check; its disconnect was logged already
        log.info("page connected; device status: %s", _result_text(result))

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)
        task.add_done_callback(self._background.discard)


def _end_asks(state: _CallState) -> None:
    """An ended call's questions to its client are over (withdrawn)."""
    for asked in state.asks.values():
        asked.cancel()
    state.asks.clear()


def _interrupted(calls: list[PendingCall]) -> str:
    return f" ({len(calls)} pending call(s) failed)" if calls else ""


def _result_text(result: dict[str, Any], limit: int = 500) -> str:
    """A short text of a result for the log: its text content, never image data."""
    parts = []
    content = result.get("content") if isinstance(result, dict) else None
    for item in content if isinstance(content, list) else []:
        if isinstance(item, dict) and item.get("type") == "text":
            parts.append(str(item.get("text", "")))
        elif isinstance(item, dict):
            parts.append(f"[{item.get('type')}]")
    text = " ".join(parts) or "(no text)"
    if result.get("isError"):
        text = f"error: {text}"
    return text if len(text) <= limit else text[: limit - 1] + "…"
