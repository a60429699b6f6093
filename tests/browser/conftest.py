"""The browser tests' rig, as a module's ``RIG`` says (``rigs.PhoneRigSpec()`` when it says nothing): the
simulated phone, the page connected to it, and whoever calls the page (an MCP session relayed to it;
or the scripted model the page's agent asks). Modules that ask for the same rig share one for the
session — one page boot, not one per module — and ``fresh`` readies it for each test (the page up
again after a crash, the phone as new). The session's one Chromium (``browser``) and the served page
(``served``) are tests/conftest.py's."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.browser.rigs import AgentRig, PhoneRig, PhoneRigSpec


class RigPool:
    """The rigs started in this session, one per spec, all stopped at its end."""

    def __init__(
        self, browser: Any, request: pytest.FixtureRequest, stack: contextlib.AsyncExitStack
    ) -> None:
        self.browser, self.request, self.stack = browser, request, stack
        self.rigs: dict[str, PhoneRig | AgentRig] = {}

    async def get(self, spec: Any, module: str) -> PhoneRig | AgentRig:
        key = f"{module}: {spec!r}" if getattr(spec, "alone", False) else repr(spec)
        if key not in self.rigs:
            self.rigs[key] = await self.stack.enter_async_context(spec.start(self.browser, self.request))
        return self.rigs[key]


@pytest.fixture(scope="session")
async def rig_pool(browser: Any, request: pytest.FixtureRequest) -> AsyncIterator[RigPool]:
    async with contextlib.AsyncExitStack() as stack:
        yield RigPool(browser, request, stack)


@pytest.fixture(scope="module")
async def rig(request: pytest.FixtureRequest, rig_pool: RigPool) -> AsyncIterator[PhoneRig | AgentRig]:
    """The module's rig (shared with every module that asks for the same one); what the module's tests
    made its page say wrong fails the module's last test."""
    started = await rig_pool.get(getattr(request.module, "RIG", PhoneRigSpec()), request.module.__name__)
    yield started
    watch = started.kept.watch
    if watch is not None and not watch.gone:
        watch.assert_clean()


@pytest.fixture
async def fresh(rig: PhoneRig | AgentRig) -> PhoneRig | AgentRig:
    """The module's rig ready for a test: its page up (booted again if the last one crashed), its phone
    as new (and, with the model, a clean script and an idle agent)."""
    return await rig.fresh()
