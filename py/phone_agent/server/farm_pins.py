"""Which NATS user's pages may serve each serial of the farm: the pins, kept in the farm's JetStream
key-value bucket ``phone-farm-devices`` (key: the serial as a subject token; value: ``{serial, user,
since}``), which only MCP servers may write (``farm/nats.conf``).

The first page to announce a serial pins it to its user, atomically (a key-value ``create``: of two
servers hearing two users at once, one wins and both read its pin); a page of another user announcing
it later is refused by the registry (``farm.registry``). Every server keeps the pins in memory, current
through a watcher on the bucket, so a heartbeat costs no round trip; a pin deleted from the bucket (an
operator moving a phone to another host: ``nats kv del phone-farm-devices SERIAL``) is forgotten at once
and the next page to announce the serial claims it. Without JetStream the pins live in this server's
memory only (and it says so in its log). Never logs a credential.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from typing import Any

from nats.js.errors import BucketNotFoundError, KeyWrongLastSequenceError
from nats.js.kv import KeyValue

from ..farm.frames import DEVICES_BUCKET, subject_token

log = logging.getLogger("phone_agent.farm")

PIN_TIMEOUT_S = 2.0  # a claim's round trip to the bucket; beyond it this server decides alone


class FarmPins:
    """The serials' owners: ``owner(serial, user)`` answers the user a serial is pinned to, pinning it to
    ``user`` when no one holds it."""

    def __init__(self) -> None:
        self._kv: KeyValue | None = None
        self._owners: dict[str, str] = {}  # serial token → user
        self._watching: asyncio.Task[None] | None = None

    async def start(self, js: Any) -> None:
        """Open (or create) the bucket and watch it; without JetStream, pins stay in memory."""
        try:
            try:
                self._kv = await js.key_value(DEVICES_BUCKET)
            except BucketNotFoundError:
                self._kv = await js.create_key_value(
                    bucket=DEVICES_BUCKET, history=1, description="phone-agent: serial → NATS user"
                )
            watcher = await self._kv.watchall()
        except Exception as exc:
            self._kv = None
            log.warning("the farm's device pins are kept in this server only (JetStream: %s)", exc)
            return
        self._watching = asyncio.create_task(self._watch(watcher))

    async def close(self) -> None:
        if self._watching is not None:
            self._watching.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._watching

    async def _watch(self, watcher: Any) -> None:
        try:
            async for entry in watcher:
                if entry is None:  # the end of what the bucket held when the watch began
                    continue
                if entry.operation in ("DEL", "PURGE"):
                    self._owners.pop(entry.key, None)
                    continue
                user = _user_of(entry.value)
                if user:
                    self._owners[entry.key] = user
        finally:
            with contextlib.suppress(Exception):
                await watcher.stop()

    def known(self, serial: str) -> str | None:
        """The user ``serial`` is pinned to, as far as this server knows (no round trip)."""
        return self._owners.get(subject_token(serial))

    def known_token(self, serial_token: str) -> str | None:
        """``known`` for a serial already written as a subject token (a task record's key part)."""
        return self._owners.get(serial_token)

    async def owner(self, serial: str, user: str) -> str:
        """The user ``serial`` is pinned to; pinned to ``user`` now if no one held it."""
        key = subject_token(serial)
        known = self._owners.get(key)
        if known is not None:
            return known
        if self._kv is not None:
            record = json.dumps({"serial": serial, "user": user, "since": int(time.time() * 1000)})
            try:
                async with asyncio.timeout(PIN_TIMEOUT_S):
                    try:
                        await self._kv.create(key, record.encode())
                    except KeyWrongLastSequenceError:  # pinned meanwhile (by another server, or before)
                        held = _user_of((await self._kv.get(key)).value)
                        if held:
                            self._owners[key] = held
                            return held
            except Exception as exc:
                log.warning("could not keep the pin of %s in the farm's bucket (%s): kept here", serial, exc)
        self._owners.setdefault(key, user)
        if self._owners[key] == user:
            log.info("serial %s is pinned to the pages of user %s", serial, user)
        return self._owners[key]


def _user_of(value: bytes | None) -> str:
    try:
        record = json.loads(value or b"")
    except ValueError:
        return ""
    user = record.get("user") if isinstance(record, dict) else None
    return user if isinstance(user, str) else ""
