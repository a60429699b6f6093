"""The server's own failures (as ``farm/failures.py`` holds the farm's): what only the relay's server
can say, built from ``errors``' codes and texts."""

from __future__ import annotations

from urllib.parse import urlsplit

from ..errors import BROWSER_NOT_CONNECTED_TEXT, ErrorCode, ToolError


def never_paired(page_url: str | None) -> ToolError:
    """``browser_not_connected`` before any page paired since the server started: answered at once, with
    the command that prints the page's link (never the link: its token is not the caller's)."""
    port = urlsplit(page_url).port if page_url else None
    command = "phone-agent url" + (f" --port {port}" if port else "")
    return ToolError(
        ErrorCode.BROWSER_NOT_CONNECTED,
        f"{BROWSER_NOT_CONNECTED_TEXT} No phone-agent page has connected since the server started: "
        f"run `{command}` and open the link it prints in Chrome.",
        remedy=f"Run `{command}` on the server's machine and open the link it prints in Chrome (its token "
        "pairs that browser); once the MCP Relay badge is green, call the tool again.",
        retryable=True,
        details={"command": command, "neverPaired": True},
    )
