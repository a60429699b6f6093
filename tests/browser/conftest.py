"""The browser tests' rig: one per module, as the module's ``RIG`` says (``rigs.PhoneRigSpec()`` when it
says nothing): the simulated phone, the page booted once for the module and connected to it, and
whoever calls the page (an MCP session relayed to it; or the scripted model the page's agent asks).
``fresh`` readies it for each test. The session's one Chromium (``browser``) and the served page
(``served``) are tests/conftest.py's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.browser.rigs import AgentRig, PhoneRig, PhoneRigSpec


@pytest.fixture(scope="module")
async def rig(request: pytest.FixtureRequest, browser: Any) -> AsyncIterator[PhoneRig | AgentRig]:
    """The module's rig, started once for all its tests."""
    spec = getattr(request.module, "RIG", PhoneRigSpec())
    async with spec.start(browser, request) as started:
        yield started


@pytest.fixture
async def fresh(rig: PhoneRig | AgentRig) -> PhoneRig | AgentRig:
    """The module's rig ready for a test: its page up (booted again if the last one crashed), its phone
    as new (and, with the model, a clean script and an idle agent)."""
    return await rig.fresh()
