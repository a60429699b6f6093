"""A page's side of the phone farm, without I/O: what it announces, which calls it serves, what it records.

``FarmPageService`` is handed each message the page receives on its own subjects and a ``publish``
function; it opens each call's envelope (``farm.frames``), runs the relay frame inside through the shared
``ToolDispatcher`` (the dispatch both channels use), answers with the relay's frames (``relay.frames``) on
each call's reply subject, refuses calls meant for another phone, and publishes its
task records to the farm's key-value bucket. While a call's agent waits for a person it asks the call's
MCP client too, as the relay's page does (``ask`` on the reply subject, the server's ``answer`` on the
page's subject, ``withdraw`` when the person at the page answered first). The browser adapter
(``browser/farm_client``) only moves strings between it and the NATS client; tests drive it with a
Python client.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import time
from collections.abc import Callable
from typing import Any

from .. import errors
from ..relay.frames import (
    AnswerFrame,
    AskFrame,
    BadFrame,
    CallFrame,
    CancelFrame,
    ProgressSequence,
    ResultFrame,
    WithdrawFrame,
    parse_server_frame,
)
from ..tools.dispatch import CallRecord, ToolDispatcher
from ..tools.spec import Channel
from . import failures
from .frames import (
    DEFAULT_PRESENCE_TTL_MS,
    Presence,
    open_farm_envelope,
    page_subject,
    presence_from_device_info,
    presence_subject,
    task_subject,
)

# Sends one message: (subject, body). Replies are sent to the reply subject like any other.
Publish = Callable[[str, str], None]
# Task records are re-published at most this often while a task reports progress.
TASK_RECORD_INTERVAL_MS = 500


def _now_ms() -> int:
    return int(time.time() * 1000)


class FarmPageService:
    """One page's phone, served on the farm."""

    def __init__(
        self,
        context: ToolDispatcher,
        user: str,
        publish: Publish,
        host: str = "",
        ttl_ms: int = DEFAULT_PRESENCE_TTL_MS,
        page_id: str | None = None,
        clock_ms: Callable[[], int] = _now_ms,
    ) -> None:
        self.context = context
        self.user = user
        self.page_id = page_id or secrets.token_hex(6)
        self.subject = page_subject(user, self.page_id)
        self.presence_subject = presence_subject(user, self.page_id)
        self.host = host
        self.ttl_ms = ttl_ms
        self._publish = publish
        self._clock_ms = clock_ms
        self._calls: dict[str, asyncio.Task[None]] = {}
        self._progress = ProgressSequence()
        self._info_for: Any = None
        self._info: dict[str, Any] = {}
        self._state: tuple[str, bool] | None = None
        self._since_ms = 0
        self._published_tasks: dict[str, str] = {}
        # The questions asked of calls' MCP clients, waiting for the server's answer, by ask id.
        self._asks: dict[str, asyncio.Future[str | None]] = {}
        self._ask_ids = 0
        self._last_task_publish_ms = 0
        context.add_call_listener(self._call_finished)

    # -- presence -------------------------------------------------------------------------------

    @property
    def serial(self) -> str | None:
        serial = self._info.get("serial") if self._info_for is self.context.device else None
        return str(serial) if serial else None

    async def presence(self) -> Presence | None:
        """What the page announces now; None while it holds no phone. Asks the phone once per connection."""
        device = self.context.device
        if device is None:
            self._info_for, self._info = None, {}
            return None
        if self._info_for is not device:
            info = await self.context.device_info()
            if self.context.device is not device or not info.get("connected"):
                return None
            self._info_for, self._info = device, info
        busy = self.context.is_running()
        state = (str(self._info.get("serial")), busy)
        if state != self._state:
            self._state, self._since_ms = state, self._clock_ms()
        return presence_from_device_info(self._info, self.host, busy, self._since_ms, self.ttl_ms)

    async def announce(self) -> bool:
        """Publish the page's presence; whether it had a phone to announce."""
        presence = await self.presence()
        if presence is None:
            return False
        self._publish(self.presence_subject, presence.message())
        return True

    def leave(self) -> None:
        """Say the page leaves (a closing page); the TTL covers a page that cannot say it."""
        serial = self.serial
        if serial:
            leaving = Presence(serial=serial, leaving=True)
            self._publish(self.presence_subject, leaving.message())

    def close(self) -> None:
        """The page left the farm (its Settings): stop serving. Calls in flight are cancelled; their
        callers were told ``no_device`` when the page said it leaves."""
        self.context.remove_call_listener(self._call_finished)
        for call in list(self._calls.values()):
            call.cancel()

    # -- calls ----------------------------------------------------------------------------------

    def receive(self, subject: str, reply: str | None, text: str) -> None:
        """One message on the page's call subject."""
        if subject != self.subject:
            return  # not this page's: never served
        envelope = open_farm_envelope(text)
        frame = parse_server_frame(envelope.frame)
        if isinstance(frame, AnswerFrame):
            asked = self._asks.get(frame.id)
            if asked is not None and not asked.done():
                asked.set_result(frame.answer)
            return
        if isinstance(frame, CancelFrame):
            call = self._calls.get(frame.id)
            if call is not None:
                call.cancel()
            return
        if not reply:
            return  # nowhere to answer
        if isinstance(frame, BadFrame):
            if frame.id is not None:
                failure = errors.unreadable_frame("farm", frame.reason)
                self._publish_reply(reply, ResultFrame(frame.id, failure.to_result()).to_wire())
            return
        assert isinstance(frame, CallFrame)
        wanted = envelope.device
        if wanted is None or wanted != self.serial:
            refusal = failures.wrong_device(self.serial, wanted or "").to_result()
            self._publish_reply(reply, ResultFrame(frame.id, refusal).to_wire())
            return
        if frame.id in self._calls:
            return
        self._calls[frame.id] = asyncio.ensure_future(self._serve(frame, reply))

    async def _serve(self, frame: CallFrame, reply: str) -> None:
        link = _CallLink(self, reply, frame.id)
        try:
            result = await self.context.dispatch(frame.tool, frame.args, Channel.FARM, progress=link)
        except asyncio.CancelledError:
            self.publish_tasks()
            return  # the server gave up on the call: nobody waits for an answer
        except Exception as exc:  # pragma: no cover - dispatch answers failures as results
            result = errors.internal(frame.tool, exc).to_result()
        finally:
            self._calls.pop(frame.id, None)
            self._progress.forget(frame.id)
        self.publish_tasks()  # the record before the answer: a caller may ask for it at once
        if not self._publish_reply(reply, ResultFrame(frame.id, result).to_wire()):
            # Most likely larger than the broker's max_payload: say so rather than leave the caller waiting.
            failure = failures.answer_too_large(frame.tool)
            self._publish_reply(reply, ResultFrame(frame.id, failure.to_result()).to_wire())

    def progress(self, reply: str, call_id: str, message: str) -> None:
        self._publish_reply(reply, self._progress.frame(call_id, message))
        self.publish_tasks(throttle=True)

    async def ask(self, reply: str, call_id: str, kind: str, message: str) -> str | None:
        """Ask call ``call_id``'s client through the server; its answer. Waits until answered or
        cancelled: a cancel withdraws the question."""
        self._ask_ids += 1
        ask_id = f"ask-{self._ask_ids}"
        waiting: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self._asks[ask_id] = waiting
        try:
            if not self._publish_reply(reply, AskFrame(call_id, ask_id, kind, message).to_wire()):
                return None
            return await waiting
        finally:
            self._asks.pop(ask_id, None)
            if not waiting.done() or waiting.cancelled():
                self._publish_reply(reply, WithdrawFrame(call_id, ask_id).to_wire())

    def _publish_reply(self, reply: str, text: str) -> bool:
        try:
            self._publish(reply, text)
        except Exception:  # a lost connection loses the frame, never the page
            return False
        return True

    # -- task records ---------------------------------------------------------------------------

    def _call_finished(self, record: CallRecord) -> None:
        if record.tool in ("run_agent_task", "abort_task"):
            self.publish_tasks()

    def publish_tasks(self, throttle: bool = False) -> int:
        """Publish every task record that changed since it was last published; how many were."""
        serial = self.serial
        now = self._clock_ms()
        if serial is None or (throttle and now - self._last_task_publish_ms < TASK_RECORD_INTERVAL_MS):
            return 0
        self._last_task_publish_ms = now
        sent = 0
        for task in self.context.get_all_tasks():
            data = task.to_json(include_steps=True)
            text = json.dumps(data, ensure_ascii=False, sort_keys=True)
            if self._published_tasks.get(task.id) == text:
                continue
            record = {"serial": serial, "page": self.page_id, "updatedAt": now, "task": data}
            try:
                subject = task_subject(self.user, serial, task.id)
                self._publish(subject, json.dumps(record, ensure_ascii=False))
            except Exception:
                continue
            self._published_tasks[task.id] = text
            sent += 1
        return sent


class _CallLink:
    """A farm call's progress sink, which can also ask the call's MCP client (agent.people.CallerAsk)."""

    def __init__(self, service: FarmPageService, reply: str, call_id: str) -> None:
        self._service, self._reply, self._call_id = service, reply, call_id

    def __call__(self, message: str) -> None:
        self._service.progress(self._reply, self._call_id, message)

    async def ask(self, kind: str, message: str) -> str | None:
        return await self._service.ask(self._reply, self._call_id, kind, message)
