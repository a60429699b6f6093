"""Pairing a page with the relay: only a page that shows the server's pairing secret becomes the page.

The secret (kept in the config directory, see ``credentials``) is handed to the pages this server serves
itself, in ``/api/config``; other sites cannot read that answer (no CORS, ``Cross-Origin-Resource-Policy:
same-origin``). A page from another origin allowed with ``--allow-origin`` pairs once by a six-digit code
the server's console shows; the server answers the code with the secret, which that page remembers.
Every page that pairs is answered ``{"type": "paired"}`` first (the page shows itself connected then).

``PairingGate`` is pure: it judges the page's first frame (read by ``relay.frames``) and says whether the
page is in, and what to answer. A code lives ``CODE_TTL_S`` and survives ``MAX_CODE_ATTEMPTS`` wrong
guesses; then a new one is shown. Neither the secret nor a code is ever logged (a code is shown on the
console on purpose).
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from ..relay.frames import HelloFrame, PairFrame, paired_frame, parse_first_frame
from .credentials import same_secret

CODE_TTL_S = 600.0
MAX_CODE_ATTEMPTS = 5
HELLO_TIMEOUT_S = 10.0


@dataclass(frozen=True)
class Paired:
    """The page is in; ``reply`` is the frame to send it first (with the secret, after a code)."""

    reply: str = paired_frame()
    by_code: bool = False


@dataclass(frozen=True)
class Refused:
    """The page is not paired; ``reason`` goes in the close frame, ``show_code`` asks to show a code."""

    reason: str
    show_code: str | None = None


class PairingGate:
    def __init__(self, secret: str, clock: Callable[[], float] = time.monotonic) -> None:
        self._secret = secret
        self._clock = clock
        self._code: str | None = None
        self._code_expires = 0.0
        self._attempts = 0

    def __repr__(self) -> str:
        return "PairingGate(<secret hidden>)"

    @property
    def secret(self) -> str:
        return self._secret

    def current_code(self) -> tuple[str, bool]:
        """The code a page may pair with now, and whether it is a new one (to show on the console)."""
        if self._code is None or self._clock() >= self._code_expires or self._attempts >= MAX_CODE_ATTEMPTS:
            self._code = f"{secrets.randbelow(1_000_000):06d}"
            self._code_expires = self._clock() + CODE_TTL_S
            self._attempts = 0
            return self._code, True
        return self._code, False

    def check(self, first_frame: str | bytes | None, own_origin: bool) -> Paired | Refused:
        """Judge the page's first frame (None: it sent none in time)."""
        frame = parse_first_frame(first_frame)
        if isinstance(frame, HelloFrame) and same_secret(frame.secret, self._secret):
            return Paired()
        if isinstance(frame, PairFrame) and not own_origin:
            code, _ = self.current_code()
            given = frame.code
            if given is not None and same_secret(given.replace("-", "").replace(" ", ""), code):
                self._code = None  # one code, one page
                return Paired(paired_frame(self._secret), by_code=True)
            self._attempts += 1
            return Refused("wrong pairing code", self._new_code_to_show())
        if own_origin:
            return Refused("pairing required: reload the page")
        return Refused("pairing required: type the code shown by phone-agent", self._new_code_to_show())

    def _new_code_to_show(self) -> str | None:
        code, fresh = self.current_code()
        return code if fresh else None
