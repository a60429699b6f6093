"""The farm's router on asyncio and nats-py: an MCP server's way to every phone of a NATS phone farm.

``FarmRouter`` listens to the pages' presence (``FarmRegistry`` keeps who is live), and sends each tool call
to the page ``route`` picks. Each page gets its own ``Relay`` — the local relay's engine, unchanged: time
limits, progress in order, cancel frames — whose ``PageLink`` publishes the relay's frames on the page's
subject, each as it is in an envelope that names the phone (``farm.frames.farm_envelope``), with this
server's reply subject for that page; the page's answers are the relay's frames, fed to that relay. A page
that leaves (its heartbeat lapses or it says so) is detached like a closed WebSocket, so its pending calls
end at once, answered ``no_device``. Task records are read from the farm's JetStream key-value bucket, which
the pages write — only those of the user the serial is pinned to. A serial is pinned to the NATS user
whose page claimed it first (``farm_pins``): another user's page announcing it is refused (logged, and
listed by list_devices as ``refused``), never given a call.

Credentials come in the farm URL (or, as an nkey seed, from ``--farm-nkey-seed``'s file) and go to nats-py
as arguments; they are never logged (the URL is shown with ``***``, the seed never).
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nats
from nats.aio.client import Client as NatsClient
from nats.aio.msg import Msg
from nats.js.errors import BucketNotFoundError
from nats.js.kv import KeyValue

from ..errors import ErrorCode, ToolError, bad_argument
from ..farm.failures import bad_device_argument, gone_device
from ..farm.frames import (
    DISCOVER_SUBJECT,
    PRESENCE_PREFIX,
    TASKS_BUCKET,
    FarmUrl,
    farm_envelope,
    page_subject_for_presence,
    parse_presence,
    subject_token,
    user_of_presence,
)
from ..farm.registry import ANY_DEVICE, FarmPhone, FarmRegistry
from ..relay.core import RelayCore
from ..tasks import TASK_CREATED_KEY
from ..tools.catalog import get_tool
from ..tools.results import json_result
from ..tools.spec import validate_arguments
from .farm_pins import FarmPins
from .relay import ProgressHandler, Relay

log = logging.getLogger("phone_agent.farm")

CONNECT_TIMEOUT_S = 5.0
EXPIRY_TICK_S = 0.25
# Task records are kept a week; the bucket keeps the last version of each.
TASK_RECORD_MAX_AGE_S = 7 * 24 * 3600
KV_TIMEOUT_S = 5.0
FIRST_CONNECT_S = 10.0
# After start, how long a call with no phone known waits for the pages to answer the discovery.
DISCOVERY_WAIT_S = 1.5


def _now_ms() -> int:
    return int(time.monotonic() * 1000)


class FarmConnectError(Exception):
    """The broker could not be reached or refused the credentials; the message names no secret."""


@dataclass
class _NatsPageLink:
    """A page's end of a per-page relay: publishes the relay's frames on the page's subject, each in an
    envelope naming the phone."""

    nc: NatsClient
    subject: str
    reply: str
    serial: str

    async def send_text(self, text: str) -> None:
        envelope = farm_envelope(self.serial, text)  # the frame as the relay wrote it, never decoded
        await self.nc.publish(self.subject, envelope.encode(), reply=self.reply)

    async def close(self, code: int, reason: str) -> None:
        return None


@dataclass
class _PageRoute:
    relay: Relay
    token: int
    serial: str


class FarmRouter:
    """An MCP server's view of the farm: the live phones and a call to any of them."""

    def __init__(
        self,
        url: FarmUrl,
        timeout_overrides: Mapping[str, int] | None = None,
        clock_ms: Callable[[], int] = _now_ms,
        nkey_seed: Path | None = None,
    ) -> None:
        self.url = url
        # A file holding the user's nkey seed (``--farm-nkey-seed``): nats-py reads it and signs the
        # broker's nonce with it; its content never passes through this module.
        self.nkey_seed = nkey_seed
        self.registry = FarmRegistry()
        self.pins = FarmPins()
        self._refusals_logged: set[tuple[str, str]] = set()  # (page subject, serial)
        self._timeouts = dict(timeout_overrides or {})
        self._clock_ms = clock_ms
        self._nc: NatsClient | None = None
        self._kv: KeyValue | None = None
        self._inbox = f"_INBOX.farm-{secrets.token_hex(8)}"
        self._routes: dict[str, _PageRoute] = {}  # by the page's call subject
        self._by_reply: dict[str, str] = {}  # reply subject → call subject
        self._next_reply = 0
        self._ticker: asyncio.Task[None] | None = None
        self._started_ms = 0

    # -- life -----------------------------------------------------------------------------------

    async def start(self) -> None:
        """Connect, listen to the farm and ask its pages to announce themselves."""

        refused: list[str] = []

        async def on_error(exc: Exception) -> None:
            if self._nc is None and "authorization" in str(exc).lower():
                refused.append("the broker refused the credentials")
                connecting.cancel()  # nats-py would retry forever; wrong credentials stay wrong
            else:
                log.warning("farm broker: %s", exc)

        connecting = asyncio.ensure_future(
            nats.connect(
                self.url.server,
                user=self.url.user,
                password=self.url.password,
                token=self.url.token,
                nkeys_seed=str(self.nkey_seed) if self.nkey_seed is not None else None,
                name="phone-agent mcp",
                connect_timeout=CONNECT_TIMEOUT_S,
                allow_reconnect=True,
                max_reconnect_attempts=-1,
                reconnect_time_wait=1,
                error_cb=on_error,
            )
        )
        try:
            self._nc = await asyncio.wait_for(connecting, FIRST_CONNECT_S)
        except (asyncio.CancelledError, TimeoutError, Exception) as exc:
            reason = refused[0] if refused else _reason(exc)
            if isinstance(exc, TimeoutError) and not refused:
                reason = f"no answer within {FIRST_CONNECT_S:.0f}s"
            raise FarmConnectError(f"cannot join the farm at {self.url.shown}: {reason}") from None
        nc = self._nc
        await nc.subscribe(f"{PRESENCE_PREFIX}.>", cb=self._on_presence)
        await nc.subscribe(f"{self._inbox}.>", cb=self._on_reply)
        js = nc.jetstream(timeout=KV_TIMEOUT_S)
        try:
            self._kv = await js.key_value(TASKS_BUCKET)
        except BucketNotFoundError:
            self._kv = await js.create_key_value(
                bucket=TASKS_BUCKET, history=1, ttl=TASK_RECORD_MAX_AGE_S, description="phone-agent tasks"
            )
        except Exception as exc:
            log.warning("the farm's task records are unavailable (JetStream): %s", exc)
        await self.pins.start(js)
        await nc.publish(DISCOVER_SUBJECT, b"")
        await nc.flush()
        self._started_ms = self._clock_ms()
        self._ticker = asyncio.create_task(self._expire_loop())
        log.info("joined the farm at %s", self.url.shown)

    async def close(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
        await self.pins.close()
        for route in list(self._routes.values()):
            await route.relay.close()
        self._routes.clear()
        if self._nc is not None:
            try:
                await asyncio.wait_for(self._nc.close(), 2)
            except Exception as exc:
                log.debug("closing the farm connection: %s", exc)

    # -- presence -------------------------------------------------------------------------------

    async def _on_presence(self, msg: Msg) -> None:
        presence = parse_presence(msg.data)
        user = user_of_presence(msg.subject)
        if presence is None or user is None:
            return
        owner = None if presence.leaving else await self.pins.owner(presence.serial, user)
        left = self.registry.heard(msg.subject, presence, self._clock_ms(), owner)
        if left is not None:
            self._page_left(left, "said it leaves" if presence.leaving else "claims another user's serial")
        if owner is not None and owner != user:
            self._refused(msg.subject, presence.serial, user, owner)
            return
        phone = self.registry.get(page_subject_for_presence(msg.subject) or "")
        if phone is None:
            return
        route = self._routes.get(phone.subject)
        if route is not None and route.serial == phone.serial:
            return
        if route is not None:  # the page now holds another phone: calls for the old one cannot be answered
            self._page_left(FarmPhone(phone.subject, presence, 0), "changed phones")
        relay = Relay(RelayCore(timeout_overrides=self._timeouts), self_check_delay_s=0)
        reply = f"{self._inbox}.{self._next_reply}"
        self._next_reply += 1
        link = _NatsPageLink(self._nc, phone.subject, reply, phone.serial)  # type: ignore[arg-type]
        token = await relay.page_connected(link, f"the page of phone {phone.serial}")
        self._routes[phone.subject] = _PageRoute(relay, token, phone.serial)
        self._by_reply[reply] = phone.subject

    def _refused(self, presence_subject: str, serial: str, user: str, owner: str) -> None:
        """Say once per page that its claim of ``serial`` is refused (it stays listed as refused)."""
        if (presence_subject, serial) in self._refusals_logged:
            return
        self._refusals_logged.add((presence_subject, serial))
        page = presence_subject.rsplit(".", 1)[-1]
        log.warning(
            "refused: a page of user %s (page %s) announces the phone %s, which is pinned to the pages of "
            "user %s; its calls stay with user %s's page",
            user,
            page,
            serial,
            owner,
            owner,
        )

    async def _on_reply(self, msg: Msg) -> None:
        subject = self._by_reply.get(msg.subject)
        route = self._routes.get(subject) if subject is not None else None
        if route is not None and subject is not None:
            self.registry.touch(subject, self._clock_ms())
            route.relay.page_frame(route.token, msg.data)

    async def _expire_loop(self) -> None:
        while True:
            await asyncio.sleep(EXPIRY_TICK_S)
            for phone in self.registry.expire(self._clock_ms()):
                self._page_left(phone, "stopped answering")

    def _page_left(self, phone: FarmPhone, why: str) -> None:
        route = self._routes.pop(phone.subject, None)
        if route is None:
            return
        for reply, subject in list(self._by_reply.items()):
            if subject == phone.subject:
                del self._by_reply[reply]
        log.info("phone %s left the farm (its page %s)", route.serial, why)
        route.relay.page_disconnected(route.token)

    # -- calls ----------------------------------------------------------------------------------

    async def _wait_for_discovery(self) -> None:
        """Right after start, give the pages their moment to answer the discovery."""
        remaining = DISCOVERY_WAIT_S - (self._clock_ms() - self._started_ms) / 1000
        while remaining > 0 and not self.registry.phones(self._clock_ms()):
            await asyncio.sleep(0.05)
            remaining -= 0.05

    def list_devices(self) -> dict[str, Any]:
        now = self._clock_ms()
        phones = self.registry.phones(now) + self.registry.refused(now)
        phones.sort(key=lambda phone: (phone.serial, bool(phone.refused), phone.subject))
        return json_result({"devices": [phone.to_json() for phone in phones]})

    async def call(
        self, tool: str, args: dict[str, Any], on_progress: ProgressHandler | None = None
    ) -> dict[str, Any]:
        """One tool call routed by its ``device`` argument; the result in wire form, never raised."""
        args = dict(args or {})
        device = args.pop("device", None)
        if device is not None and (not isinstance(device, str) or not device):
            return bad_device_argument().to_result()
        await self._wait_for_discovery()
        if tool == "list_devices":
            extra = sorted(args) + (["device"] if device is not None else [])
            if extra:  # it takes no argument, as its schema says
                problem = "is not a parameter of this tool (it takes none)"
                return bad_argument(tool, extra[0], problem, "none").to_result()
            return self.list_devices()
        try:  # a bad call is answered before any phone is chosen (the page would refuse it anyway)
            validate_arguments(get_tool(tool), args)
        except ToolError as exc:
            return exc.to_result()
        if tool in ("get_task_result", "get_latest_task") and self._kv is not None:
            try:
                answer = await self._task_record(tool, args, device)
            except ToolError as exc:
                return exc.to_result()
            if answer is not None:
                return answer
        tried: set[str] = set()
        while True:
            try:
                phone = self.registry.route(device, self._clock_ms(), frozenset(tried))
            except ToolError as exc:
                return exc.to_result()
            route = self._routes.get(phone.subject)
            if route is None:
                return gone_device(phone.serial).to_result()
            if tool == "run_agent_task":
                self.registry.mark_busy(phone.subject)
            result = await route.relay.call(tool, args, on_progress)
            code = _error_code(result)
            if code == ErrorCode.BROWSER_NOT_CONNECTED:
                return gone_device(phone.serial).to_result()
            if device == ANY_DEVICE and tool == "run_agent_task" and code == ErrorCode.AGENT_BUSY:
                tried.add(phone.subject)  # another server gave it a task first: try the next idle one
                continue
            return result

    # -- task records ---------------------------------------------------------------------------

    async def _records(self, pattern: str) -> list[dict[str, Any]]:
        """The task records whose keys match ``pattern`` (NATS wildcards), read by one watcher."""
        assert self._kv is not None
        watcher = await self._kv.watch(pattern, ignore_deletes=True)
        records = []
        try:
            async with asyncio.timeout(KV_TIMEOUT_S):
                async for entry in watcher:
                    if entry is None:  # the end of what the bucket holds now
                        break
                    record = self._record_of(entry.key, entry.value)
                    if record is not None:
                        records.append(record)
                    if entry.delta == 0:
                        break
        finally:
            await watcher.stop()
        return records

    def _record_of(self, key: str, value: bytes | None) -> dict[str, Any] | None:
        """A task record as stored under ``key`` (``USER.SERIAL.TASK``); None when it is no record, or
        was written by a user the serial is not pinned to (a page cannot vouch for a phone it does not
        hold)."""
        user, serial = [*key.split("."), "", ""][:2]
        owner = self.pins.known_token(serial)
        if owner is not None and owner != user:
            return None
        try:
            record = json.loads(value or b"")
        except ValueError:
            return None
        return record if isinstance(record, dict) and isinstance(record.get("task"), dict) else None

    async def _task_record(
        self, tool: str, args: dict[str, Any], device: str | None
    ) -> dict[str, Any] | None:
        """get_task_result / get_latest_task from the bucket; None to ask the page instead."""
        live = self.registry.phones(self._clock_ms())
        if tool == "get_task_result":
            task_id = args.get("taskId")
            if not isinstance(task_id, str) or not task_id:
                return None  # the page's validation answers it
            serial = "*" if device in (None, ANY_DEVICE) else subject_token(device)
            records = await self._records(f"*.{serial}.{subject_token(task_id)}")
            if not records:
                return None
            task = dict(records[0]["task"])
            if args.get("includeSteps") is False:
                task.pop("steps", None)
            return json_result(task)
        if args:
            return None
        if device in (None, ANY_DEVICE):
            if len(live) > 1 and device is None:
                self.registry.route(None, self._clock_ms())  # raises: name the phones
            serial = subject_token(live[0].serial) if len(live) == 1 else "*"
        else:
            serial = subject_token(device)
        records = await self._records(f"*.{serial}.*")
        if not records:
            return None
        latest = max(records, key=lambda r: (r["task"].get(TASK_CREATED_KEY) or 0, r.get("updatedAt") or 0))
        return json_result(latest["task"])



def _error_code(result: dict[str, Any]) -> str | None:
    if not result.get("isError"):
        return None
    structured = result.get("structuredContent")
    return structured.get("code") if isinstance(structured, dict) else None


def _reason(exc: BaseException) -> str:
    """Why a connection failed, in words that carry no credential."""
    text = str(exc) or type(exc).__name__
    if "authorization" in text.lower():
        return "the broker refused the credentials"
    return f"{type(exc).__name__}: {text}"
