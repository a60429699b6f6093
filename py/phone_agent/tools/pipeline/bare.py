"""The pipeline a nested call takes when no page's pipeline runs its parent (a handler or the agent
called directly, as the CPython tests and benches do): checked, its failure kept, the screen marked
as moved. The page's calls never take it."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from ... import errors
from ..spec import ToolSpec
from .chain import CallPipeline
from .failures import Failures
from .screen_moved import ScreenMoved
from .validation import Validation


def bare_pipeline(tools: Mapping[str, ToolSpec]) -> CallPipeline:
    """A pipeline for the tools of ``tools`` (by name) only."""
    return CallPipeline([Failures(), Validation(_lookup(tools)), ScreenMoved()])


def _lookup(tools: Mapping[str, ToolSpec]) -> Callable[[object], ToolSpec]:
    def lookup(name: object) -> ToolSpec:
        spec = tools.get(name) if isinstance(name, str) else None
        if spec is None:
            raise errors.unknown_tool(name, "", ", ".join(tools))
        return spec

    return lookup
