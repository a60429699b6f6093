"""Pairing a page with the relay: only a page that shows the server's pairing secret becomes the page.

The secret (kept in the config directory, see ``credentials``) is handed, in ``/api/config``, only to the
user's browser: the one that opened the page's link (``phone-agent url``: the page's URL with the page
token of the config directory, the way Jupyter does it) and traded its token for a cookie (``PageKey``:
HttpOnly, SameSite=Strict, derived from the token, so it outlives reloads and restarts until the token is
rotated).
Another local process reads neither the token file nor that cookie, and any header it forges (Origin,
Sec-Fetch-Site) is no cookie. Other sites cannot read the answer anyway (no CORS,
``Cross-Origin-Resource-Policy: same-origin``).

A page without the cookie — opened without the link, or from another origin allowed with
``--allow-origin`` — pairs once by a six-digit code the server's console shows; the server answers the
code with the secret, which that page remembers. Every page that pairs is answered ``{"type": "paired"}``
first (the page shows itself connected then).

``PairingGate`` is pure: it judges the page's first frame (read by ``relay.frames``) and says whether the
page is in, and what to answer. A code lives ``CODE_TTL_S`` and survives ``MAX_CODE_ATTEMPTS`` wrong
guesses; then a new one is shown, and no code is taken for ``LOCKOUT_S`` (a script cannot guess its way
through a million codes). Neither the secret nor a code is ever logged (a code is shown on the
console on purpose).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..relay.frames import HelloFrame, PairedFrame, PairFrame, parse_first_frame
from .credentials import same_secret

CODE_TTL_S = 600.0
MAX_CODE_ATTEMPTS = 5
LOCKOUT_S = 60.0
HELLO_TIMEOUT_S = 10.0
# Where the page trades its link's token for the cookie (POST, JSON ``{"token": …}``).
PAGE_KEY_PATH = "/api/page-key"
PAGE_COOKIE_PREFIX = "phone-agent-page-"
# Chrome keeps a cookie at most 400 days.
PAGE_COOKIE_MAX_AGE_S = 400 * 24 * 3600
_COOKIE_PURPOSE = b"phone-agent page cookie v1"


@dataclass(frozen=True)
class Paired:
    """The page is in; ``reply`` is the frame to send it first (with the secret, after a code)."""

    reply: str = PairedFrame().to_wire()
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
        self._locked_until = 0.0

    def __repr__(self) -> str:
        return "PairingGate(<secret hidden>)"

    @property
    def secret(self) -> str:
        return self._secret

    def locked_for(self) -> float:
        """Seconds until a code is taken again after too many wrong ones (0: now)."""
        return max(0.0, self._locked_until - self._clock())

    def current_code(self) -> tuple[str, bool]:
        """The code a page may pair with now, and whether it is a new one (to show on the console)."""
        if self._code is None or self._clock() >= self._code_expires or self._attempts >= MAX_CODE_ATTEMPTS:
            self._code = f"{secrets.randbelow(1_000_000):06d}"
            self._code_expires = self._clock() + CODE_TTL_S
            self._attempts = 0
            return self._code, True
        return self._code, False

    def check(self, first_frame: str | bytes | None, own_origin: bool) -> Paired | Refused:
        """Judge the page's first frame (None: it sent none in time).

        A page of this server's own origin that shows a secret (from ``/api/config``) and is refused
        fetches it again; one that shows none has no cookie (it was opened without the link) and, like
        a page of another origin, may pair by the code on the console."""
        frame = parse_first_frame(first_frame)
        if isinstance(frame, HelloFrame) and same_secret(frame.secret, self._secret):
            return Paired()
        if isinstance(frame, PairFrame):
            if self.locked_for() > 0:
                return Refused(f"too many wrong pairing codes: try again in {self.locked_for():.0f} s")
            code, _ = self.current_code()
            given = frame.code
            if given is not None and same_secret(given.replace("-", "").replace(" ", ""), code):
                self._code = None  # one code, one page
                return Paired(PairedFrame(self._secret).to_wire(), by_code=True)
            self._attempts += 1
            if self._attempts >= MAX_CODE_ATTEMPTS:
                self._locked_until = self._clock() + LOCKOUT_S
                return Refused(f"too many wrong pairing codes: try again in {LOCKOUT_S:.0f} s")
            return Refused("wrong pairing code")
        if own_origin and not (isinstance(frame, HelloFrame) and not frame.secret):
            return Refused("pairing required: reload the page")
        if self.locked_for() > 0:
            return Refused(f"too many wrong pairing codes: try again in {self.locked_for():.0f} s")
        return Refused(
            "pairing required: open the link `phone-agent url` prints, or type the code shown by phone-agent",
            self._new_code_to_show(),
        )

    def _new_code_to_show(self) -> str | None:
        code, fresh = self.current_code()
        return code if fresh else None


class PageKey:
    """The user's browser, told apart from any other local process: it opened the page's link (the
    page token in ``?token=``) and traded the token for a cookie derived from it. The cookie's name
    carries the port (browsers share cookies between the ports of one host)."""

    def __init__(self, token: str, port: int) -> None:
        self._token = token
        self.cookie_name = f"{PAGE_COOKIE_PREFIX}{port}"
        self._cookie = hmac.new(token.encode(), _COOKIE_PURPOSE, hashlib.sha256).hexdigest()

    def __repr__(self) -> str:
        return f"PageKey({self.cookie_name}, <token hidden>)"

    def token_ok(self, given: object) -> bool:
        """Whether ``given`` is the link's token (constant time)."""
        return isinstance(given, str) and same_secret(given, self._token)

    def browser_ok(self, cookies: Mapping[str, str]) -> bool:
        """Whether a request's cookies carry this server's page cookie."""
        return same_secret(cookies.get(self.cookie_name), self._cookie)

    @property
    def cookie_value(self) -> str:
        return self._cookie
