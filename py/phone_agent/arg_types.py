"""Option value types shared by the command lines (``phone-agent`` and ``python -m phone_agent.sim``).

Each is an argparse ``type=``: it turns the text into a value or raises ``ArgumentTypeError`` with the
message argparse prints.
"""

from __future__ import annotations

import argparse


def port_number(text: str) -> int:
    """An argparse type: a TCP port (0 lets the OS choose)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port out of range: {port}")
    return port
