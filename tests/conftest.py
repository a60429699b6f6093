"""Shared fixtures: the phone-agent server as a real subprocess and one Chromium for all browser tests.

Browser tests drive Debian's Chromium (/usr/bin/chromium) through Playwright with WebMCP switched on.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support import CHROMIUM, CHROMIUM_ARGS, ROOT, ServedPhoneAgent, require


@pytest.fixture(scope="session")
def served() -> Iterator[ServedPhoneAgent]:
    if not (ROOT / "static" / "vendor" / "pyodide" / "pyodide.asm.wasm").exists():
        pytest.fail("the browser runtime is not vendored: run scripts/setup")
    server = ServedPhoneAgent()
    yield server
    server.stop()


@pytest.fixture(scope="session")
async def browser():
    require(CHROMIUM, "Debian's chromium")
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield browser
        await browser.close()
