"""Where the server's logs go: all to stderr, one ``phone-agent:`` line each (a background server's
stderr is its log file).

uvicorn's default log config sends access logs to stdout, so it is replaced, not tuned.
"""

from __future__ import annotations

import logging
import sys


class _PhoneAgentFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.exc_info:
            message += "\n" + self.formatException(record.exc_info)
        prefix = "phone-agent:" if record.name.startswith("phone_agent") else f"phone-agent [{record.name}]:"
        if record.levelno >= logging.WARNING:
            prefix += f" {record.levelname.lower()}:"
        return f"{prefix} {message}"


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
