"""McpRelayClient: Channel A in the page. Connects to the phone-agent server's relay WebSocket.

Connects on load; after a disconnect it retries at once, then after 1 s, 2 s, 4 s … at most its retry
interval (30 s by default). Each connection begins by pairing (``RelayPairing``: the secret the server
handed this page in ``/api/config``, or one remembered from pairing by code); the page counts as
connected once the server answers ``paired``. It runs each ``{id, tool, args}`` frame through the shared
ToolDispatcher (the same dispatch WebMCP uses), answers ``{id, result}``, streams progress frames
numbered per request, and cancels a call when the server sends ``{id, type: "cancel"}`` — and cancels
every call still running when the socket closes or another page replaces this one, since no one can
receive their answers any more (a run_agent_task started over the relay is aborted with them; one
started in the page itself does not go through here). While a relayed call's agent waits for a person
(take over, confirmation) it asks the call's MCP client too: ``{id, type: "ask"}`` out, the server's
``{type: "answer"}`` back, ``{type: "withdraw"}`` when the person at the page answered first (the call's
progress sink carries ``ask``: ``CallLink``). Frame parsing and numbering live in the pure
``relay.frames`` module.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import js  # type: ignore[import-not-found]
from pyodide.ffi import create_proxy  # type: ignore[import-not-found]

from .. import errors
from ..relay.frames import (
    CLOSE_REPLACED,
    CLOSE_UNPAIRED,
    AnswerFrame,
    AskFrame,
    BadFrame,
    CallFrame,
    CancelFrame,
    HelloFrame,
    PairedFrame,
    PairFrame,
    PolicyFrame,
    ProgressSequence,
    ResultFrame,
    SecretNamesFrame,
    SecretRequestFrame,
    SecretValueFrame,
    TaskRecordFrame,
    WithdrawFrame,
    parse_server_frame,
)
from ..relay.settings import retry_delay_ms
from ..tools.dispatch import Caller, ToolDispatcher
from ..tools.spec import Channel
from .transfer_http import transfer_end

StatusCallback = Callable[[bool], None]
ReplacedCallback = Callable[[], None]
STORAGE_PREFIX = "phone-agent.relay-pairing:"


class RelayPairing:
    """How this page proves itself to the relay.

    A page served by the relay's own server (``same_origin``) and opened with the page's link shows the
    secret from ``/api/config`` (handed only to the browser holding the page cookie), fetched again
    after a refusal (the server may have been restarted with a new one). Any other page — of another
    origin, or of this one opened without the link — shows the secret it was given when it paired by
    code, kept in localStorage per relay URL, else the one its own phone-agent server gave it (one
    user's servers share the secret); when that is refused it asks the person for the code the
    server's console shows (``on_code_needed``).
    """

    def __init__(
        self,
        relay_url: str,
        same_origin: bool,
        fetch_secret: Callable[[], Awaitable[str | None]],
        initial_secret: str | None = None,
        on_code_needed: Callable[[bool], None] | None = None,
    ) -> None:
        self.relay_url = relay_url
        self.same_origin = same_origin
        self._fetch_secret = fetch_secret
        self._secret = initial_secret
        self._on_code_needed = on_code_needed
        self._code: str | None = None
        # Whether the secret shown last came from this page's own server (the page cookie).
        self._from_config = False
        self.waiting_for_code = False

    @property
    def _storage_key(self) -> str:
        return STORAGE_PREFIX + self.relay_url

    def _stored(self) -> str | None:
        try:
            stored = js.localStorage.getItem(self._storage_key)
        except Exception:  # storage can be disabled
            stored = None
        return stored if isinstance(stored, str) and stored else None

    async def first_frame(self) -> str:
        if self._code is not None:
            code, self._code = self._code, None
            return PairFrame(code).to_wire()
        self._from_config = False
        if self.same_origin:
            if self._secret is None:
                self._secret = await self._fetch_secret()
            if self._secret:
                self._from_config = True
                return HelloFrame(self._secret).to_wire()
            # Opened without the link: a pairing by code made earlier, else none (the code is asked).
            return HelloFrame(self._stored() or "").to_wire()
        # Else the secret of the phone-agent that served this page: the same user's servers share one.
        return HelloFrame(self._stored() or self._secret or "").to_wire()

    def remembered(self) -> bool:
        """Whether this page paired with this relay by code before (it then reconnects by itself)."""
        return self._stored() is not None

    def paired(self, secret: str | None) -> None:
        if secret:
            try:
                js.localStorage.setItem(self._storage_key, secret)
            except Exception:
                js.console.warn("[MCP relay] could not remember the pairing (storage unavailable)")
        if self.waiting_for_code:
            self.waiting_for_code = False
            if self._on_code_needed is not None:
                self._on_code_needed(False)

    def refused(self) -> bool:
        """The server refused this page's pairing; whether to wait for a person (a code) before retrying."""
        if self.same_origin and self._from_config:
            self._secret = None
            return False
        if self.same_origin:
            self._secret = None  # the page may have been given the link in another tab meanwhile
        self.waiting_for_code = True
        if self._on_code_needed is not None:
            self._on_code_needed(True)
        return True

    def secret_shown(self) -> str | None:
        """The secret this page pairs with (from its server, or from a pairing by code), if any."""
        return self._secret or self._stored()

    def enter_code(self, code: str) -> None:
        self._code = "".join(ch for ch in code if ch.isdigit())


class McpRelayClient:
    def __init__(
        self,
        context: ToolDispatcher,
        url: str,
        retry_ms: int,
        on_status_change: StatusCallback | None = None,
        on_replaced: ReplacedCallback | None = None,
        pairing: RelayPairing | None = None,
        on_retry: Callable[[str], None] | None = None,
    ) -> None:
        self.url = url
        self.retry_ms = retry_ms
        # Told, in words, how this page retries now (the relay card's Retry line follows it).
        self._on_retry = on_retry
        self.connected = False
        self._context = context
        self._on_status_change = on_status_change
        self._on_replaced = on_replaced
        self.pairing = pairing
        # Receives the task records the server keeps (``task`` frames): one truth across pages.
        self.on_task_record: Callable[[dict[str, Any]], Any] | None = None
        self.replaced = False
        self._socket: Any = None
        self._calls: dict[str, asyncio.Task[None]] = {}
        self._progress = ProgressSequence()
        self._runner: asyncio.Task[None] | None = None
        self._wake = asyncio.Event()
        # The server's secrets: told their names on pairing (``on_secret_names``), asked for a value
        # while typing it (``fetch_secret``); the answers wait here by request id.
        self.on_secret_names: Callable[[list[str]], None] | None = None
        # The server's --confirm (True: "always"), told on pairing and reset when the socket closes.
        self.on_confirm_always: Callable[[bool], None] | None = None
        self._secret_waits: dict[str, asyncio.Future[str | None]] = {}
        self._secret_ids = 0
        # The questions asked of calls' MCP clients, waiting for the server's answer, by ask id.
        self._asks: dict[str, asyncio.Future[str | None]] = {}
        self._ask_ids = 0

    def connect(self) -> None:
        """Start connecting (and reconnecting) in the background."""
        if self._runner is None or self._runner.done():
            self._runner = asyncio.ensure_future(self._run())

    def retry_now(self) -> None:
        """Skip the rest of the wait before the next attempt (the page's Reconnect button)."""
        self._wake.set()

    def pair_with_code(self, code: str) -> None:
        """Pair with the code the server's console shows (a page of another origin), now."""
        if self.pairing is not None:
            self.pairing.enter_code(code)
        self._wake.set()

    async def fetch_secret(self, name: str, timeout_s: float = 10.0) -> str | None:
        """The value of the server's secret ``name``, asked over the paired relay; None when the relay
        is not connected, the server has none or does not answer within ``timeout_s``."""
        if not self.connected:
            return None
        self._secret_ids += 1
        request_id = f"secret-{self._secret_ids}"
        waiting: asyncio.Future[str | None] = asyncio.get_event_loop().create_future()
        self._secret_waits[request_id] = waiting
        try:
            self._send(SecretRequestFrame(request_id, name).to_wire())
            return await asyncio.wait_for(waiting, timeout_s)
        except TimeoutError:
            return None
        finally:
            self._secret_waits.pop(request_id, None)

    def _say_retry(self, text: str) -> None:
        if self._on_retry is not None:
            self._on_retry(text)

    def retry_text(self, delay_ms: int | None = None) -> str:
        """How the page retries: while connected, after a drop, or before its next attempt."""
        ceiling = f"{self.retry_ms / 1000:g} s"
        if delay_ms is None:
            return f"if the link drops: at once, then after 1, 2, 4 … s (at most {ceiling})"
        return f"next attempt in {delay_ms / 1000:g} s (waits grow 1, 2, 4 … s, at most {ceiling})"

    async def _run(self) -> None:
        failures = 0
        while True:
            self._wake.clear()
            self._say_retry("connecting…")
            code, was_paired = await self._connect_once()
            # A lost connection is retried at once; failed attempts back off 1 s, 2 s, 4 s … ≤ retry_ms.
            failures = 0 if was_paired else failures + 1
            self.replaced = code == CLOSE_REPLACED
            if self.replaced:
                js.console.warn(
                    "[MCP relay] another phone-agent page took over the relay; "
                    "this page waits until you press Reconnect now"
                )
                if self._on_replaced is not None:
                    self._on_replaced()
                self._say_retry("stopped: this page does not retry until you press Reconnect now")
                await self._wake.wait()
                failures = 0
                continue
            if code == CLOSE_UNPAIRED and self.pairing is not None and self.pairing.refused():
                js.console.warn(
                    "[MCP relay] the server asks this page to pair: open the link `phone-agent url` "
                    "prints, or type the code phone-agent shows in its console into the MCP relay card"
                )
                self._say_retry("stopped until the pairing code is typed")
                await self._wake.wait()
                failures = 0
                continue
            delay_ms = retry_delay_ms(failures, self.retry_ms)
            self._say_retry(self.retry_text(delay_ms) if delay_ms > 0 else "at once")
            if delay_ms <= 0:
                await asyncio.sleep(0)
                continue
            try:
                await asyncio.wait_for(self._wake.wait(), delay_ms / 1000)
            except TimeoutError:
                pass

    async def _connect_once(self) -> tuple[int | None, bool]:
        """One connection, from opening to closing; answers the close code and whether it was paired."""
        closed: asyncio.Future[int | None] = asyncio.get_event_loop().create_future()
        opened: asyncio.Event = asyncio.Event()
        paired: list[bool] = []
        try:
            socket = js.WebSocket.new(self.url)
        except Exception as exc:  # a malformed ?relay= URL throws SyntaxError at once
            js.console.warn(f"[MCP relay] cannot connect to {self.url}: {exc}")
            return None, False

        def on_open(_event: Any) -> None:
            opened.set()

        def on_message(event: Any) -> None:
            data = event.data
            if not isinstance(data, str):
                return
            frame = parse_server_frame(data)
            if isinstance(frame, PairedFrame):
                paired.append(True)
                if self.pairing is not None:
                    self.pairing.paired(frame.secret)
                self._set_connected(True)
                js.console.log(f"[MCP relay] connected to {self.url}")
            elif isinstance(frame, PolicyFrame):
                if self.on_confirm_always is not None:
                    self.on_confirm_always(frame.confirm == "always")
            elif isinstance(frame, SecretNamesFrame):
                if self.on_secret_names is not None:
                    self.on_secret_names(frame.names)
            elif isinstance(frame, AnswerFrame):
                asked = self._asks.get(frame.id)
                if asked is not None and not asked.done():
                    asked.set_result(frame.answer)
            elif isinstance(frame, SecretValueFrame):
                waiting = self._secret_waits.get(frame.id)
                if waiting is not None and not waiting.done():
                    waiting.set_result(frame.value)
            else:
                self._handle_frame(frame)

        def on_close(event: Any) -> None:
            if not closed.done():
                closed.set_result(int(event.code))

        handlers = {"open": on_open, "message": on_message, "close": on_close}
        proxies = {name: create_proxy(handler) for name, handler in handlers.items()}
        for name, proxy in proxies.items():
            socket.addEventListener(name, proxy)
        self._socket = socket
        hello = asyncio.ensure_future(self._say_hello(socket, opened))
        try:
            return await closed, bool(paired)
        finally:
            hello.cancel()
            for name, proxy in proxies.items():
                socket.removeEventListener(name, proxy)
                proxy.destroy()
            self._socket = None
            for asked in self._asks.values():  # nobody can answer them now: the person at the page can
                if not asked.done():
                    asked.set_result(None)
            self._cancel_calls()
            if self.on_secret_names is not None:
                self.on_secret_names([])  # the next server says its own
            if self.on_confirm_always is not None:
                self.on_confirm_always(False)
            if self.connected:
                js.console.log("[MCP relay] disconnected; retrying")
            self._set_connected(False)

    async def _say_hello(self, socket: Any, opened: asyncio.Event) -> None:
        await opened.wait()
        frame = HelloFrame("").to_wire() if self.pairing is None else await self.pairing.first_frame()
        if socket.readyState == 1:
            socket.send(frame)

    def _cancel_calls(self) -> None:
        """The socket is gone: no one can receive these calls' answers, so stop working on them."""
        calls = list(self._calls.values())
        self._calls.clear()
        for call in calls:
            call.cancel()
        if calls:
            js.console.warn(f"[MCP relay] the relay closed; cancelled {len(calls)} call(s) in progress")

    def _set_connected(self, connected: bool) -> None:
        if connected == self.connected:
            return
        self.connected = connected
        if self._on_status_change is not None:
            self._on_status_change(connected)
        if connected:
            self._say_retry(self.retry_text())

    def _handle_frame(self, frame: Any) -> None:
        if isinstance(frame, CallFrame):
            if frame.id in self._calls:
                return  # a duplicate id: the first call answers it
            # Started eagerly: a call answered from memory (abort_task, get_task_result …) runs to its
            # answer inside this message event, without two more turns of the browser's event loop
            # (each a task of its own, ~0.5 ms here); one that waits is a task like any other.
            task = asyncio.Task(self._serve(frame), loop=asyncio.get_event_loop(), eager_start=True)
            if not task.done():
                self._calls[frame.id] = task
        elif isinstance(frame, TaskRecordFrame):
            if self.on_task_record is not None:
                try:
                    self.on_task_record(frame.record)
                except Exception as exc:
                    js.console.warn(f"[MCP relay] could not keep a task record: {exc}")
        elif isinstance(frame, CancelFrame):
            call = self._calls.get(frame.id)
            if call is not None:
                call.cancel()
        elif isinstance(frame, BadFrame):
            js.console.warn(f"[MCP relay] ignored a frame: {frame.reason}")
            if frame.id is not None:
                failure = errors.unreadable_frame("relay", frame.reason)
                self._send(ResultFrame(frame.id, failure.to_result()).to_wire())

    async def _serve(self, frame: CallFrame) -> None:
        try:
            result = await self._context.dispatch(
                frame.tool,
                frame.args,
                Channel.RELAY,
                progress=CallLink(self, frame.id),
                transfer=transfer_end(str(frame.tool), self.url, frame.transfer),
                caller=Caller.APP if frame.caller == Caller.APP else None,
            )
        except asyncio.CancelledError:
            return  # the server gave up on this call (cancel, timeout) or the socket closed
        finally:
            self._calls.pop(frame.id, None)
            self._progress.forget(frame.id)
        self._send(ResultFrame(frame.id, result).to_wire())

    def progress(self, call_id: str, message: str) -> None:
        self._send(self._progress.frame(call_id, message))

    async def ask(self, call_id: str, kind: str, message: str) -> str | None:
        """Ask call ``call_id``'s MCP client (through the server); its answer, or None when the relay
        closed. Waits until answered or cancelled: a cancel (the person at the page answered first, the
        agent's time ran out) withdraws the question."""
        if self._socket is None:
            return None
        self._ask_ids += 1
        ask_id = f"ask-{self._ask_ids}"
        waiting: asyncio.Future[str | None] = asyncio.get_event_loop().create_future()
        self._asks[ask_id] = waiting
        try:
            self._send(AskFrame(call_id, ask_id, kind, message).to_wire())
            return await waiting
        finally:
            self._asks.pop(ask_id, None)
            if not waiting.done() or waiting.cancelled():
                self._send(WithdrawFrame(call_id, ask_id).to_wire())

    def _send(self, text: str) -> None:
        """Send if connected; a closed or broken socket loses the frame, never the call."""
        socket = self._socket
        if socket is None or socket.readyState != 1:
            return
        try:
            socket.send(text)
        except Exception:
            pass


class CallLink:
    """A relayed call's progress sink (``message`` → a numbered progress frame) that can also ask the
    call's MCP client (``ask``: agent.people.CallerAsk)."""

    def __init__(self, client: McpRelayClient, call_id: str) -> None:
        self._client = client
        self._call_id = call_id

    def __call__(self, message: str) -> None:
        self._client.progress(self._call_id, message)

    async def ask(self, kind: str, message: str) -> str | None:
        return await self._client.ask(self._call_id, kind, message)
