"""Where the server's logs go: all to stderr, one ``phone-agent:`` line each (a background server's
stderr is its log file).

uvicorn's default log config sends access logs to stdout, so it is replaced, not tuned. No line shows the
secret of a URL's credentials (``?farm=ws://USER:PASSWORD@…`` in a page's URL, logged by ``-v``'s access
log): every line goes through ``redact_credentials``.
"""

from __future__ import annotations

import logging
import re
import sys

# scheme://USERINFO@ (or its percent-encoded form, as a URL in a query string may be): the userinfo
# stops at the first character a URL's userinfo cannot hold unencoded.
_URL_USERINFO = re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://|%3A%2F%2F)((?:(?!%40|%2F)[^\s/?#&@])+)(@|%40)")
_USER_PART = re.compile(r"(?i)^(.*?)(:|%3A)")


def redact_credentials(text: str) -> str:
    """``text`` with the password (or token) of every URL's credentials shown as ``***``:
    ``ws://phone1:***@HOST``, ``nats://***@HOST`` (a token), plain or percent-encoded."""

    def hide(match: re.Match[str]) -> str:
        user = _USER_PART.match(match.group(2))
        shown = f"{user.group(1)}{user.group(2)}***" if user else "***"
        return f"{match.group(1)}{shown}{match.group(3)}"

    return _URL_USERINFO.sub(hide, text)


class _PhoneAgentFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info:
            message += "\n" + self.formatException(record.exc_info)
        prefix = "phone-agent:" if record.name.startswith("phone_agent") else f"phone-agent [{record.name}]:"
        if record.levelno >= logging.WARNING:
            prefix += f" {record.levelname.lower()}:"
        return f"{prefix} {redact_credentials(message)}"


def configure_logging(verbose: bool = False) -> None:
    """All logs to stderr; our info lines always, the libraries' only when ``verbose``."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_PhoneAgentFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if verbose else logging.WARNING)
    logging.getLogger("phone_agent").setLevel(logging.DEBUG if verbose else logging.INFO)
    for name in ("uvicorn", "uvicorn.error", "uvicorn.access"):
        library = logging.getLogger(name)
        library.handlers[:] = []
        library.propagate = True
        library.setLevel(logging.INFO if verbose else logging.WARNING)
