"""Running a flow: ``FlowRunner`` with every command of the grammar (``ACTIONS``, from ``actions`` and
``device_actions``), the way the flow tools and the tests make one. The run itself — hooks, steps, waits,
conditions, ``${…}`` — is ``flow_run``; the runner acts through a ``FlowPhone`` (the catalog's device
tools, the UI tree, a shell line) and runs JavaScript through a ``scripts.ScriptSession``. Pure.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping

from .actions import ACTIONS
from .flow_run import Action, FlowPhone, FlowRun, FlowRunnerBase, SkipStep, monotonic_ms, selector_of

__all__ = ["ACTIONS", "Action", "FlowPhone", "FlowRun", "FlowRunner", "SkipStep", "selector_of"]


class FlowRunner(FlowRunnerBase):
    """Runs flows on one phone with the grammar's every command (or the ``actions`` given)."""

    def __init__(
        self,
        phone: FlowPhone,
        progress: Callable[[str], None] | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        monotonic_ms: Callable[[], float] = monotonic_ms,
        screen_size: Callable[[], Awaitable[tuple[int, int]]] | None = None,
        actions: Mapping[str, Action] = ACTIONS,
    ) -> None:
        super().__init__(phone, actions, progress, sleep, monotonic_ms, screen_size)
