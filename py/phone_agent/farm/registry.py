"""Which phones a farm holds and which one a call goes to, without I/O (an MCP server's view of the farm).

Pages announce themselves on their presence subject every heartbeat; a page unheard of for its TTL has
left. ``FarmRegistry`` keeps the live phones by the page subject they announced on, and ``route`` applies
the routing rules: ``device`` names a serial or ``any`` (an idle phone, spread round the farm); omitted,
it is the one phone of a one-phone farm, and with several it is ``invalid_argument`` naming them. A phone
that is not there is ``no_device``, with the remedy to call list_devices. The clock is the caller's.

A serial belongs to the NATS user whose page claimed it first (the caller tells ``heard`` whom it is
pinned to, from the farm's key-value registry): a page of another user announcing it is kept apart as a
refused claim — listed (``state: "refused"``, and why), never routed to — so no page can take the calls
meant for another user's phone by announcing its serial.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from .failures import empty_farm, gone_device, which_device
from .frames import Presence, page_subject_for_presence, user_of_presence

ANY_DEVICE = "any"


@dataclass
class FarmPhone:
    """A phone on a page of the farm, as last announced."""

    subject: str  # the page's call subject
    presence: Presence
    seen_ms: int  # when this server last heard the page (its own clock)
    user: str = ""  # the page's NATS user (from the subject it announced itself on)
    refused: str = ""  # why its claim of the serial is refused (another user's serial); "" when it serves

    @property
    def serial(self) -> str:
        return self.presence.serial

    def expired(self, now_ms: int) -> bool:
        return now_ms - self.seen_ms > self.presence.ttl_ms

    def to_json(self) -> dict[str, Any]:
        """What list_devices answers for this phone."""
        p = self.presence
        answer: dict[str, Any] = {
            "serial": p.serial,
            "model": p.model,
            "release": p.release,
            "screen": p.screen,
            "host": p.host,
            "state": "refused" if self.refused else "busy" if p.busy else "idle",
            "since": p.since_ms,
            "user": self.user,
        }
        if self.refused:
            answer["refused"] = self.refused
        return answer


class FarmRegistry:
    """The live phones of the farm, by page subject."""

    def __init__(self) -> None:
        self._phones: dict[str, FarmPhone] = {}
        self._refused: dict[str, FarmPhone] = {}  # claims of another user's serial, by page subject
        self._turn = 0

    def heard(
        self, presence_subject: str, presence: Presence, now_ms: int, owner: str | None = None
    ) -> FarmPhone | None:
        """A page announced itself (or said it leaves). ``owner``: the user its serial is pinned to
        (None: no pin is kept); a page of another user is a refused claim. Answers the phone that no
        longer serves: its page left, or its claim is refused now."""
        subject = page_subject_for_presence(presence_subject)
        user = user_of_presence(presence_subject)
        if subject is None or user is None:
            return None
        if presence.leaving:
            self._refused.pop(subject, None)
            return self._phones.pop(subject, None)
        if owner is not None and owner != user:
            why = (
                f"the serial {presence.serial} is pinned to the pages of user {owner}; "
                f"a page of user {user} may not serve it"
            )
            self._refused[subject] = FarmPhone(subject, presence, now_ms, user, why)
            return self._phones.pop(subject, None)
        self._refused.pop(subject, None)
        self._phones[subject] = FarmPhone(subject, presence, now_ms, user)
        return None

    def refused(self, now_ms: int) -> list[FarmPhone]:
        """The live pages whose claim of a serial is refused, by serial."""
        return sorted(
            (phone for phone in self._refused.values() if not phone.expired(now_ms)),
            key=lambda phone: (phone.serial, phone.subject),
        )

    def expire(self, now_ms: int) -> list[FarmPhone]:
        """Forget pages unheard of for their TTL; answers the ones that served."""
        for phone in [phone for phone in self._refused.values() if phone.expired(now_ms)]:
            del self._refused[phone.subject]
        gone = [phone for phone in self._phones.values() if phone.expired(now_ms)]
        for phone in gone:
            del self._phones[phone.subject]
        return gone

    def phones(self, now_ms: int) -> list[FarmPhone]:
        """The live phones, by serial."""
        return sorted(
            (phone for phone in self._phones.values() if not phone.expired(now_ms)),
            key=lambda phone: (phone.serial, phone.subject),
        )

    def touch(self, subject: str, now_ms: int) -> None:
        """The page answered a call: as good as a heartbeat (a page busy serving may beat late)."""
        phone = self._phones.get(subject)
        if phone is not None and not phone.expired(now_ms):
            phone.seen_ms = now_ms

    def get(self, subject: str) -> FarmPhone | None:
        return self._phones.get(subject)

    def is_live(self, subject: str, now_ms: int) -> bool:
        phone = self._phones.get(subject)
        return phone is not None and not phone.expired(now_ms)

    def mark_busy(self, subject: str) -> None:
        """This server just gave the page an agent task: until it says otherwise, it is busy."""
        phone = self._phones.get(subject)
        if phone is not None and not phone.presence.busy:
            phone.presence = replace(phone.presence, busy=True)

    def route(self, device: str | None, now_ms: int, avoid: frozenset[str] = frozenset()) -> FarmPhone:
        """The phone a call goes to (see the module's rules); ToolError when there is none."""
        live = self.phones(now_ms)
        if device is None:
            if not live:
                raise empty_farm()
            if len(live) > 1:
                raise which_device([phone.serial for phone in live])
            return live[0]
        if device == ANY_DEVICE:
            candidates = [phone for phone in live if phone.subject not in avoid]
            if not candidates:
                raise empty_farm()
            idle = [phone for phone in candidates if not phone.presence.busy] or candidates
            self._turn += 1
            return idle[self._turn % len(idle)]
        for phone in live:
            if phone.serial == device:
                return phone
        raise gone_device(device)
