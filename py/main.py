"""The page's entry point (run by PyScript): start phone-agent, or say plainly why it could not."""

import traceback

import js

from phone_agent.browser.app import start

try:
    page = await start()  # noqa: F704 — PyScript runs this file with top-level await
except Exception as exc:
    traceback.print_exc()
    js.document.documentElement.dataset.state = "failed"
    js.document.getElementById(
        "boot-message"
    ).textContent = f"phone-agent could not start: {type(exc).__name__}: {exc}"
    raise
