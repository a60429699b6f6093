"""Where saved flows are kept: the ``FlowLibrary`` interface and ``MemoryFlowLibrary``.

The page keeps its flows in IndexedDB (``browser/flow_store.py``), so they are the same from MCP, WebMCP
and the page itself; CPython (the tests, a dispatcher with no page) keeps them in memory. A flow is kept
by name with its YAML and when it was saved. Pure.
"""

from __future__ import annotations

import re
import time
from typing import Any, Protocol

NAME_PATTERN = re.compile(r"[^\x00-\x1f/\\]{1,100}")


class FlowLibrary(Protocol):
    """Saved flows by name."""

    async def save(self, name: str, yaml: str) -> dict[str, Any]:
        """Keep (or replace) a flow; its summary ``{name, savedAt, bytes}``."""
        ...

    async def get(self, name: str) -> str | None: ...

    async def names(self) -> list[dict[str, Any]]:
        """Every saved flow's summary, by name."""
        ...

    async def delete(self, name: str) -> bool: ...


class MemoryFlowLibrary:
    """Flows kept in this process only."""

    def __init__(self) -> None:
        self._flows: dict[str, tuple[str, int]] = {}

    async def save(self, name: str, yaml: str) -> dict[str, Any]:
        saved_at = int(time.time() * 1000)
        self._flows[name] = (yaml, saved_at)
        return {"name": name, "savedAt": saved_at, "bytes": len(yaml.encode())}

    async def get(self, name: str) -> str | None:
        kept = self._flows.get(name)
        return kept[0] if kept else None

    async def names(self) -> list[dict[str, Any]]:
        return [
            {"name": name, "savedAt": saved_at, "bytes": len(yaml.encode())}
            for name, (yaml, saved_at) in sorted(self._flows.items())
        ]

    async def delete(self, name: str) -> bool:
        return self._flows.pop(name, None) is not None
